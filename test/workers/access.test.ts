// Access tokens through the Worker (docs/access.md), in AUTH_MODE=token: minted and revoked with the admin
// API, checked at the router and at a node's address before anything else happens (tables AC, AN, AS),
// reads marked private, and the deployment check (table DP). The test env is the pool's (open) plus vars.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import worker from "../../src/index.ts";
import { newTokenId } from "../../src/admin/tokens.ts";
import { signToken } from "../../src/auth/token-codec.ts";
import { TOKEN_AUDIENCE } from "../../src/core/auth/claims.ts";
import type { Env } from "../../src/env.ts";
import { eventually, NotYet } from "../support/eventually.ts";

const SECRET = "mink-test-token-secret-0123456789abcdef"; // vitest.config.ts binds it
const ADMIN = { authorization: "Bearer mink-test-admin" };
const ORIGIN = "http://mink.test";
const tokenEnv = (vars: Partial<Env> = {}): Env => ({ ...(env as unknown as Env), AUTH_MODE: "token", REVOCATION_CACHE_MS: "50", ...vars });

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string; vars?: Partial<Env> } = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`${ORIGIN}${path}`, { method, headers: init.headers, body: init.body ?? null }), tokenEnv(init.vars), ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function mint(prefixes: string[], ops: string[], ttlSeconds = 3600): Promise<{ id: string; token: string }> {
  const response = await call("POST", "/admin/tokens", { headers: { ...ADMIN, "content-type": "application/json" }, body: JSON.stringify({ prefixes, ops, ttlSeconds }) });
  expect(response.status).toBe(201);
  return response.json();
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const codeOf = async (response: Response): Promise<string> => (await response.json<{ error: { code: string } }>()).error.code;
const run = Date.now().toString(36);

describe("token ids", () => {
  test("never start with '-', so `mink token revoke <id>` never reads one as an option (0xf8 encodes as '-')", () => {
    const leadingDash = new Uint8Array(16).fill(0xf8);
    expect(btoa(String.fromCharCode(...leadingDash)).startsWith("+")).toBe(true);
    expect(newTokenId(leadingDash)).toMatch(/^_[A-Za-z0-9_-]{21}$/);
    for (let i = 0; i < 256; i++) expect(newTokenId().startsWith("-")).toBe(false);
  });
});

describe("access tokens in token mode", () => {
  test("AC1 at the router and at a node's address: no token is 401 with WWW-Authenticate, and nothing is created", async () => {
    for (const path of [`/v1/stream/acc-${run}/a`, `/n/node-0/v1/stream/acc-${run}/a`]) {
      const response = await call("PUT", path, { headers: { "content-type": "text/plain" } });
      expect(response.status, path).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      expect(await codeOf(response)).toBe("unauthorized");
    }
    const { token } = await mint([""], ["read"]);
    expect((await call("HEAD", `/v1/stream/acc-${run}/a`, { headers: bearer(token) })).status).toBe(404);
  });

  test("AC2a: the admin token on a stream request is the same 401, saying it is the admin token and what stream requests need", async () => {
    for (const path of [`/v1/stream/acc-${run}/admin`, `/n/node-0/v1/stream/acc-${run}/admin`]) {
      const response = await call("PUT", path, { headers: { ...ADMIN, "content-type": "text/plain" } });
      expect(response.status, path).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      const { error } = await response.json<{ error: { code: string; message: string } }>();
      expect(error.code).toBe("unauthorized");
      expect(error.message).toContain("it is the admin token (ADMIN_TOKEN), which works only on /admin/... and /metrics");
      expect(error.message).toContain("need an access token from `mink token create`");
    }
    // Any other bearer that does not verify keeps AC2's reason.
    const other = await call("PUT", `/v1/stream/acc-${run}/admin`, { headers: { authorization: "Bearer mink-test-admin-not", "content-type": "text/plain" } });
    expect((await other.json<{ error: { message: string } }>()).error.message).toBe("the bearer token is not valid: not a token signed by this deployment");
  });

  test("a minted token opens exactly its prefixes and operations (AC5, AC6, AC7); reads are Cache-Control private", async () => {
    const { token } = await mint([`acc-${run}/demo/`], ["create", "append", "read"]);
    const stream = `/v1/stream/acc-${run}/demo/s`;
    expect((await call("PUT", stream, { headers: { ...bearer(token), "content-type": "text/plain" } })).status).toBe(201);
    expect((await call("POST", stream, { headers: { ...bearer(token), "content-type": "text/plain" }, body: "hello" })).status).toBe(204);
    const read = await call("GET", `${stream}?offset=-1`, { headers: bearer(token) });
    expect(await read.text()).toBe("hello");
    expect(read.headers.get("cache-control") ?? "").not.toContain("public");
    const deleted = await call("DELETE", stream, { headers: bearer(token) });
    expect([deleted.status, await codeOf(deleted)]).toEqual([403, "forbidden"]);
    const outside = await call("PUT", `/v1/stream/acc-${run}/other`, { headers: { ...bearer(token), "content-type": "text/plain" } });
    expect([outside.status, await codeOf(outside)]).toEqual([403, "forbidden"]);
  });

  test("a fork needs read on its source (AN)", async () => {
    const writer = await mint([`acc-${run}/src`], ["create", "append"]);
    const forker = await mint([`acc-${run}/fork`], ["create"]);
    expect((await call("PUT", `/v1/stream/acc-${run}/src`, { headers: { ...bearer(writer.token), "content-type": "text/plain" } })).status).toBe(201);
    const fork = await call("PUT", `/v1/stream/acc-${run}/fork`, {
      headers: { ...bearer(forker.token), "content-type": "text/plain", "stream-forked-from": `/v1/stream/acc-${run}/src` },
    });
    expect([fork.status, await codeOf(fork)]).toEqual([403, "forbidden"]);
    const both = await mint([`acc-${run}/fork`, `acc-${run}/src`], ["create", "read"]);
    const allowed = await call("PUT", `/v1/stream/acc-${run}/fork`, {
      headers: { ...bearer(both.token), "content-type": "text/plain", "stream-forked-from": `/v1/stream/acc-${run}/src` },
    });
    expect(allowed.status).toBe(201);
  });

  test("AC2, AC3: another key, alg none, a garbage token, an expired token and a foreign audience are all 401", async () => {
    const claims = { jti: "x", aud: TOKEN_AUDIENCE, iat: 1, exp: Math.floor(Date.now() / 1000) + 60, prefixes: [""], ops: ["read"] };
    const none = `${btoa(JSON.stringify({ alg: "none" }))}.${btoa(JSON.stringify(claims))}.`;
    const tokens = [
      await signToken(claims, "another-secret-of-at-least-32-characters"),
      none,
      "garbage",
      await signToken({ ...claims, exp: Math.floor(Date.now() / 1000) - 1 }, SECRET),
      await signToken({ ...claims, aud: "elsewhere" }, SECRET),
    ];
    for (const token of tokens) {
      const response = await call("GET", `/v1/stream/acc-${run}/x?offset=-1`, { headers: bearer(token) });
      expect([response.status, await codeOf(response)], token).toEqual([401, "unauthorized"]);
    }
    expect((await call("GET", `/v1/stream/acc-${run}/x?offset=-1`, { headers: bearer(await signToken(claims, SECRET)) })).status).toBe(404);
  });

  test("AC4 / TK5: a revoked token is refused everywhere within REVOCATION_CACHE_MS; revoking twice is fine, an unknown id is 404", async () => {
    const { id, token } = await mint([""], ["read"]);
    expect((await call("HEAD", `/v1/stream/acc-${run}/none`, { headers: bearer(token) })).status).toBe(404);
    expect((await call("DELETE", `/admin/tokens/${id}`, { headers: ADMIN })).status).toBe(204);
    expect((await call("DELETE", `/admin/tokens/${id}`, { headers: ADMIN })).status).toBe(204);
    expect((await call("DELETE", "/admin/tokens/nosuchtoken", { headers: ADMIN })).status).toBe(404);
    await eventually(
      async () => {
        const status = (await call("HEAD", `/v1/stream/acc-${run}/none`, { headers: bearer(token) })).status;
        if (status !== 401) throw new NotYet(`answered ${status}`);
        return status;
      },
      { timeoutMs: 5_000, what: "the revocation to reach the Worker" },
    );
    const listed = await (await call("GET", "/admin/tokens?limit=1000", { headers: ADMIN })).json<{ tokens: { id: string; revoked: boolean }[] }>();
    expect(listed.tokens.find((t) => t.id === id)?.revoked).toBe(true);
  });

  test("AS: a subscription is bound to the prefixes of the token that made it", async () => {
    const mine = await mint([`acc-${run}/a/`], ["subscribe"]);
    const other = await mint([`acc-${run}/b/`], ["subscribe"]);
    const path = `/v1/stream/__ds/subscriptions/acc-${run}`;
    const body = JSON.stringify({ type: "pull-wake", pattern: `acc-${run}/a/*`, wake_stream: `acc-${run}/a/wake` });
    const json = { "content-type": "application/json" };
    const outside = await call("PUT", path, { headers: { ...bearer(other.token), ...json }, body });
    expect(outside.status).toBe(403);
    expect((await call("PUT", path, { headers: { ...bearer(mine.token), ...json }, body })).status).toBe(201);
    expect((await call("GET", path, { headers: bearer(mine.token) })).status).toBe(200);
    // Another tenant's subscription is answered as an unknown id is (no stream named, no existence leaked).
    const unknown = await call("GET", `${path}-none`, { headers: bearer(other.token) });
    const probed = await call("GET", path, { headers: bearer(other.token) });
    expect([probed.status, await probed.text()]).toEqual([404, (await unknown.text()).replace(`acc-${run}-none`, `acc-${run}`)]);
    expect((await call("DELETE", path, { headers: bearer(other.token) })).status).toBe(204);
    expect((await call("GET", path, { headers: bearer(mine.token) })).status).toBe(200);
    const reader = await mint([""], ["read"]);
    expect((await call("GET", path, { headers: bearer(reader.token) })).status).toBe(403); // no `subscribe` at all
    expect((await call("GET", path)).status).toBe(401);
  });

  test("DP: token mode without TOKEN_SECRET, and several nodes without PUBLIC_ORIGIN, refuse to serve and say what to set", async () => {
    const noSecret = await call("GET", `/v1/stream/acc-${run}/x`, { vars: { TOKEN_SECRET: "" } });
    expect(noSecret.status).toBe(503);
    expect(await noSecret.text()).toContain("TOKEN_SECRET");
    const noOrigin = await call("GET", `/v1/stream/acc-${run}/x`, { vars: { NODE_IDS: "node-0,node-1", PUBLIC_ORIGIN: "" } });
    expect(await noOrigin.text()).toContain("PUBLIC_ORIGIN");
    expect(await (await call("GET", "/health", { vars: { TOKEN_SECRET: "" } })).text()).not.toContain("not configured safely");
  });

  test("DP4: a var left holding a template's <...> (examples/deploy/wrangler.toml's PUBLIC_ORIGIN) refuses to serve, naming the var", async () => {
    const vars = { PUBLIC_ORIGIN: "https://mink.<your-subdomain>.workers.dev" };
    for (const path of [`/v1/stream/acc-${run}/x`, "/admin/nodes", "/v1/table"]) {
      const refused = await call("GET", path, { headers: ADMIN, vars });
      expect(refused.status, path).toBe(503);
      const { error } = await refused.json<{ error: { code: string; message: string } }>();
      expect(error.code).toBe("unavailable");
      expect(error.message).toContain("PUBLIC_ORIGIN still holds the placeholder <your-subdomain>");
    }
    expect((await call("GET", "/health", { vars })).status).toBe(200);
  });

  test("open mode checks nothing", async () => {
    expect((await call("HEAD", `/v1/stream/acc-${run}/open`, { vars: { AUTH_MODE: "open" } })).status).toBe(404);
  });
});

describe("table ACT through the Worker", () => {
  test("a text/html stream is read with Content-Security-Policy: sandbox and Content-Disposition: attachment, its bytes unchanged", async () => {
    const open = { vars: { AUTH_MODE: "open" } };
    const path = `/v1/stream/acc-${run}/page`;
    expect((await call("PUT", path, { ...open, headers: { "content-type": "text/html" }, body: "<script>alert(1)</script>" })).status).toBe(201);
    const read = await call("GET", `${path}?offset=-1`, open);
    expect(read.headers.get("content-security-policy")).toBe("sandbox");
    expect(read.headers.get("content-disposition")).toBe("attachment");
    expect(await read.text()).toBe("<script>alert(1)</script>");
    const plain = `/v1/stream/acc-${run}/plain`;
    expect((await call("PUT", plain, { ...open, headers: { "content-type": "text/plain" }, body: "x" })).status).toBe(201);
    expect((await call("GET", `${plain}?offset=-1`, open)).headers.get("content-security-policy")).toBeNull();
  });
});
