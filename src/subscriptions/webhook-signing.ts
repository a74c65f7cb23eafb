// Webhook signatures (SUB-2, SUB-4): the server signs every webhook POST with an Ed25519 key and publishes
// the public half as a JWKS document, so receivers verify without a shared secret. Header:
//   Webhook-Signature: t=<unix seconds>,kid=<kid>,ed25519=<base64url signature over "<t>.<raw body>">
// WebCrypto only (`crypto.subtle` with {name: "Ed25519"}), so the same code runs in workerd and Node 20.
// The key pair is plain JSON (`StoredSigningKey`) for the shell to keep; the private half never leaves it.
import type { WebhookJwks, WebhookPublicJwk } from "../ports/meta-log-client.ts";


/** The key pair as stored by the shell: `x` public, `d` private (base64url, RFC 8037). */
export interface StoredSigningKey {
  readonly kid: string;
  readonly x: string;
  readonly d: string;
}

export interface WebhookSigner {
  readonly kid: string;
  readonly publicJwk: WebhookPublicJwk;
  /** The `Webhook-Signature` value for `rawBody`, the exact string sent as the body. */
  sign(rawBody: string, nowMs: number): Promise<string>;
}

const ED25519 = { name: "Ed25519" } as const;
/** Receivers refuse signatures older or newer than this. */
const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;
const HEADER_PATTERN = /^t=(\d+),kid=([^,]+),ed25519=([A-Za-z0-9_-]+)$/;

export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Null for text that is not unpadded base64url. */
export function base64UrlDecode(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** RFC 7638 thumbprint of the public key, prefixed `ds_`: the same key always gets the same kid. */
async function keyId(x: string): Promise<string> {
  const canonical = JSON.stringify({ crv: "Ed25519", kty: "OKP", x });
  const digest = await crypto.subtle.digest("SHA-256", utf8(canonical));
  return `ds_${base64UrlEncode(new Uint8Array(digest))}`;
}

function publicJwk(kid: string, x: string): WebhookPublicJwk {
  return { kty: "OKP", crv: "Ed25519", x, kid, use: "sig", alg: "EdDSA" };
}

/** A fresh signing key pair (once per deployment, or per rotation). */
export async function generateWebhookSigningKey(): Promise<StoredSigningKey> {
  const pair = await crypto.subtle.generateKey(ED25519, true, ["sign", "verify"]);
  if (!("privateKey" in pair)) throw new Error("Ed25519 key generation returned a single key");
  const exported = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as { x?: string; d?: string };
  if (exported.x === undefined || exported.d === undefined) throw new Error("Ed25519 JWK export lacks x or d");
  return { kid: await keyId(exported.x), x: exported.x, d: exported.d };
}

/** SUB-2: the body of `GET /v1/stream/__ds/jwks.json` (served as `application/jwk-set+json`). */
export function webhookJwks(keys: readonly StoredSigningKey[]): WebhookJwks {
  return { keys: keys.map((k) => publicJwk(k.kid, k.x)) };
}

/** Import the stored key once; sign many bodies. */
export async function createWebhookSigner(stored: StoredSigningKey): Promise<WebhookSigner> {
  // Only the RFC 8037 members: Node 20 exports `alg: "Ed25519"` and workerd `alg: "EdDSA"`, and each
  // may refuse the other's spelling on import.
  const jwk = { kty: "OKP", crv: "Ed25519", x: stored.x, d: stored.d };
  const privateKey = await crypto.subtle.importKey("jwk", jwk, ED25519, false, ["sign"]);
  return {
    kid: stored.kid,
    publicJwk: publicJwk(stored.kid, stored.x),
    async sign(rawBody, nowMs) {
      const t = Math.floor(nowMs / 1000);
      const signature = await crypto.subtle.sign(ED25519, privateKey, utf8(`${t}.${rawBody}`));
      return `t=${t},kid=${stored.kid},ed25519=${base64UrlEncode(new Uint8Array(signature))}`;
    },
  };
}

/**
 * What a receiver does: parse the header, find the key by kid, check the timestamp is within
 * `toleranceSeconds` of `nowMs`, verify the signature over `"<t>.<rawBody>"`.
 */
export async function verifyWebhookSignature(
  header: string | null,
  rawBody: string,
  jwks: WebhookJwks,
  nowMs: number,
  toleranceSeconds = DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
): Promise<boolean> {
  const match = header === null ? null : HEADER_PATTERN.exec(header);
  const [, t, kid, encoded] = match ?? [];
  if (t === undefined || kid === undefined || encoded === undefined) return false;
  if (Math.abs(Math.floor(nowMs / 1000) - Number(t)) > toleranceSeconds) return false;
  const key = jwks.keys.find((k) => k.kid === kid);
  const signature = base64UrlDecode(encoded);
  if (key === undefined || signature === null || signature.length !== 64) return false;
  try {
    const jwk = { kty: "OKP", crv: "Ed25519", x: key.x };
    const publicKey = await crypto.subtle.importKey("jwk", jwk, ED25519, false, ["verify"]);
    return await crypto.subtle.verify(ED25519, publicKey, signature, utf8(`${t}.${rawBody}`));
  } catch {
    return false;
  }
}
