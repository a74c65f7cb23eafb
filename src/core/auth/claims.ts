// The shape of access tokens, both ways: the claims a minted token carries (from an admin's request) and
// the claims read back out of a verified token. Pure: ids and time come from the caller. The signature is
// the shell's (src/auth/token-codec.ts); here a payload that verified but is out of shape is still refused.
import { domainError } from "../errors.ts";
import { MAX_STREAM_NAME_LENGTH } from "../protocol/stream-name.ts";
import { ACCESS_OPS, type AccessClaims, type AccessOp } from "./access.ts";
import type { Result } from "../result.ts";

/** Prefixes one token may carry (each a stream-name prefix, "" for every stream). */
export const MAX_TOKEN_PREFIXES = 32;
/** The longest token lifetime: a year. Revocations are kept until the token expires. */
export const MAX_TOKEN_TTL_SECONDS = 366 * 24 * 3600;
/** Who the tokens are for: a token minted for anything else with the same secret does not open streams. */
export const TOKEN_AUDIENCE = "mink-streams";

/** `POST /admin/tokens`: what to grant and for how long. */
export interface MintRequest {
  readonly prefixes: readonly string[];
  readonly ops: readonly AccessOp[];
  readonly ttlSeconds: number;
}

/** A checked claim or mint request (src/core/result.ts). */
export type Checked<T> = Result<T>;

const invalid = <T>(message: string): Checked<T> => ({ ok: false, error: domainError("invalid", message) });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parsePrefixes(raw: unknown): Checked<string[]> {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_TOKEN_PREFIXES) {
    return invalid(`prefixes must be an array of 1 to ${MAX_TOKEN_PREFIXES} stream-name prefixes ("" for every stream)`);
  }
  const prefixes: string[] = [];
  for (const item of raw) {
    if (typeof item !== "string" || item.length > MAX_STREAM_NAME_LENGTH || item.startsWith("/") || /[\u0000-\u001f\u007f]/.test(item)) {
      return invalid(`each prefix is a string of at most ${MAX_STREAM_NAME_LENGTH} characters, without control characters or a leading '/'`);
    }
    prefixes.push(item);
  }
  return { ok: true, value: [...new Set(prefixes)].sort() };
}

function parseOps(raw: unknown): Checked<AccessOp[]> {
  const known = new Set<string>(ACCESS_OPS);
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((op) => typeof op === "string" && known.has(op))) {
    return invalid(`ops must be a non-empty array of ${ACCESS_OPS.join(", ")}`);
  }
  return { ok: true, value: ACCESS_OPS.filter((op) => (raw as unknown[]).includes(op)) };
}

export function parseMintRequest(raw: unknown): Checked<MintRequest> {
  if (!isRecord(raw)) return invalid("the body must be a JSON object {prefixes, ops, ttlSeconds}");
  const unknownKeys = Object.keys(raw).filter((key) => !["prefixes", "ops", "ttlSeconds"].includes(key));
  if (unknownKeys.length > 0) return invalid(`unknown fields: ${unknownKeys.join(", ")}`);
  const prefixes = parsePrefixes(raw["prefixes"]);
  if (!prefixes.ok) return prefixes;
  const ops = parseOps(raw["ops"]);
  if (!ops.ok) return ops;
  const ttl = raw["ttlSeconds"];
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 1 || ttl > MAX_TOKEN_TTL_SECONDS) {
    return invalid(`ttlSeconds must be an integer from 1 to ${MAX_TOKEN_TTL_SECONDS}`);
  }
  return { ok: true, value: { prefixes: prefixes.value, ops: ops.value, ttlSeconds: ttl } };
}

/** The JWT payload of a new token (seconds, as JWT counts them). */
export function mintClaims(request: MintRequest, id: string, nowMs: number): Record<string, unknown> {
  const iat = Math.floor(nowMs / 1000);
  return { jti: id, aud: TOKEN_AUDIENCE, iat, exp: iat + request.ttlSeconds, prefixes: request.prefixes, ops: request.ops };
}

/** The claims of a verified payload, or why it is out of shape. */
export function claimsOf(payload: unknown): Checked<AccessClaims> {
  if (!isRecord(payload)) return invalid("the payload is not an object");
  const { jti, exp, nbf } = payload;
  if (typeof jti !== "string" || jti === "" || jti.length > 128) return invalid("jti is missing");
  if (typeof exp !== "number" || !Number.isFinite(exp)) return invalid("exp is missing");
  if (nbf !== undefined && (typeof nbf !== "number" || !Number.isFinite(nbf))) return invalid("nbf is not a number");
  if (payload["aud"] !== TOKEN_AUDIENCE) return invalid("the audience is not mink-streams");
  const prefixes = parsePrefixes(payload["prefixes"]);
  if (!prefixes.ok) return invalid("prefixes are out of shape");
  const ops = parseOps(payload["ops"]);
  if (!ops.ok) return invalid("ops are out of shape");
  return {
    ok: true,
    value: { id: jti, prefixes: prefixes.value, ops: ops.value, expiresAtMs: exp * 1000, ...(nbf === undefined ? {} : { notBeforeMs: nbf * 1000 }) },
  };
}
