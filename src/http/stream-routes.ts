// The Durable Streams protocol over HTTP (hono), as served by the node that owns the streams: parses
// requests (every stateless check: name, method, headers, parameters, body size), calls the node's
// paths, and writes their replies with the headers every response carries. Mounted at `/v1/stream/*`
// (and `/n/<node-id>/v1/stream/*`, the node's advertised address). Order of evaluation:
// docs/protocol-rules.md section 0.
import { Hono, type Context } from "hono";
import { domainError, type DomainError } from "../core/errors.ts";
import { parseAppendRequest } from "../core/protocol/append.ts";
import { isJsonContentType } from "../core/protocol/content-type.ts";
import { HEADER, QUERY, STREAM_PATH_PREFIX } from "../core/protocol/headers.ts";
import { parseOffsetParam } from "../core/protocol/offsets.ts";
import { parseCursorParam, parseReadMode } from "../core/protocol/read.ts";
import { parseCreateRequest } from "../core/protocol/stream-config.ts";
import { parseStreamName } from "../core/protocol/stream-name.ts";
import { appendToStream } from "../node/append-path.ts";
import { createStream } from "../node/create-path.ts";
import { deleteStream } from "../node/delete-path.ts";
import type { NodeContext, Reply } from "../node/node-context.ts";
import { headStream, readStream } from "../node/read-path.ts";
import { sseStream } from "../node/sse-path.ts";
import { errorResponseParts } from "./error-table.ts";
import { preflightResponse, withSecurityHeaders } from "./security-headers.ts";

const NODE_ADDRESS = /^\/n\/[^/]+(?=\/)/;
const ALLOWED_METHODS = "GET, HEAD, PUT, POST, DELETE, OPTIONS";
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The protocol app of one node; `node()` is the node's context once it has started. */
export function streamRoutes(node: () => NodeContext): Hono {
  const app = new Hono();
  app.all("*", async (c) => {
    try {
      return await handle(node(), c);
    } catch (error) {
      console.error("stream request failed", error);
      return errorResponse(domainError("unavailable", "internal error; retry"));
    }
  });
  return app;
}

async function handle(ctx: NodeContext, c: Context): Promise<Response> {
  const request = c.req.raw;
  if (request.method === "OPTIONS") return preflightResponse();
  const url = new URL(request.url);
  const path = url.pathname.replace(NODE_ADDRESS, "");
  if (!path.startsWith(STREAM_PATH_PREFIX)) return errorResponse(domainError("not_found", "no such route"));
  const name = parseStreamName(path.slice(STREAM_PATH_PREFIX.length));
  if (!name.ok) return errorResponse(name.error);
  const header = (key: string): string | null => request.headers.get(key);

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
      const body = await readBody(request, ctx.settings.maxBodyBytes);
      if ("code" in body) return errorResponse(body);
      const location = `${url.origin}${url.pathname}`;
      return toResponse(
        await createStream(ctx, { name: name.value, request: parsed.value, body, bodyText: textOf(body, header(HEADER.contentType)), location }),
      );
    }
    case "POST": {
      const body = await readBody(request, ctx.settings.maxBodyBytes);
      if ("code" in body) return errorResponse(body);
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
      return toResponse(
        await appendToStream(ctx, { name: name.value, request: parsed.value, body, bodyText: textOf(body, header(HEADER.contentType)) }),
      );
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
      };
      return toResponse(mode.value === "sse" ? await sseStream(ctx, input) : await readStream(ctx, input));
    }
    case "HEAD":
      return toResponse(await headStream(ctx, name.value), true);
    case "DELETE":
      return toResponse(await deleteStream(ctx, name.value));
    default: {
      const response = errorResponse(domainError("invalid", `method ${request.method} is not allowed`));
      const headers = new Headers(response.headers);
      headers.set("allow", ALLOWED_METHODS);
      return new Response(response.body, { status: 405, headers });
    }
  }
}

/** The body, or `too_large` without reading further when the declared or actual length is over the limit. */
async function readBody(request: Request, maxBytes: number): Promise<Uint8Array | DomainError> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > maxBytes) {
    // Drain nothing, but release the stream so the runtime does not keep feeding it after the answer.
    await request.body?.cancel().catch(() => undefined);
    return domainError("too_large", "the request body is over the size limit", { maxBytes });
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return domainError("too_large", "the request body is over the size limit", { maxBytes });
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
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

function toResponse(result: Reply, head = false): Response {
  if (result.kind === "error") {
    const response = errorResponse(result.error);
    return head ? new Response(null, { status: response.status, headers: response.headers }) : response;
  }
  const headers = withSecurityHeaders(new Headers(result.headers));
  if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
  const body = head || result.status === 204 || result.status === 304 ? null : result.body;
  return new Response(body, { status: result.status, headers });
}

export function errorResponse(error: DomainError): Response {
  const parts = errorResponseParts(error);
  return new Response(parts.body, { status: parts.status, headers: withSecurityHeaders(new Headers(parts.headers)) });
}
