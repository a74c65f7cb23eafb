// Access control for the stream API (PROTOCOL section 10.1: no unauthorized creation, modification or
// deletion). A request carries a signed bearer token whose claims grant operations on stream-name
// prefixes until an expiry; the shell verifies the signature (src/auth/token-codec.ts) and hands the
// claims here with what the request needs. The decision, table AC:
//
// | #   | the request                                        | answer                                   |
// |-----|----------------------------------------------------|------------------------------------------|
// | AC1 | carries no bearer token                            | 401 unauthorized                         |
// | AC2 | carries a token that does not verify (malformed, wrong algorithm, bad signature, claims out of shape) | 401 unauthorized |
// | AC2a| carries the admin token (ADMIN_TOKEN, compared in constant time by the shell): an AC2 that says so | 401 unauthorized, ADMIN_TOKEN_REASON |
// | AC3 | token not yet valid (nbf) or expired (now >= exp)  | 401 unauthorized                         |
// | AC4 | token id revoked                                   | 401 unauthorized                         |
// | AC5 | needs an operation the token does not grant        | 403 forbidden, with the operation        |
// | AC6 | needs a stream no prefix of the token covers       | 403 forbidden, with the stream           |
// | AC7 | otherwise                                          | allowed                                  |
//
// Rows are checked in order: a client learns nothing about prefixes or operations from a token that is
// not valid. A prefix covers every name that starts with it; "" covers every stream.
import { domainError, type DomainError } from "../errors.ts";
import type { Result } from "../result.ts";

/** @public The operations a token may grant, as a value. */
export const ACCESS_OPS = ["read", "append", "create", "delete", "subscribe"] as const;
export type AccessOp = (typeof ACCESS_OPS)[number];

/** What a verified token grants. */
export interface AccessClaims {
  /** The token id (`jti`): what revocation names. */
  readonly id: string;
  readonly prefixes: readonly string[];
  readonly ops: readonly AccessOp[];
  readonly expiresAtMs: number;
  /** Not valid before (`nbf`), when the token says. */
  readonly notBeforeMs?: number;
}

/** One thing a request does: an operation on a stream name (or on the literal start of a pattern), or
 * on no stream in particular (`null`: the operation alone must be granted). */
export interface AccessNeed {
  readonly op: AccessOp;
  readonly stream: string | null;
}

/**
 * AC2a's reason: the admin token is the first bearer a newcomer has (`mink-dev-admin` locally), and "not a
 * token signed by this deployment" does not tell them it is the wrong kind of token. Same 401 as AC2.
 */
export const ADMIN_TOKEN_REASON =
  "it is the admin token (ADMIN_TOKEN), which works only on /admin/... and /metrics; stream and table requests need an access token from `mink token create` (docs/access.md)";

/** What the shell found in the request: no token, one that did not verify (with why), or its claims. */
export type PresentedToken =
  | { readonly kind: "missing" }
  | { readonly kind: "invalid"; readonly reason: string }
  | { readonly kind: "verified"; readonly claims: AccessClaims };

export interface AccessInput {
  readonly token: PresentedToken;
  readonly needs: readonly AccessNeed[];
  readonly nowMs: number;
  readonly isRevoked: (id: string) => boolean;
}

/** The access decision: the token's claims, or why it does not grant the request (src/core/result.ts). */
export type AccessDecision = Result<AccessClaims>;

const refuse = (error: DomainError): AccessDecision => ({ ok: false, error });

/** Table AC, row by row. */
export function decideAccess(input: AccessInput): AccessDecision {
  const { token, needs, nowMs } = input;
  if (token.kind === "missing") return refuse(domainError("unauthorized", "a bearer token is required (Authorization: Bearer <token>)")); // AC1
  if (token.kind === "invalid") return refuse(domainError("unauthorized", `the bearer token is not valid: ${token.reason}`)); // AC2
  const { claims } = token;
  if (claims.notBeforeMs !== undefined && nowMs < claims.notBeforeMs) return refuse(domainError("unauthorized", "the bearer token is not valid yet")); // AC3
  if (nowMs >= claims.expiresAtMs) return refuse(domainError("unauthorized", "the bearer token has expired")); // AC3
  if (input.isRevoked(claims.id)) return refuse(domainError("unauthorized", "the bearer token was revoked")); // AC4
  for (const need of needs) {
    if (!claims.ops.includes(need.op)) {
      return refuse(domainError("forbidden", `the token does not grant '${need.op}'`, { op: need.op })); // AC5
    }
    if (need.stream !== null && !coversStream(claims.prefixes, need.stream)) {
      return refuse(domainError("forbidden", `the token does not cover stream '${need.stream}'`, { op: need.op, stream: need.stream })); // AC6
    }
  }
  return { ok: true, value: claims }; // AC7
}

/**
 * Whether every need of a request, as the node reads it, is one the Worker authorized (same operation, same
 * name): the node's defence against acting on anything but what was checked.
 */
export function coveredByAuthorized(authorized: readonly AccessNeed[], needs: readonly AccessNeed[]): boolean {
  return needs.every((need) => authorized.some((granted) => granted.op === need.op && granted.stream === need.stream));
}

export function coversStream(prefixes: readonly string[], stream: string): boolean {
  return prefixes.some((prefix) => stream.startsWith(prefix));
}

/**
 * What one stream request needs, by method (table AN): GET and HEAD read (catch-up, long-poll, SSE);
 * POST appends (a close is an append); PUT creates, and a fork also reads its source; DELETE deletes.
 * Other methods need a valid token and nothing more (the node answers 405).
 */
export function streamRequestNeeds(method: string, stream: string, forkedFrom: string | null): AccessNeed[] {
  switch (method) {
    case "GET":
    case "HEAD":
      return [{ op: "read", stream }];
    case "POST":
      return [{ op: "append", stream }];
    case "PUT":
      return forkedFrom === null ? [{ op: "create", stream }] : [{ op: "create", stream }, { op: "read", stream: forkedFrom }];
    case "DELETE":
      return [{ op: "delete", stream }];
    default:
      return [];
  }
}
