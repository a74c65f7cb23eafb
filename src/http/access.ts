// Access control at every entry of the protocol (docs/access.md): the router's `/v1/stream/...` and each
// node's `/n/<node-id>/v1/stream/...` pass through these middlewares before anything else is done for the
// request (no lookup, no body read but a subscription's, no node woken). In AUTH_MODE=open they pass
// everything. The decision is the pure core's (tables AC, AN, AS); here the token is verified, the
// revocations fetched (per isolate, src/auth/revocation-cache.ts) and the answer written. Reads answered
// to a token are marked `Cache-Control: private`: a shared cache must not hand them to anyone else.
import { workerLog } from "../log/logger.ts";
import type { Context, MiddlewareHandler } from "hono";
import { ADMIN_TOKEN_REASON, decideAccess, type AccessNeed, type PresentedToken } from "../core/auth/access.ts";
import { requestNeeds } from "../core/auth/request-needs.ts";
import { scopeOfBody, subscriptionNeeds, subscriptionRoute, type SubscriptionScope } from "../core/auth/subscription-access.ts";
import { domainError } from "../core/errors.ts";
import { HEADER } from "../core/protocol/headers.ts";
import type { RequestTarget } from "../core/protocol/request-target.ts";
import { parseForkSourcePath } from "../core/protocol/stream-name.ts";
import { parseBearer } from "../core/subscriptions/index.ts";
import { DEFAULT_REVOCATION_CACHE_MS, RevocationCache } from "../auth/revocation-cache.ts";
import { verifyToken } from "../auth/token-codec.ts";
import { sameSecret } from "../auth/same-secret.ts";
import { type Env, metaLogClient } from "../env.ts";
import { edgeLimits } from "../core/edge-limits.ts";
import { subscriptionError, subscriptionNotFound } from "../core/subscriptions/index.ts";
import { declaredLength, readAtMost } from "../subscriptions/bounded-read.ts";
import { subscriptionErrorResponse } from "../subscriptions/error-wire.ts";
import { withSecurityHeaders } from "./security-headers.ts";
import { errorResponse, readBeforeRedirect } from "./responses.ts";
import { markAuthorized, targetOf } from "./request-target.ts";

type Ctx = Context<{ Bindings: Env }>;

/** MAX_BODY_BYTES' default: a refused request's body is read and dropped up to it (see readBeforeRedirect). */
const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

let revocationCache: RevocationCache | null = null;

function revocationsOf(env: Env): RevocationCache {
  if (revocationCache === null) {
    const period = Number(env.REVOCATION_CACHE_MS ?? "");
    revocationCache = new RevocationCache(Number.isSafeInteger(period) && period > 0 ? period : DEFAULT_REVOCATION_CACHE_MS, () => Date.now());
  }
  return revocationCache;
}

/** Whether this deployment checks tokens (the deployment check has already refused anything but these). */
function tokenMode(env: Env): boolean {
  return (env.AUTH_MODE ?? "token").trim() !== "open";
}

interface Presented {
  readonly token: PresentedToken;
  readonly revoked: ReadonlySet<string>;
}

/** The request's token, verified, with the revocations when it verified (a MetaLog call at most once a period). */
async function presented(c: Ctx): Promise<Presented | Response> {
  const bearer = parseBearer(c.req.header("authorization") ?? null);
  const token = await verifyToken(bearer, c.env.TOKEN_SECRET ?? "");
  if (token.kind === "invalid" && bearer !== null && (await isAdminToken(bearer, c.env))) {
    return { token: { kind: "invalid", reason: ADMIN_TOKEN_REASON }, revoked: new Set() }; // AC2a
  }
  if (token.kind !== "verified") return { token, revoked: new Set() };
  try {
    return { token, revoked: await revocationsOf(c.env).revoked(() => metaLogClient(c.env.META_LOG)) };
  } catch (error) {
    workerLog.log("worker.error", { during: "revocations" }, error);
    return errorResponse(domainError("unavailable", "token revocations cannot be checked right now; retry"));
  }
}

/** Whether a bearer that did not verify is this deployment's admin token (constant time; never with no ADMIN_TOKEN). */
async function isAdminToken(bearer: string, env: Env): Promise<boolean> {
  const admin = env.ADMIN_TOKEN ?? "";
  return admin !== "" && (await sameSecret(bearer, admin));
}

/** Table AC; null when allowed, else the answer (the request body read and dropped first). */
async function refusal(c: Ctx, who: Presented, needs: readonly AccessNeed[]): Promise<Response | null> {
  const decision = decideAccess({ token: who.token, needs, nowMs: Date.now(), isRevoked: (id) => who.revoked.has(id) });
  if (decision.ok) return null;
  // Reading the body to its end (bounded) lets a client still sending see this answer, not a reset.
  const maxBodyBytes = Number(c.env.MAX_BODY_BYTES ?? "");
  await readBeforeRedirect(c.req.raw, Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0 ? maxBodyBytes : DEFAULT_MAX_BODY_BYTES);
  return errorResponse(decision.error);
}

/**
 * A middleware that checks the token against what `needsOf` says the request needs (null: no check here),
 * marks the request with what was authorized (the node checks its own reading against it), then marks a
 * public answer private: the one skeleton of the stream and table checks. The needs come from the request's
 * target (src/http/request-target.ts), never from its URL.
 */
function checked(needsOf: (c: Ctx, method: string, target: RequestTarget) => AccessNeed[] | null): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const method = c.req.method;
    const needs = method === "OPTIONS" ? null : needsOf(c, method, targetOf(c.req.raw));
    if (needs === null) return next();
    if (!tokenMode(c.env)) {
      markAuthorized(c.req.raw, needs);
      return next();
    }
    const who = await presented(c);
    if (who instanceof Response) return who;
    const refused = await refusal(c, who, needs);
    if (refused !== null) return refused;
    markAuthorized(c.req.raw, needs, who.token.kind === "verified" ? who.token.claims.id : null);
    await next();
    markPrivate(c);
  };
}

/** Stream requests: table AN's needs, then table AC. The subscription API has its own check (subscriptionAccess). */
export const streamAccess = checked((c, method, target) => {
  if (target.kind !== "stream") return null;
  const forkHeader = c.req.header(HEADER.streamForkedFrom) ?? null;
  const fork = forkHeader === null ? null : parseForkSourcePath(forkHeader);
  return requestNeeds(method, target, fork?.ok === true ? fork.value : null);
});

/** Table requests (`/v1/table...`, at the router or a node's address): table AT's needs, then table AC. */
export const tableAccess = checked((_c, method, target) => requestNeeds(method, target, null));

function markPrivate(c: Ctx): void {
  const cacheControl = c.res.headers.get("cache-control");
  if (cacheControl === null || !cacheControl.includes("public")) return;
  c.res = new Response(c.res.body, c.res);
  c.res.headers.set("cache-control", cacheControl.replace("public", "private"));
}

/** The scope of the subscription a request is about (none when it does not exist or cannot be read now). */
async function existingScope(c: Ctx, id: string): Promise<SubscriptionScope | null> {
  const answer = await metaLogClient(c.env.META_LOG).getSubscription(id);
  if (!answer.ok) return null;
  const view = answer.value;
  return { streams: view.streams.map((stream) => stream.path), pattern: view.pattern ?? null, wakeStream: view.wake_stream ?? null };
}

/**
 * The body, read once to MAX_DS_BODY_BYTES and put back for the route (which reads it again, from memory).
 * Null when over the bound: the answer is the route's own 413.
 */
async function bodyOnce(c: Ctx, maxBytes: number): Promise<{ json: unknown } | null> {
  const request = c.req.raw;
  const read = await readAtMost(request.body, maxBytes, { declaredBytes: declaredLength(request.headers), drainBytes: maxBytes * 4 });
  if (!read.ok) return null;
  c.req.raw = new Request(request.url, { method: request.method, headers: request.headers, body: read.bytes.byteLength === 0 ? null : read.bytes });
  try {
    return { json: JSON.parse(new TextDecoder().decode(read.bytes)) as unknown };
  } catch {
    return { json: null };
  }
}

function tooLargeAnswer(maxBytes: number): Response {
  const { status, body } = subscriptionErrorResponse(
    subscriptionError("too_large", `request bodies here are at most ${maxBytes} bytes`, { limit: "MAX_DS_BODY_BYTES", max: maxBytes }),
  );
  return new Response(body, { status, headers: withSecurityHeaders(new Headers({ "content-type": "application/json", "cache-control": "no-store" })) });
}

/** The subscription API: table AS's needs, then table AC. */
export const subscriptionAccess: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const method = c.req.method;
  if (!tokenMode(c.env) || method === "OPTIONS") return next();
  const route = subscriptionRoute(method, targetOf(c.req.raw));
  if (route.kind === "own_token") return next();
  // The token first: nothing is read or looked up for a request that has no valid one, or no `subscribe`.
  const who = await presented(c);
  if (who instanceof Response) return who;
  const early = await refusal(c, who, subscriptionNeeds());
  if (early !== null || route.kind === "other") return early ?? next();
  let requested: SubscriptionScope | null = null;
  if (route.kind === "put" || route.kind === "add_streams") {
    const maxBytes = edgeLimits(c.env).limits.maxDsBodyBytes;
    const body = await bodyOnce(c, maxBytes);
    if (body === null) return tooLargeAnswer(maxBytes);
    requested = scopeOfBody(body.json);
  }
  const refused = await refusal(c, who, subscriptionNeeds(requested));
  if (refused !== null) return refused;
  const existing = await existingScope(c, route.id);
  if (existing === null || allows(who, subscriptionNeeds(existing))) return next();
  // Another tenant's subscription: answered as an unknown id is, so a token learns nothing of it.
  if (route.kind === "put") return errorResponse(domainError("forbidden", "the token does not cover this subscription", { op: "subscribe" }));
  const target = targetOf(c.req.raw);
  return unknownSubscriptionAnswer(route.id, method === "DELETE" && target.kind === "subscription" && target.action === "config");
};

function allows(who: Presented, needs: readonly AccessNeed[]): boolean {
  return decideAccess({ token: who.token, needs, nowMs: Date.now(), isRevoked: (id) => who.revoked.has(id) }).ok;
}

/** What the routes answer for an id that does not exist: deleting it is idempotent (204), anything else 404. */
function unknownSubscriptionAnswer(id: string, deletion: boolean): Response {
  const headers = withSecurityHeaders(new Headers({ "content-type": "application/json", "cache-control": "no-store" }));
  if (deletion) return new Response(null, { status: 204, headers });
  const { status, body } = subscriptionErrorResponse(subscriptionNotFound(id));
  return new Response(body, { status, headers });
}
