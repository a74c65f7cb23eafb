// Hostile input, authentication and authorization (docs/access.md): three nodes in token mode. Every
// stream request needs a bearer token minted by POST /admin/tokens, at the router and at each node's
// address; a token covers stream names by string prefix and lists operations. Each test names the rule.
//
//   npm run test:e2e -- test/e2e/hostile-auth.e2e.test.ts
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually } from "../support/eventually.ts";
import {
  allLive,
  call,
  decodeJwt,
  expectCleanError,
  expectRefusal,
  mint,
  namesOnEachNode,
  NODE_IDS,
  OPS,
  resign,
  revoke,
  signJwt,
  startHostileService,
  streamPath,
  tamperedJwt,
  TOKEN_SECRET,
  unsignedJwt,
  type Answer,
  type Minted,
  type Op,
} from "./hostile-support.ts";
import type { Service } from "./service.ts";

const REVOCATION_CACHE_MS = 100;
let service: Service;
/** Every op on `au/`. */
let full: Minted;
/** Every op on every name (`""`). */
let root: Minted;
/** One op each on `au/`. */
const only = new Map<Op, Minted>();
/** Every op, but on `other/` only. */
let elsewhere: Minted;
/** A stream under `au/` on each node, holding "hello". */
let onNode: Map<string, string>;
let name: string;

beforeAll(async () => {
  // Revocations refreshed every 100 ms (default 1,000): the load test below then spans many refreshes.
  service = await startHostileService({ REVOCATION_CACHE_MS: String(REVOCATION_CACHE_MS) });
  [full, root, elsewhere] = await Promise.all([mint(service, ["au/"], OPS), mint(service, [""], OPS), mint(service, ["other/"], OPS)]);
  for (const op of OPS) only.set(op, await mint(service, ["au/"], [op]));
  await allLive(service, root.token);
  onNode = await namesOnEachNode(service, "au/s", full.token);
  for (const stream of onNode.values()) {
    const appended = await call(service, streamPath(stream), { method: "POST", token: full.token, headers: { "content-type": "text/plain" }, body: "hello" });
    expect(appended.status, appended.text).toBe(204);
  }
  name = onNode.get("node-1")!;
}, 180_000);

afterAll(async () => {
  await service?.stop();
});

const tokenOf = (op: Op): string => only.get(op)!.token;
const get = (path: string, token: string | null, headers: Record<string, string> = {}): Promise<Answer> => call(service, path, { token, headers });

/** One request of each operation against `stream` (bodies and headers that would succeed with the op). */
function requestFor(op: Op | "head" | "sse" | "long-poll" | "close", stream: string, token: string | null): Promise<Answer> {
  switch (op) {
    case "read":
      return call(service, streamPath(`${stream}?offset=-1`), { token });
    case "head":
      return call(service, streamPath(stream), { method: "HEAD", token });
    case "sse":
      return call(service, streamPath(`${stream}?offset=now&live=sse`), { token, timeoutMs: 5_000 });
    case "long-poll":
      return call(service, streamPath(`${stream}?offset=now&live=long-poll`), { token });
    case "append":
      return call(service, streamPath(stream), { method: "POST", token, headers: { "content-type": "text/plain" }, body: "x" });
    case "close":
      return call(service, streamPath(stream), { method: "POST", token, headers: { "stream-closed": "true" } });
    case "create":
      return call(service, streamPath(`${stream}-new`), { method: "PUT", token, headers: { "content-type": "text/plain" } });
    case "delete":
      return call(service, streamPath(stream), { method: "DELETE", token });
    case "subscribe":
      return call(service, `/v1/stream/__ds/subscriptions/sub-${Math.random().toString(36).slice(2)}`, {
        method: "PUT",
        token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "pull-wake", streams: [stream], wake_stream: `${stream}-wake` }),
      });
  }
}

function expectUnauthorized(answer: Answer, head = false): void {
  if (head) {
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate") ?? "").toMatch(/^Bearer\b/i);
  } else {
    expectRefusal(answer, 401, "unauthorized");
  }
}

async function contentOf(stream: string): Promise<string> {
  const answer = await get(streamPath(`${stream}?offset=-1`), root.token);
  expect(answer.status, answer.text).toBe(200);
  return answer.text;
}

describe("authentication: a stream request without a valid token is 401 unauthorized with WWW-Authenticate: Bearer", () => {
  test.each(["read", "head", "append", "close", "create", "delete", "subscribe", "sse", "long-poll"] as const)(
    "no Authorization header: %s is refused with 401",
    async (op) => {
      expectUnauthorized(await requestFor(op, name, null), op === "head");
      expect(await contentOf(name)).toBe("hello");
    },
  );

  const malformed: [string, () => string][] = [
    ["the Basic scheme", () => `Basic ${Buffer.from("admin:admin").toString("base64")}`],
    ["Bearer with nothing after it", () => "Bearer "],
    ["a bearer value that is not a JWT", () => "Bearer not-a-token"],
    ["three segments of garbage base64", () => "Bearer %%%.***.$$$"],
    ["a JWT whose header is not JSON", () => `Bearer ${Buffer.from("{nope").toString("base64url")}.${full.token.split(".")[1]}.${full.token.split(".")[2]}`],
    ["alg: none with the payload of a real token", () => `Bearer ${unsignedJwt(full.token)}`],
    ["a real token signed again with HS512 (wrong alg) and the real secret", () => `Bearer ${resign(full.token, TOKEN_SECRET, (p) => p, "HS512")}`],
    ["a real token with an RS256 header over its HMAC signature", () => {
      const [, payload, signature] = full.token.split(".");
      return `Bearer ${Buffer.from(JSON.stringify({ alg: "RS256", typ: "JWT" })).toString("base64url")}.${payload}.${signature}`;
    }],
    ["a real token with its signature cut off", () => `Bearer ${full.token.split(".").slice(0, 2).join(".")}.`],
    ["a real token with bytes appended to its signature", () => `Bearer ${full.token}AAAA`],
    ["the admin token (not a stream token)", () => `Bearer ${service.adminToken}`],
  ];
  test.each(malformed)("malformed: %s is 401", async (_what, authorization) => {
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), null, { authorization: authorization() }));
  });

  test("bad signature: a token with the claims of a real one, signed with another secret, is 401", async () => {
    const forged = resign(full.token, "another-secret-of-at-least-32-characters!!");
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), forged));
  });

  test("tampered payload: widening a real token's prefixes under its original signature is 401", async () => {
    const wider = tamperedJwt(elsewhere.token, (payload) => JSON.parse(JSON.stringify(payload).replaceAll('"other/"', '""')) as Record<string, unknown>);
    expect(decodeJwt(wider).payload, "the forged payload differs from the minted one").not.toEqual(decodeJwt(elsewhere.token).payload);
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), wider));
  });

  test("a token made up from scratch with a guessed secret is 401", async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const guessed = signJwt({ alg: "HS256", typ: "JWT" }, { prefixes: [""], ops: [...OPS], exp: nowS + 3600, iat: nowS, jti: "guess" }, "mink".repeat(8));
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), guessed));
  });

  test("expired: a token minted with a 1 s lifetime works, then is 401 once it has expired", async () => {
    const shortLived = await mint(service, ["au/"], ["read"], 1);
    expect(Date.parse(shortLived.expiresAt) - Date.now()).toBeLessThanOrEqual(1_500);
    const first = await get(streamPath(`${name}?offset=-1`), shortLived.token);
    // The mint answer may reach us late on a busy machine; only a refusal after expiry matters.
    if (Date.now() < Date.parse(shortLived.expiresAt) - 200) expect(first.status, first.text).toBe(200);
    await eventually(async () => (await get(streamPath(`${name}?offset=-1`), shortLived.token)).status === 401, { timeoutMs: 10_000, what: "the expired token to be refused" });
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), shortLived.token));
  });

  test("expired: a real token's claims with exp in the past, signed with the real secret, are 401", async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const past = resign(full.token, TOKEN_SECRET, (payload) => ({ ...payload, exp: nowS - 60, iat: nowS - 120 }));
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), past));
    // Control: the same claims with a future exp, signed the same way, are accepted (the forgery is faithful).
    const future = resign(full.token, TOKEN_SECRET, (payload) => ({ ...payload, exp: nowS + 600 }));
    expect((await get(streamPath(`${name}?offset=-1`), future)).status).toBe(200);
  });

  test("wrong audience: a real token's claims with another aud, signed with the real secret, are 401", async () => {
    const other = resign(full.token, TOKEN_SECRET, (payload) => ({ ...payload, aud: "some-other-service" }));
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), other));
  });

  test("claims out of shape under a valid signature are 401: ops widened to an unknown op, prefixes not strings, no jti", async () => {
    for (const change of [
      (p: Record<string, unknown>) => ({ ...p, ops: ["read", "admin"] }),
      (p: Record<string, unknown>) => ({ ...p, prefixes: [42] }),
      (p: Record<string, unknown>) => ({ ...p, jti: undefined }),
      (p: Record<string, unknown>) => ({ ...p, exp: "never" }),
    ]) {
      expectUnauthorized(await get(streamPath(`${name}?offset=-1`), resign(full.token, TOKEN_SECRET, change)));
    }
  });

  test("a 60 KB Authorization header is a 4xx, never a 5xx", async () => {
    const answer = await get(streamPath(`${name}?offset=-1`), `${full.token}${"A".repeat(60 * 1024)}`);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
  });

  test("not yet valid: a real token's claims with nbf an hour ahead, signed with the real secret, are 401", async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const early = resign(full.token, TOKEN_SECRET, (payload) => ({ ...payload, nbf: nowS + 3_600 }));
    expectUnauthorized(await get(streamPath(`${name}?offset=-1`), early));
  });

  test("revoked: after DELETE /admin/tokens/<id> the token is 401 at the router and at every node's address within seconds", async () => {
    const doomed = await mint(service, ["au/"], ["read"]);
    const paths = [streamPath(`${name}?offset=-1`), ...NODE_IDS.map((node) => streamPath(`${onNode.get(node)!}?offset=-1`, node))];
    for (const path of paths) expect((await get(path, doomed.token)).status, path).toBe(200);
    const revokedAt = Date.now();
    await revoke(service, doomed.id);
    for (const path of paths) {
      await eventually(async () => (await get(path, doomed.token)).status === 401, { timeoutMs: 10_000, what: `${path} to refuse the revoked token` });
    }
    expect(Date.now() - revokedAt, "revocation takes effect everywhere within about a second (REVOCATION_CACHE_MS)").toBeLessThan(5_000);
    expectUnauthorized(await get(paths[0]!, doomed.token));
  });

  test("revocation is by id: revoking one token leaves another token with the same claims working", async () => {
    const [a, b] = await Promise.all([mint(service, ["au/"], ["read"]), mint(service, ["au/"], ["read"])]);
    expect(a.id).not.toBe(b.id);
    await revoke(service, a.id);
    await eventually(async () => (await get(streamPath(`${name}?offset=-1`), a.token)).status === 401, { timeoutMs: 10_000 });
    expect((await get(streamPath(`${name}?offset=-1`), b.token)).status).toBe(200);
  });

  test("under concurrent load across many revocation refreshes no request is a 5xx: each request's token check stands alone", async () => {
    const load = await namesOnEachNode(service, "au/load", full.token);
    const statuses = new Map<number, number>();
    const started = Date.now();
    let next = 0;
    const total = 20_000;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < total) {
          const i = next++;
          const answer =
            i % 2 === 0
              ? await call(service, streamPath(load.get(NODE_IDS[i % 3]!)!, NODE_IDS[i % 3]), { method: "POST", token: full.token, headers: { "content-type": "text/plain" }, body: "." })
              : await get(streamPath(`${load.get(NODE_IDS[i % 3]!)!}?offset=-1`), full.token);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }
      }),
    );
    const elapsedMs = Date.now() - started;
    console.log(`[hostile] ${total} authenticated requests in ${elapsedMs} ms (~${Math.round(elapsedMs / REVOCATION_CACHE_MS)} revocation periods): ${JSON.stringify([...statuses])}`);
    expect([...statuses.keys()].filter((status) => status >= 500), JSON.stringify([...statuses])).toEqual([]);
  }, 240_000);

  test.each(["token", "access_token", "authorization", "auth"])("a token in the query string (?%s=) is not accepted: 401", async (param) => {
    expectUnauthorized(await get(streamPath(`${name}?offset=-1&${param}=${encodeURIComponent(full.token)}`), null));
  });

  test("401 answers say nothing internal and are not cacheable", async () => {
    const answer = await get(streamPath(`${name}?offset=-1`), "x.y.z");
    expectUnauthorized(answer);
    expectCleanError(answer, "unauthorized");
    expect(answer.headers.get("cache-control") ?? "").not.toMatch(/public/);
  });
});

describe("authorization: a valid token without the operation or the prefix is 403 forbidden, and changes nothing", () => {
  const forbiddenWith: [string, Op, Op | "head" | "sse" | "long-poll" | "close"][] = [
    ["a read token cannot append", "read", "append"],
    ["a read token cannot close a stream", "read", "close"],
    ["a read token cannot create", "read", "create"],
    ["a read token cannot delete", "read", "delete"],
    ["a read token cannot create a subscription", "read", "subscribe"],
    ["an append token cannot read", "append", "read"],
    ["an append token cannot HEAD", "append", "head"],
    ["an append token cannot tail with SSE", "append", "sse"],
    ["an append token cannot long-poll", "append", "long-poll"],
    ["an append token cannot delete", "append", "delete"],
    ["a create token cannot append", "create", "append"],
    ["a create token cannot read", "create", "read"],
    ["a delete token cannot read", "delete", "read"],
    ["a delete token cannot append", "delete", "append"],
    ["a subscribe token cannot read", "subscribe", "read"],
    ["a subscribe token cannot append", "subscribe", "append"],
  ];
  test.each(forbiddenWith)("wrong op: %s (403)", async (_rule, held, attempted) => {
    const answer = await requestFor(attempted, name, tokenOf(held));
    if (attempted === "head") expect(answer.status).toBe(403);
    else expectRefusal(answer, 403, "forbidden");
    expect(await contentOf(name)).toBe("hello");
  });

  test.each(["read", "head", "append", "close", "create", "delete", "subscribe"] as const)(
    "wrong prefix: a token for other/ with every op cannot %s under au/ (403)",
    async (op) => {
      const answer = await requestFor(op, name, elsewhere.token);
      if (op === "head") expect(answer.status).toBe(403);
      else expectRefusal(answer, 403, "forbidden");
      expect(await contentOf(name)).toBe("hello");
    },
  );

  test("the op a token holds works (controls for the 403s): read, head, append, create, delete with their own tokens", async () => {
    const scratch = `au/ops-${Date.now().toString(36)}`;
    expect((await call(service, streamPath(scratch), { method: "PUT", token: tokenOf("create"), headers: { "content-type": "text/plain" } })).status).toBe(201);
    expect((await call(service, streamPath(scratch), { method: "POST", token: tokenOf("append"), headers: { "content-type": "text/plain" }, body: "ok" })).status).toBe(204);
    const read = await get(streamPath(`${scratch}?offset=-1`), tokenOf("read"));
    expect([read.status, read.text]).toEqual([200, "ok"]);
    expect((await call(service, streamPath(scratch), { method: "HEAD", token: tokenOf("read") })).status).toBe(200);
    expect((await call(service, streamPath(scratch), { method: "DELETE", token: tokenOf("delete") })).status).toBe(204);
    expect((await call(service, streamPath(scratch), { method: "HEAD", token: root.token })).status).toBe(404);
  });

  test('prefixes match by string prefix: "au/p/" covers au/p/a/b but not au/pq nor au/p', async () => {
    const narrow = await mint(service, ["au/p/"], ["create", "read"]);
    expect((await call(service, streamPath("au/p/a/b"), { method: "PUT", token: narrow.token, headers: { "content-type": "text/plain" } })).status).toBe(201);
    expectRefusal(await call(service, streamPath("au/pq"), { method: "PUT", token: narrow.token, headers: { "content-type": "text/plain" } }), 403, "forbidden");
    expectRefusal(await call(service, streamPath("au/p"), { method: "PUT", token: narrow.token, headers: { "content-type": "text/plain" } }), 403, "forbidden");
    expect((await call(service, streamPath("au/pq"), { method: "HEAD", token: root.token })).status).toBe(404);
  });

  test('the empty prefix "" covers every name', async () => {
    expect((await get(streamPath(`${name}?offset=-1`), root.token)).status).toBe(200);
    expect((await call(service, streamPath("anywhere/at/all"), { method: "PUT", token: root.token, headers: { "content-type": "text/plain" } })).status).toBe(201);
  });

  test("a fork needs read on its source: create on the target alone is 403, create plus read on the source is 201", async () => {
    const createOnly = await mint(service, ["au/fork/"], ["create"]);
    const headers = { "content-type": "text/plain", "stream-forked-from": `/v1/stream/${name}` };
    expectRefusal(await call(service, streamPath("au/fork/a"), { method: "PUT", token: createOnly.token, headers }), 403, "forbidden");
    const createHereReadThere = await mint(service, ["au/fork/", name], ["create", "read"]);
    const forked = await call(service, streamPath("au/fork/b"), { method: "PUT", token: createHereReadThere.token, headers });
    expect(forked.status, forked.text).toBe(201);
    expect((await get(streamPath("au/fork/b?offset=-1"), root.token)).text).toBe("hello");
    // A token that can read the source but create only elsewhere cannot fork into au/fork/.
    expectRefusal(await call(service, streamPath("au/fork/c"), { method: "PUT", token: tokenOf("read"), headers }), 403, "forbidden");
  });

  test("authenticated reads are Cache-Control: private (or no-store), never public (GET and HEAD)", async () => {
    for (const method of ["GET", "HEAD"]) {
      const answer = await call(service, streamPath(`${name}${method === "GET" ? "?offset=-1" : ""}`), { method, token: full.token });
      expect(answer.status).toBe(200);
      const cacheControl = answer.headers.get("cache-control") ?? "";
      expect(cacheControl, method).toMatch(method === "GET" ? /\bprivate\b/ : /\b(private|no-store)\b/);
      expect(cacheControl, method).not.toMatch(/\bpublic\b/);
    }
  });
});

describe("the node addresses and the router's redirect: no way around the token", () => {
  test.each([...NODE_IDS])("the node address /n/%s/v1/stream/... without a token is 401 (read, append, delete)", async (node) => {
    const stream = onNode.get(node)!;
    expectUnauthorized(await get(streamPath(`${stream}?offset=-1`, node), null));
    expectUnauthorized(await call(service, streamPath(stream, node), { method: "POST", headers: { "content-type": "text/plain" }, body: "sneak" }));
    expectUnauthorized(await call(service, streamPath(stream, node), { method: "DELETE" }));
    expect(await contentOf(stream)).toBe("hello");
  });

  test("the node address with a token for another prefix is 403, with the right token 200", async () => {
    const stream = onNode.get("node-2")!;
    expectRefusal(await get(streamPath(`${stream}?offset=-1`, "node-2"), elsewhere.token), 403, "forbidden");
    const ok = await get(streamPath(`${stream}?offset=-1`, "node-2"), full.token);
    expect([ok.status, ok.text]).toEqual([200, "hello"]);
  });

  test("the subscription API at a node address needs a token too (401)", async () => {
    expectUnauthorized(await call(service, "/n/node-1/v1/stream/__ds/subscriptions/nope", {}));
  });

  test("the router refuses a request without a token itself (401), it does not redirect it to the owner", async () => {
    const stream = onNode.get("node-2")!;
    const answer = await call(service, streamPath(`${stream}?offset=-1`), { redirect: "manual" });
    expectUnauthorized(answer);
    expect(answer.headers.get("location")).toBeNull();
  });

  test("a 307 followed with the same token works; the same Location without the token is 401", async () => {
    const stream = onNode.get("node-2")!;
    const redirect = await call(service, streamPath(`${stream}?offset=-1`), { token: full.token, redirect: "manual" });
    expect(redirect.status).toBe(307);
    const location = new URL(redirect.headers.get("location")!);
    expect(location.pathname).toBe(streamPath(stream, "node-2"));
    const followed = await get(`${location.pathname}${location.search}`, full.token);
    expect([followed.status, followed.text]).toEqual([200, "hello"]);
    expectUnauthorized(await get(`${location.pathname}${location.search}`, null));
  });

  test("an append through the router's 307, followed with the same token, is acknowledged once", async () => {
    const stream = `au/redir-${Date.now().toString(36)}`;
    expect((await call(service, streamPath(stream, "node-2"), { method: "PUT", token: full.token, headers: { "content-type": "text/plain" } })).status).toBe(201);
    const appended = await call(service, streamPath(stream), { method: "POST", token: full.token, headers: { "content-type": "text/plain" }, body: "via-307" });
    expect(appended.status, appended.text).toBe(204);
    expect(await contentOf(stream)).toBe("via-307");
  });
});

describe("the admin API is the admin token's alone", () => {
  const adminCalls: [string, string, string, unknown][] = [
    ["GET /admin/nodes", "GET", "/admin/nodes", undefined],
    ["POST /admin/tokens (a stream token cannot mint)", "POST", "/admin/tokens", { prefixes: [""], ops: [...OPS], ttlSeconds: 60 }],
    ["GET /metrics", "GET", "/metrics", undefined],
    ["GET /admin/streams/<name>", "GET", "/admin/streams/au/s0", undefined],
  ];
  test.each(adminCalls)("%s with a stream token for every name and op is 401", async (_what, method, path, body) => {
    const answer = await call(service, path, {
      method,
      token: root.token,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(answer.status, answer.text).toBe(401);
  });

  test("DELETE /admin/tokens/<id> with a stream token is 401 and the token stays valid", async () => {
    const victim = await mint(service, ["au/"], ["read"]);
    expect((await call(service, `/admin/tokens/${victim.id}`, { method: "DELETE", token: root.token })).status).toBe(401);
    expect((await call(service, `/admin/tokens/${victim.id}`, { method: "DELETE", token: victim.token })).status).toBe(401);
    expect((await get(streamPath(`${name}?offset=-1`), victim.token)).status).toBe(200);
  });

  test("minting refuses what it cannot honour: an unknown op, a negative TTL, prefixes that are not strings (400)", async () => {
    for (const body of [
      { prefixes: ["au/"], ops: ["root"], ttlSeconds: 60 },
      { prefixes: ["au/"], ops: ["read"], ttlSeconds: -1 },
      { prefixes: [42], ops: ["read"], ttlSeconds: 60 },
      { ops: ["read"], ttlSeconds: 60 },
    ]) {
      const answer = await call(service, "/admin/tokens", { method: "POST", token: service.adminToken, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expectCleanError(answer);
    }
  });
});

describe("subscriptions are bound to the prefixes of the token that made them", () => {
  const subscriptionPath = (id: string, rest = ""): string => `/v1/stream/__ds/subscriptions/${id}${rest}`;
  const putSubscription = (id: string, token: string | null, body: unknown): Promise<Answer> =>
    call(service, subscriptionPath(id), { method: "PUT", token, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  let subscriber: Minted;
  let stranger: Minted;
  const ownedId = `owned-${Date.now().toString(36)}`;

  beforeAll(async () => {
    [subscriber, stranger] = await Promise.all([mint(service, ["au/sub/"], ["subscribe"]), mint(service, ["other/"], ["subscribe"])]);
    const created = await putSubscription(ownedId, subscriber.token, { type: "pull-wake", pattern: "au/sub/*", wake_stream: "au/sub/wake" });
    expect(created.status, created.text).toBe(201);
  });

  test("a pattern outside the token's prefixes is 403", async () => {
    expectRefusal(await putSubscription("outside-pattern", subscriber.token, { type: "pull-wake", pattern: "au/*", wake_stream: "au/sub/wake2" }), 403, "forbidden");
  });

  test("a stream outside the token's prefixes is 403", async () => {
    expectRefusal(await putSubscription("outside-stream", subscriber.token, { type: "pull-wake", streams: ["au/sub/a", name], wake_stream: "au/sub/w" }), 403, "forbidden");
  });

  test("a wake stream outside the token's prefixes is 403 (wake events would be appended there)", async () => {
    expectRefusal(await putSubscription("outside-wake", subscriber.token, { type: "pull-wake", streams: ["au/sub/a"], wake_stream: name }), 403, "forbidden");
  });

  test("without a token the subscription routes are 401", async () => {
    expectUnauthorized(await putSubscription("anon", null, { type: "pull-wake", pattern: "au/sub/*", wake_stream: "au/sub/w" }));
    expectUnauthorized(await call(service, subscriptionPath(ownedId)));
  });

  test("another token whose prefixes do not cover the subscription cannot see it, delete it, claim it or change its streams, and learns nothing: each is answered as for an id that does not exist", async () => {
    const json = { "content-type": "application/json" };
    const attempts = (id: string): Promise<Answer>[] => [
      call(service, subscriptionPath(id), { token: stranger.token }),
      call(service, subscriptionPath(id), { method: "DELETE", token: stranger.token }),
      call(service, subscriptionPath(id, "/claim"), { method: "POST", token: stranger.token, headers: json, body: JSON.stringify({ worker: "w" }) }),
      call(service, subscriptionPath(id, "/streams"), { method: "POST", token: stranger.token, headers: json, body: JSON.stringify({ streams: ["other/x"] }) }),
      call(service, subscriptionPath(id, "/streams/au%2Fsub%2Fa"), { method: "DELETE", token: stranger.token }),
    ];
    const probed = await Promise.all(attempts(ownedId));
    const unknown = await Promise.all(attempts(`${ownedId}-none`));
    const seen = (answers: Answer[], id: string): [number, string][] => answers.map((answer) => [answer.status, answer.text.replaceAll(id, "<id>")]);
    expect(seen(probed, ownedId)).toEqual(seen(unknown, `${ownedId}-none`));
    for (const answer of probed) expect(answer.text).not.toContain("au/sub");
    const still = await call(service, subscriptionPath(ownedId), { token: subscriber.token });
    expect(still.status, still.text).toBe(200);
    expect(still.text).toContain("au/sub/");
  });

  test("the owner cannot add a stream outside its prefixes to its own subscription (403)", async () => {
    expectRefusal(
      await call(service, subscriptionPath(ownedId, "/streams"), { method: "POST", token: subscriber.token, headers: { "content-type": "application/json" }, body: JSON.stringify({ streams: [name] }) }),
      403,
      "forbidden",
    );
  });

  test('a token whose prefixes cover the subscription\'s ("") can see it', async () => {
    const answer = await call(service, subscriptionPath(ownedId), { token: root.token });
    expect(answer.status, answer.text).toBe(200);
  });

  test("a stream token is not a claim token: /ack with it is refused (401)", async () => {
    const answer = await call(service, subscriptionPath(ownedId, "/ack"), {
      method: "POST",
      token: subscriber.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wake_id: "w", generation: 1, acks: [] }),
    });
    expect(answer.status, answer.text).toBeGreaterThanOrEqual(400);
    expect(answer.status, answer.text).toBeLessThan(500);
    expect(answer.status).not.toBe(200);
  });
});
