// SUB-2 and SUB-4 (signature half): the Ed25519 signing helper, in Node's WebCrypto. The module lives in
// src/subscriptions/ (it uses crypto.subtle, so not in the pure core); the same code runs in workerd.
import { createPublicKey, verify } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  base64UrlDecode,
  base64UrlEncode,
  createWebhookSigner,
  generateWebhookSigningKey,
  verifyWebhookSignature,
  webhookJwks,
} from "../../../src/subscriptions/webhook-signing.ts";

const NOW_MS = 1_790_000_000_123;

describe("webhook signing", () => {
  test("SUB-2: the JWKS lists an OKP/Ed25519/EdDSA key under the advertised ds_ kid", async () => {
    const key = await generateWebhookSigningKey();
    expect(key.kid).toMatch(/^ds_[A-Za-z0-9_-]{43}$/);
    const jwks = webhookJwks([key]);
    expect(jwks.keys).toEqual([{ kty: "OKP", crv: "Ed25519", x: key.x, kid: key.kid, use: "sig", alg: "EdDSA" }]);
    expect(JSON.stringify(jwks)).not.toContain(key.d);
    const signer = await createWebhookSigner(key);
    expect(signer.kid).toBe(key.kid);
  });

  test("SUB-4: the Webhook-Signature header verifies over '<t>.<raw body>', as the conformance suite checks", async () => {
    const key = await generateWebhookSigningKey();
    const signer = await createWebhookSigner(key);
    const body = JSON.stringify({ subscription_id: "sub-1", wake_id: "w_1", note: "héllo" });
    const header = await signer.sign(body, NOW_MS);
    expect(header).toMatch(/^t=\d+,kid=.+,ed25519=[A-Za-z0-9_-]+$/);
    expect(header.startsWith(`t=${Math.floor(NOW_MS / 1000)},kid=${key.kid},`)).toBe(true);

    // Verified the way the suite does it: node:crypto with the JWK from the JWKS document.
    const [, t, , signature] = /^t=(\d+),kid=([^,]+),ed25519=(.+)$/.exec(header) ?? [];
    const jwk = webhookJwks([key]).keys[0];
    const publicKey = createPublicKey({ key: { ...jwk }, format: "jwk" });
    expect(verify(null, Buffer.from(`${t}.${body}`), publicKey, Buffer.from(signature ?? "", "base64url"))).toBe(true);

    const jwks = webhookJwks([key]);
    expect(await verifyWebhookSignature(header, body, jwks, NOW_MS)).toBe(true);
    expect(await verifyWebhookSignature(header, body + " ", jwks, NOW_MS)).toBe(false);
    expect(await verifyWebhookSignature(header, body, jwks, NOW_MS + 301_000)).toBe(false);
    expect(await verifyWebhookSignature(header, body, webhookJwks([await generateWebhookSigningKey()]), NOW_MS)).toBe(false);
    expect(await verifyWebhookSignature(null, body, jwks, NOW_MS)).toBe(false);
    expect(await verifyWebhookSignature(header.replace("ed25519=", "ed25519=A"), body, jwks, NOW_MS)).toBe(false);
  });

  test("a stored key signs the same way after a reload (JSON round trip)", async () => {
    const key = JSON.parse(JSON.stringify(await generateWebhookSigningKey())) as Awaited<ReturnType<typeof generateWebhookSigningKey>>;
    const header = await (await createWebhookSigner(key)).sign("{}", NOW_MS);
    expect(await verifyWebhookSignature(header, "{}", webhookJwks([key]), NOW_MS)).toBe(true);
  });

  test("base64url has no padding and round-trips every length", () => {
    for (let length = 0; length < 70; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 0xff);
      const text = base64UrlEncode(bytes);
      expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
      expect(base64UrlDecode(text)).toEqual(bytes);
    }
    expect(base64UrlDecode("a+b=")).toBeNull();
    expect(base64UrlDecode("abcde")).toBeNull();
  });
});
