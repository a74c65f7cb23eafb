// The one parse of each request, in the shells (src/core/protocol/request-target.ts has the rules). The
// Worker's entry turns every request into its target and re-spells the URL canonically before anything
// else sees it (enterRequest), so hono, the access check, the router, the table and subscription APIs and
// the nodes all see one spelling; handlers take the target from targetOf(), never from the URL's path (a
// lint rule, eslint.config.js). The Worker tells the node what it authorized in AUTHORIZED_HEADER, and the
// node refuses anything else (authorizedAtNode): a forwarded request is checked twice, on the same value.
import { coveredByAuthorized, type AccessNeed } from "../core/auth/access.ts";
import { domainError } from "../core/errors.ts";
import { formatTarget, parseRequestTarget, type RequestTarget } from "../core/protocol/request-target.ts";
import type { Parsed } from "../core/protocol/parsed.ts";
import { fail, ok } from "../core/protocol/parsed.ts";

/** What the Worker authorized for this request (JSON AccessNeed[]); removed from every client request. */
export const AUTHORIZED_HEADER = "x-mink-authorized";
/**
 * The verified token's id (`jti`), by which a node counts each token's live readers against
 * MAX_LIVE_READERS_PER_TOKEN (src/node/state/live-slots.ts); removed from every client request.
 */
export const FORWARDED_TOKEN_ID = "x-mink-token-id";

/** The request re-spelled canonically, without any internal header a client may have sent; 400 for RT1/RT2. */
export function enterRequest(request: Request): Parsed<Request> {
  const url = new URL(request.url);
  const target = parseRequestTarget(url.pathname);
  if (!target.ok) return target;
  const canonical = new Request(`${url.origin}${formatTarget(target.value)}${url.search}`, request);
  // A client never speaks for the Worker: the headers the Worker tells a node with are its own.
  canonical.headers.delete(AUTHORIZED_HEADER);
  canonical.headers.delete(FORWARDED_TOKEN_ID);
  targets.set(canonical, target.value);
  return ok(canonical);
}

/**
 * Each request's target, parsed once: the access check, the router, hono's node middleware and the table
 * routes all ask for it (a request's URL never changes, so the entry is good for its life).
 */
const targets = new WeakMap<Request, RequestTarget>();

/** The target of a request that came through enterRequest (its URL is canonical, so this is the same parse). */
export function targetOf(request: Request): RequestTarget {
  let target = targets.get(request);
  if (target === undefined) {
    target = targetOfUrl(new URL(request.url));
    targets.set(request, target);
  }
  return target;
}

/** The target of a canonical URL (a request's, or a Location this deployment wrote). */
export function targetOfUrl(url: URL): RequestTarget {
  const parsed = parseRequestTarget(url.pathname);
  return parsed.ok ? parsed.value : { kind: "unknown", segments: [] };
}

/** The canonical path of a target without its node address: what a redirect to another node keeps. */
export function pathBelowNode(target: RequestTarget): string {
  return "node" in target ? formatTarget({ ...target, node: null }) : formatTarget(target);
}

/**
 * Marks a request with what the Worker authorized (the node checks its own reading against it) and, in
 * token mode, with the id of the token that was verified for it.
 */
export function markAuthorized(request: Request, needs: readonly AccessNeed[], tokenId: string | null = null): void {
  request.headers.set(AUTHORIZED_HEADER, JSON.stringify(needs));
  if (tokenId !== null) request.headers.set(FORWARDED_TOKEN_ID, tokenId);
}

/**
 * At the node: the request's target, refused when its URL is not canonical (only the Worker's entry
 * spells URLs, and it spells them canonically) or when `needsOf(target)` is not what the Worker authorized.
 */
export function authorizedAtNode(request: Request, needsOf: (target: RequestTarget) => readonly AccessNeed[]): Parsed<RequestTarget> {
  const pathname = new URL(request.url).pathname;
  const target = parseRequestTarget(pathname);
  if (!target.ok) return target;
  if (formatTarget(target.value) !== pathname) return fail("invalid", "the request path is not in canonical form", { reason: "ambiguous_path" });
  const authorized = parseAuthorized(request.headers.get(AUTHORIZED_HEADER));
  if (authorized === null || !coveredByAuthorized(authorized, needsOf(target.value))) {
    return { ok: false, error: domainError("forbidden", "the request was not authorized for what it asks of this node") };
  }
  return ok(target.value);
}

function parseAuthorized(value: string | null): AccessNeed[] | null {
  if (value === null) return null;
  try {
    const needs = JSON.parse(value) as unknown;
    return Array.isArray(needs) ? (needs as AccessNeed[]) : null;
  } catch {
    return null;
  }
}
