// Who is asking, told to the node: the Worker verifies a request's token (src/http/access.ts) and the node
// counts each token's live readers against MAX_LIVE_READERS_PER_TOKEN (src/node/live-slots.ts), so the
// token's id (`jti`) travels to the node in one internal header. A client's own copy of that header is
// always dropped first: nodes are reached only through the Worker, so the header a node sees was set here.
//
// `stripForwardedIdentity` is mounted before the access check (src/index.ts), `forwardedIdentity` after it:
// that one sets the id for live reads, the only requests a node counts per token, verifying the bearer token
// itself since the access check does not hand its claims on. Once access.ts calls
// `forwardIdentity(c, decision.claims)` after a successful decision, the header is there already and the
// second verification is skipped.
import type { MiddlewareHandler } from "hono";
import type { AccessClaims } from "../core/auth/access.ts";
import { QUERY } from "../core/protocol/headers.ts";
import { parseBearer } from "../core/subscriptions/index.ts";
import { verifyToken } from "../auth/token-codec.ts";

/** What this module reads of the Worker's bindings (not `Env`: the node-tier tests type-check without Workers types). */
interface SecretBindings {
  TOKEN_SECRET?: string;
}

/** The internal header with the verified token's id. Never accepted from a client. */
export const FORWARDED_TOKEN_ID = "x-mink-token-id";

/** The request without a client-supplied identity header (the same request when it has none). */
function stripped(request: Request): Request {
  if (!request.headers.has(FORWARDED_TOKEN_ID)) return request;
  const headers = new Headers(request.headers);
  headers.delete(FORWARDED_TOKEN_ID);
  return new Request(request, { headers });
}

/** Marks the request with the verified token's id for the node (call after a successful access decision). */
export function forwardIdentity(c: { req: { raw: Request } }, claims: Pick<AccessClaims, "id">): void {
  const headers = new Headers(c.req.raw.headers);
  headers.set(FORWARDED_TOKEN_ID, claims.id);
  c.req.raw = new Request(c.req.raw, { headers });
}

/** First of all: drops a client's own identity header, so any such header later was set by the Worker. */
export const stripForwardedIdentity: MiddlewareHandler = async (c, next) => {
  c.req.raw = stripped(c.req.raw);
  return next();
};

/**
 * After the access check: on a live read with a valid token, sets the token's id, unless access.ts already
 * did (`forwardIdentity` after its decision; the header can only be ours after `stripForwardedIdentity`).
 */
export const forwardedIdentity: MiddlewareHandler<{ Bindings: SecretBindings }> = async (c, next) => {
  const liveRead = c.req.method === "GET" && new URL(c.req.url).searchParams.has(QUERY.live);
  if (liveRead && !c.req.raw.headers.has(FORWARDED_TOKEN_ID)) {
    const token = await verifyToken(parseBearer(c.req.header("authorization") ?? null), c.env.TOKEN_SECRET ?? "");
    if (token.kind === "verified") forwardIdentity(c, token.claims);
  }
  return next();
};
