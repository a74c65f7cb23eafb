// The Durable Streams protocol over HTTP (hono), as served by the node that owns the streams: parses
// requests (every stateless check: name, method, headers, parameters, body size), calls the node's
// paths, and writes their replies with the headers every response carries. A stream the node does not own
// is answered with a 307 to its owner, decided from the node's own view (src/node/paths/routing.ts). Mounted at `/v1/stream/*`
// (and `/n/<node-id>/v1/stream/*`, the node's advertised address). Order of evaluation:
// docs/protocol-rules.md section 0.
import { workerLog } from "../log/logger.ts";
import { Hono, type Context } from "hono";
import { domainError } from "../core/errors.ts";
import { parseAppendRequest } from "../core/protocol/append.ts";
import { checkHeaderLengths } from "../core/protocol/bounds.ts";
import { isJsonContentType } from "../core/protocol/content-type.ts";
import { HEADER, QUERY } from "../core/protocol/headers.ts";
import { parseOffsetParam } from "../core/protocol/offsets.ts";
import { parseCursorParam, parseReadMode } from "../core/protocol/read.ts";
import { parseCreateRequest } from "../core/protocol/stream-config.ts";
import { checkStreamName, parseForkSourcePath } from "../core/protocol/stream-name.ts";
import { formatTarget } from "../core/protocol/request-target.ts";
import { requestNeeds } from "../core/auth/request-needs.ts";
import { appendToStream } from "../node/paths/append.ts";
import { createStream } from "../node/paths/create.ts";
import { deleteStream } from "../node/paths/delete.ts";
import type { TableContext } from "../node/tables/buckets.ts";
import { type Reply } from "../node/state/replies.ts";
import { lostTouch, routeAtNode } from "../node/paths/routing.ts";
import { headStream, readStream } from "../node/paths/read.ts";
import { sseStream } from "../node/paths/sse.ts";
import { holdingBody } from "./body-pool.ts";
import { errorResponse, readBeforeRedirect, readBody, toResponse, type BodyHold } from "../http/responses.ts";
import { tableNodeRequest } from "./table-routes.ts";
import { authorizedAtNode, FORWARDED_TOKEN_ID } from "../http/request-target.ts";
import { preflightResponse } from "../http/security-headers.ts";

const ALLOWED_METHODS = "GET, HEAD, PUT, POST, DELETE, OPTIONS";
/** Other methods get their 405 wherever they land. */
const ROUTED_METHODS = new Set(["GET", "HEAD", "PUT", "POST", "DELETE"]);
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The protocol app of one node; `node()` is the node's context once it has started. */
export function streamRoutes(node: () => TableContext): Hono {
  const app = new Hono();
  app.all("*", async (c) => {
    let ctx: TableContext | null = null;
    try {
      ctx = node();
      return await handle(ctx, c);
    } catch (error) {
      (ctx?.log ?? workerLog).log("node.error", { during: "stream_request", method: c.req.method }, error);
      return errorResponse(domainError("unavailable", "internal error; retry"));
    }
  });
  return app;
}

async function handle(ctx: TableContext, c: Context): Promise<Response> {
  const request = c.req.raw;
  if (request.method === "OPTIONS") return preflightResponse();
  const url = new URL(request.url);
  const header = (key: string): string | null => request.headers.get(key);
  // What the Worker parsed and authorized, read again here and compared (src/http/request-target.ts).
  const target = authorizedAtNode(request, (read) => requestNeeds(request.method, read, forkSourceOf(header(HEADER.streamForkedFrom))));
  if (!target.ok) return errorResponse(target.error);
  if (target.value.kind === "bucket") return tableNodeRequest(ctx, request, url, target.value);
  if (target.value.kind !== "stream") return errorResponse(domainError("not_found", "no such route"));
  const name = checkStreamName(target.value.name);
  if (!name.ok) return errorResponse(name.error);
  // Streams this node does not own go back to the client as a 307 to their owner (paths/routing.ts). A
  // create of a name not held here claims it first and routes only if the claim did not open it here
  // (paths/create.ts): a new stream costs no lookup. A fork is routed first (it is created where its source is).
  const claimsFirst = request.method === "PUT" && header(HEADER.streamForkedFrom) === null && ctx.registry.byName(name.value) === undefined && lostTouch(ctx) === null;
  const routed = ROUTED_METHODS.has(request.method) && !claimsFirst ? await routeAtNode(ctx, name.value) : null;
  if (routed !== null) {
    const refused = routed.kind === "redirect" ? await readBeforeRedirect(request, ctx.settings.maxBodyBytes) : null;
    if (refused !== null) return refused;
    if (routed.kind !== "redirect") await request.body?.cancel().catch(() => undefined);
    return toResponse(routed, request.method === "HEAD", url);
  }
  const answer = (result: Reply, head = false): Response => toResponse(result, head, url);

  // Every protocol header a write reads is at most MAX_HEADER_VALUE_BYTES long (docs/limits.md): 400, naming it.
  if (request.method === "PUT" || request.method === "POST") {
    const overlong = checkHeaderLengths(protocolHeaders(request.headers), ctx.settings.maxHeaderValueBytes);
    if (overlong !== null) {
      await readBody(request, ctx.settings.maxBodyBytes); // read and dropped, so the client sees the 400
      return errorResponse(overlong);
    }
  }

  switch (request.method) {
    case "PUT":
    case "POST": {
      const location = `${url.origin}${formatTarget(target.value)}`;
      return holdingBody(ctx, request, (hold) => write(ctx, request, name.value, { url, location, routed: !claimsFirst }, hold));
    }
    case "GET": {
      const offsets = url.searchParams.getAll(QUERY.offset);
      const start = parseOffsetParam(offsets);
      if (!start.ok) return errorResponse(start.error);
      const mode = parseReadMode(url.searchParams.getAll(QUERY.live), offsets.length > 0);
      if (!mode.ok) return errorResponse(mode.error);
      const input = {
        name: name.value,
        start: start.value,
        mode: mode.value,
        cursor: parseCursorParam(url.searchParams.getAll(QUERY.cursor)),
        ifNoneMatch: header(HEADER.ifNoneMatch),
        signal: request.signal,
        tokenId: request.headers.get(FORWARDED_TOKEN_ID),
      };
      return answer(mode.value === "sse" ? await sseStream(ctx, input) : await readStream(ctx, input));
    }
    case "HEAD":
      return answer(await headStream(ctx, name.value), true);
    case "DELETE":
      return answer(await deleteStream(ctx, name.value));
    default: {
      const response = errorResponse(domainError("invalid", `method ${request.method} is not allowed`));
      const headers = new Headers(response.headers);
      headers.set("allow", ALLOWED_METHODS);
      return new Response(response.body, { status: 405, headers });
    }
  }
}

/** The source a fork names, as the Worker's access check read it (null when none or not a stream path). */
function forkSourceOf(value: string | null): string | null {
  if (value === null) return null;
  const source = parseForkSourcePath(value);
  return source.ok ? source.value : null;
}

/** The request headers a create or an append reads, by their protocol names. */
const WRITE_HEADERS = [
  ["Content-Type", HEADER.contentType],
  ["Stream-Closed", HEADER.streamClosed],
  ["Stream-Seq", HEADER.streamSeq],
  ["Stream-TTL", HEADER.streamTtl],
  ["Stream-Expires-At", HEADER.streamExpiresAt],
  ["Stream-Forked-From", HEADER.streamForkedFrom],
  ["Stream-Fork-Offset", HEADER.streamForkOffset],
  ["Stream-Fork-Sub-Offset", HEADER.streamForkSubOffset],
  ["Producer-Id", HEADER.producerId],
  ["Producer-Epoch", HEADER.producerEpoch],
  ["Producer-Seq", HEADER.producerSeq],
] as const;

function protocolHeaders(headers: Headers): Record<string, string | null> {
  return Object.fromEntries(WRITE_HEADERS.map(([name, key]) => [name, headers.get(key)]));
}

/**
 * The body as UTF-8 text when it may be JSON (the request says JSON, or says nothing and the stream's
 * type decides); null when it is not valid UTF-8 (JSN-9) or cannot matter.
 */
function textOf(body: Uint8Array, contentType: string | null): string | null {
  if (body.byteLength === 0) return "";
  if (contentType !== null && contentType.trim() !== "" && !isJsonContentType(contentType)) return null;
  try {
    return fatalUtf8.decode(body);
  } catch {
    return null;
  }
}

/** A create (PUT) or an append (POST), its body held in the node's pool (body-pool.ts) until answered. */
/** A create or an append; `location` is the created stream's URL (the request's, canonical); `routed`: see CreateInput. */
async function write(ctx: TableContext, request: Request, name: string, at: { url: URL; location: string; routed: boolean }, hold: BodyHold): Promise<Response> {
  const { url, location, routed } = at;
  const header = (key: string): string | null => request.headers.get(key);
  const answer = (result: Reply): Response => toResponse(result, false, url);
  switch (request.method) {
    case "PUT": {
      const parsed = parseCreateRequest({
        contentType: header(HEADER.contentType),
        ttl: header(HEADER.streamTtl),
        expiresAt: header(HEADER.streamExpiresAt),
        closed: header(HEADER.streamClosed),
        forkedFrom: header(HEADER.streamForkedFrom),
        forkOffset: header(HEADER.streamForkOffset),
        forkSubOffset: header(HEADER.streamForkSubOffset),
      });
      if (!parsed.ok) return errorResponse(parsed.error);
      const read = await readBody(request, ctx.settings.maxBodyBytes, hold);
      if (!read.ok) return errorResponse(read.error);
      const body = read.value;
      return answer(
        await createStream(ctx, { name, request: parsed.value, body, bodyText: textOf(body, header(HEADER.contentType)), location, routed }),
      );
    }
    case "POST": {
      const read = await readBody(request, ctx.settings.maxBodyBytes, hold);
      if (!read.ok) return errorResponse(read.error);
      const body = read.value;
      const parsed = parseAppendRequest(
        {
          contentType: header(HEADER.contentType),
          closed: header(HEADER.streamClosed),
          streamSeq: header(HEADER.streamSeq),
          producerId: header(HEADER.producerId),
          producerEpoch: header(HEADER.producerEpoch),
          producerSeq: header(HEADER.producerSeq),
        },
        body.byteLength,
        ctx.settings.maxBodyBytes,
      );
      if (!parsed.ok) return errorResponse(parsed.error);
      return answer(
        await appendToStream(ctx, { name, request: parsed.value, body, bodyText: textOf(body, header(HEADER.contentType)) }),
      );
    }
    default:
      return errorResponse(domainError("invalid", "a write is a PUT or a POST"));
  }
}
