// The MetaLog's register of access tokens (table TK): every minted token's id, grant and expiry, and
// whether it was revoked. Minting records the token so that revocation knows how long to remember it and
// operators can list what is out there; rows of expired tokens are dropped (an expired token is refused
// anyway), so the register holds at most MAX_TOKENS live tokens.
//
// | #   | step                                   | outcome                                            |
// |-----|----------------------------------------|----------------------------------------------------|
// | TK1 | mint, live tokens < MAX_TOKENS         | recorded                                           |
// | TK2 | mint, MAX_TOKENS live tokens           | 429 limit_reached (revocation does not free a row: it must outlive the token) |
// | TK3 | revoke an unknown or expired id        | 404 not_found                                      |
// | TK4 | revoke a revoked id                    | unchanged (idempotent)                             |
// | TK5 | revoke a live id                       | revoked: every entry refuses it within REVOCATION_CACHE_MS |
import { domainError, type DomainError } from "../errors.ts";
import type { AccessOp } from "./access.ts";

/** Live tokens the register holds at most (MAX_TOKENS). */
export const DEFAULT_MAX_TOKENS = 100_000;

export interface TokenRecord {
  readonly id: string;
  readonly prefixes: readonly string[];
  readonly ops: readonly AccessOp[];
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
  readonly revoked: boolean;
}

export type RegistryStep = { readonly ok: true } | { readonly ok: false; readonly error: DomainError };

/** TK1, TK2: `liveTokens` counted after dropping the expired ones. */
export function mintStep(liveTokens: number, max: number): RegistryStep {
  if (liveTokens < max) return { ok: true };
  return {
    ok: false,
    error: domainError("limit_reached", `at most ${max} live tokens; let some expire, or raise MAX_TOKENS`, { limit: "MAX_TOKENS", max }),
  };
}

export type RevokeStep = { readonly ok: true; readonly change: boolean } | { readonly ok: false; readonly error: DomainError };

/** TK3 to TK5. */
export function revokeStep(record: TokenRecord | null, nowMs: number): RevokeStep {
  if (record === null || record.expiresAtMs <= nowMs) return { ok: false, error: domainError("not_found", "no live token with this id") };
  return { ok: true, change: !record.revoked };
}
