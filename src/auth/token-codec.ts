// Access tokens on the wire: compact JWS (HS256, jose) over the claims of src/core/auth/claims.ts, keyed
// by TOKEN_SECRET. Only the signature is checked here; expiry, audience, revocation and the grant are the
// pure core's decision (table AC), with the clock as a parameter.
import { CompactSign, compactVerify } from "jose";
import { claimsOf } from "../core/auth/claims.ts";
import type { PresentedToken } from "../core/auth/access.ts";

/** A token is a few hundred characters; anything far longer is refused before any work. */
const MAX_TOKEN_CHARS = 4096;
const ALGORITHM = "HS256";
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** The imported key of the last secret seen: one importKey per isolate, not per request. */
let cachedKey: { secret: string; key: Promise<HmacKey> } | null = null;

function keyOf(secret: string): Promise<HmacKey> {
  if (cachedKey?.secret !== secret) {
    cachedKey = {
      secret,
      key: crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]),
    };
  }
  return cachedKey.key;
}

export async function signToken(claims: Record<string, unknown>, secret: string): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(claims))).setProtectedHeader({ alg: ALGORITHM, typ: "JWT" }).sign(await keyOf(secret));
}

/** What an `Authorization` value presents: no token, one that does not verify (and why), or its claims. */
export async function verifyToken(token: string | null, secret: string): Promise<PresentedToken> {
  if (token === null) return { kind: "missing" };
  if (token.length > MAX_TOKEN_CHARS) return { kind: "invalid", reason: "too long" };
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(token, await keyOf(secret), { algorithms: [ALGORITHM] }));
  } catch {
    return { kind: "invalid", reason: "not a token signed by this deployment" };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(payload));
  } catch {
    return { kind: "invalid", reason: "the payload is not JSON" };
  }
  const claims = claimsOf(parsed);
  return claims.ok ? { kind: "verified", claims: claims.value } : { kind: "invalid", reason: claims.error.message };
}
