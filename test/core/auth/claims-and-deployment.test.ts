// Minting and reading token claims (src/core/auth/claims.ts), table DP (deployment.ts) and table TK
// (token-registry.ts), row by row.
import { describe, expect, test } from "vitest";
import { claimsOf, MAX_TOKEN_PREFIXES, MAX_TOKEN_TTL_SECONDS, mintClaims, parseMintRequest, TOKEN_AUDIENCE } from "../../../src/core/auth/claims.ts";
import { checkDeployment, type DeploymentSettings } from "../../../src/core/auth/deployment.ts";
import { mintStep, revokeStep, type TokenRecord } from "../../../src/core/auth/token-registry.ts";

const NOW = 1_800_000_000_000;

describe("minting", () => {
  test("a request round-trips into claims that read back the same grant", () => {
    const request = parseMintRequest({ prefixes: ["demo/", "demo/"], ops: ["append", "read"], ttlSeconds: 3600 });
    expect(request.ok).toBe(true);
    if (!request.ok) return;
    expect(request.value).toEqual({ prefixes: ["demo/"], ops: ["read", "append"], ttlSeconds: 3600 });
    const back = claimsOf(mintClaims(request.value, "id1", NOW));
    expect(back).toEqual({ ok: true, value: { id: "id1", prefixes: ["demo/"], ops: ["read", "append"], expiresAtMs: NOW + 3_600_000 } });
  });
  test.each([
    [{ prefixes: [], ops: ["read"], ttlSeconds: 1 }, "prefixes"],
    [{ prefixes: Array.from({ length: MAX_TOKEN_PREFIXES + 1 }, (_, i) => `p${i}`), ops: ["read"], ttlSeconds: 1 }, "prefixes"],
    [{ prefixes: ["/abs"], ops: ["read"], ttlSeconds: 1 }, "prefix"],
    [{ prefixes: ["a"], ops: ["admin"], ttlSeconds: 1 }, "ops"],
    [{ prefixes: ["a"], ops: [], ttlSeconds: 1 }, "ops"],
    [{ prefixes: ["a"], ops: ["read"], ttlSeconds: 0 }, "ttlSeconds"],
    [{ prefixes: ["a"], ops: ["read"], ttlSeconds: MAX_TOKEN_TTL_SECONDS + 1 }, "ttlSeconds"],
    [{ prefixes: ["a"], ops: ["read"], ttlSeconds: 1, admin: true }, "unknown fields"],
  ])("refused: %j", (body, mentions) => {
    const request = parseMintRequest(body);
    expect(request.ok ? null : request.error.message).toContain(mentions);
  });
  test.each([
    [{ jti: "x", exp: 1, prefixes: ["a"], ops: ["read"] }, "audience"],
    [{ jti: "x", exp: 1, aud: TOKEN_AUDIENCE, prefixes: "a", ops: ["read"] }, "prefixes"],
    [{ jti: "x", exp: 1, aud: TOKEN_AUDIENCE, prefixes: ["a"], ops: ["root"] }, "ops"],
    [{ exp: 1, aud: TOKEN_AUDIENCE, prefixes: ["a"], ops: ["read"] }, "jti"],
    [{ jti: "x", aud: TOKEN_AUDIENCE, prefixes: ["a"], ops: ["read"] }, "exp"],
  ])("a verified payload out of shape is refused: %j", (payload, mentions) => {
    const claims = claimsOf(payload);
    expect(claims.ok ? null : claims.error.message).toContain(mentions);
  });
});

describe("table DP", () => {
  const safe: DeploymentSettings = { authMode: "token", tokenSecret: "x".repeat(32), nodeCount: 3, publicOrigin: "https://mink.example", vars: { S3_BUCKET: "mink" } };
  test("DP1: an unknown AUTH_MODE is refused; unset means token", () => {
    expect(checkDeployment({ ...safe, authMode: "opne" }).ok).toBe(false);
    expect(checkDeployment({ ...safe, authMode: undefined })).toEqual({ ok: true, authMode: "token" });
  });
  test("DP2: token mode without a secret of 32 characters is refused, saying what to set", () => {
    const check = checkDeployment({ ...safe, tokenSecret: "short" });
    expect(check.ok ? [] : check.problems.join()).toContain("TOKEN_SECRET");
    expect(checkDeployment({ ...safe, authMode: "open", tokenSecret: undefined })).toEqual({ ok: true, authMode: "open" });
  });
  test("DP3: several nodes without PUBLIC_ORIGIN are refused; one node needs none", () => {
    const check = checkDeployment({ ...safe, publicOrigin: "" });
    expect(check.ok ? [] : check.problems.join()).toContain("PUBLIC_ORIGIN");
    expect(checkDeployment({ ...safe, nodeCount: 1, publicOrigin: undefined }).ok).toBe(true);
  });
  test("DP4: a var still holding a template's <...> placeholder is refused, naming the var and the placeholder only", () => {
    const vars = { PUBLIC_ORIGIN: "https://mink.<your-subdomain>.workers.dev", S3_BUCKET: "<bucket>", S3_ENDPOINT: "https://r2.example", NODES: 3, META_LOG: {} };
    const check = checkDeployment({ ...safe, vars });
    expect(check.ok ? [] : check.problems).toEqual([
      "PUBLIC_ORIGIN still holds the placeholder <your-subdomain>: replace every <...> in wrangler.toml's [vars] (or the secret) with the real value and deploy again",
      "S3_BUCKET still holds the placeholder <bucket>: replace every <...> in wrangler.toml's [vars] (or the secret) with the real value and deploy again",
    ]);
    // A value that only holds angle brackets, not a placeholder word, is served.
    expect(checkDeployment({ ...safe, vars: { ADMIN_TOKEN: "k<9/+=>z", NOTE: "1 < 2 > 0" } }).ok).toBe(true);
  });
});

describe("table TK", () => {
  const record: TokenRecord = { id: "t", prefixes: [""], ops: ["read"], issuedAtMs: NOW, expiresAtMs: NOW + 10, revoked: false };
  test("TK1, TK2: minting up to MAX_TOKENS live tokens, then 429 naming the limit", () => {
    expect(mintStep(9, 10)).toEqual({ ok: true });
    const full = mintStep(10, 10);
    expect(full.ok ? null : [full.error.code, full.error.details]).toEqual(["limit_reached", { limit: "MAX_TOKENS", max: 10 }]);
  });
  test("TK3: unknown or expired ids are 404", () => {
    expect(revokeStep(null, NOW).ok).toBe(false);
    expect(revokeStep(record, NOW + 10).ok).toBe(false);
  });
  test("TK4, TK5: revoking is idempotent", () => {
    expect(revokeStep(record, NOW)).toEqual({ ok: true, change: true });
    expect(revokeStep({ ...record, revoked: true }, NOW)).toEqual({ ok: true, change: false });
  });
});
