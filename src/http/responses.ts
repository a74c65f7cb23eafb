// The HTTP answers every protocol surface writes the same way: a node's Reply as a Response, errors
// through the one error table, 307s to a node's advertised address, and request bodies read to a bound
// (and drained before a redirect or a refusal, so a client still sending sees the answer, not a reset).
import type { DomainError } from "../core/errors.ts";
import { domainError } from "../core/errors.ts";
import type { Reply } from "../node/state/replies.ts";
import { declaredLength, discardAtMost, readAtMost } from "../subscriptions/bounded-read.ts";
import { errorResponseParts } from "./error-table.ts";
import { withSecurityHeaders } from "./security-headers.ts";
import { pathBelowNode, targetOfUrl } from "./request-target.ts";
import type { Result } from "../core/result.ts";


/**
 * Before a 307 or a refusal the request body is read to its end and dropped chunk by chunk, never held:
 * answering while the client is still sending makes it see a reset connection instead of the answer. A
 * body over the limit gets its 413 here instead, without the hop. Null: go on with the answer.
 */
export async function readBeforeRedirect(request: Request, maxBytes: number): Promise<Response | null> {
  if (request.body === null) return null;
  const read = await discardAtMost(request.body, maxBytes, {
    declaredBytes: declaredLength(request.headers),
    drainBytes: maxBytes * DRAIN_LIMIT_FACTOR,
  });
  return read.ok ? null : errorResponse(tooLarge(maxBytes));
}

/**
 * A refused body is still read to its end (and dropped), up to this multiple of the limit: a client that
 * is still sending when the answer comes sees a reset connection instead of the 413 (undici 7 does).
 * Beyond it the body is cancelled.
 */
const DRAIN_LIMIT_FACTOR = 4;

/** Reads and drops a body that will not be used (up to DRAIN_LIMIT_FACTOR times `maxBytes`, then cancels it), holding one chunk at a time. */
export async function dropBody(request: Request, maxBytes: number): Promise<void> {
  await readAtMost(request.body, 0, { drainBytes: maxBytes * DRAIN_LIMIT_FACTOR });
}

/** How a body's bytes are held as they are read (node-http/body-pool.ts): each chunk is taken, or refused with the answer. */
export interface BodyHold {
  take(bytes: number): DomainError | null;
}

/**
 * The body, or `too_large` (up to DRAIN_LIMIT_FACTOR times the limit read and dropped) when the declared or
 * actual length is over the limit, or the error `hold` refused a chunk with.
 */
export async function readBody(request: Request, maxBytes: number, hold?: BodyHold): Promise<Result<Uint8Array>> {
  let refused: DomainError | null = null;
  const take = hold === undefined ? undefined : (bytes: number): boolean => (refused = hold.take(bytes)) === null;
  const read = await readAtMost(request.body, maxBytes, {
    declaredBytes: declaredLength(request.headers),
    drainBytes: maxBytes * DRAIN_LIMIT_FACTOR,
    ...(take === undefined ? {} : { take }),
  });
  if (read.ok) return { ok: true, value: read.bytes };
  return { ok: false, error: refused ?? tooLarge(maxBytes) };
}

function tooLarge(maxBytes: number): DomainError {
  return domainError("too_large", "the request body is over the size limit", { maxBytes });
}

export function toResponse(result: Reply, head: boolean, url: URL): Response {
  if (result.kind === "redirect") return redirectResponse(result.node.addr, url);
  if (result.kind === "error") {
    const response = errorResponse(result.error);
    return head ? new Response(null, { status: response.status, headers: response.headers }) : response;
  }
  const headers = withSecurityHeaders(new Headers(result.headers));
  if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
  const body = head || result.status === 204 || result.status === 304 ? null : result.body;
  return new Response(body, { status: result.status, headers });
}

/**
 * A 307 to a node's advertised address, `<PUBLIC_ORIGIN>/n/<node-id>`, with the same stream path and query:
 * 307 keeps the method, the body and the headers.
 */
export function redirectResponse(nodeAddr: string, url: URL): Response {
  const path = pathBelowNode(targetOfUrl(url));
  const headers = withSecurityHeaders(new Headers({ location: `${nodeAddr}${path}${url.search}`, "cache-control": "no-store" }));
  return new Response(null, { status: 307, headers });
}

export function errorResponse(error: DomainError): Response {
  const parts = errorResponseParts(error);
  return new Response(parts.body, { status: parts.status, headers: withSecurityHeaders(new Headers(parts.headers)) });
}
