// The reserved subscription API in workerd (docs/subscriptions.md): the Worker's `__ds` routes over the
// MetaLog's subscription book, signed webhooks and their fencing, and delivery from the node that
// acknowledged the append (pull-wake end to end: wake event, claim, ack, append then claim at once).
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { MetaLog } from "../../durable-objects/meta-log.ts";
import { metaLogClient, type Env } from "../../src/env.ts";
import { META_LOG_NAME } from "../../src/ports/meta-log-client.ts";
import type { PreparedEffect, WebhookJwks } from "../../src/ports/meta-log-client.ts";
import { performSubscriptionEffects } from "../../src/subscriptions/effects.ts";
import { verifyWebhookSignature } from "../../src/subscriptions/webhook-signing.ts";
import { eventually } from "../support/eventually.ts";

const testEnv = env as unknown as Env;
const ORIGIN = "http://mink.test";
const meta = metaLogClient(testEnv.META_LOG);
const json = { "content-type": "application/json" };

/** A request to the Worker at `<base>/v1/stream/<path>`: the router's origin, or a node's address. */
async function callAt(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = json,
  vars: Partial<Env> = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const response = await worker.fetch(new Request(`${base}/v1/stream/${path}`, init), { ...testEnv, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = json, vars: Partial<Env> = {}): Promise<Response> {
  return callAt(ORIGIN, method, path, body, headers, vars);
}

const sub = (id: string, rest = ""): string => `__ds/subscriptions/${id}${rest}`;

async function errorCode(response: Response): Promise<string> {
  return (await response.json<{ error: { code: string } }>()).error.code;
}

describe("subscription routes", () => {
  it("creates (201), confirms (200), refuses a different config (409), reads and deletes", async () => {
    const config = { type: "webhook", pattern: "r/*", webhook: { url: "https://hooks.example.com/a" }, lease_ttl_ms: 1000 };
    const created = await call("PUT", sub("r1"), config);
    expect(created.status).toBe(201);
    const view = await created.json<{ webhook: { signing: { alg: string; kid: string; jwks_url: string } } }>();
    expect(view.webhook.signing.alg).toBe("ed25519");
    expect(view.webhook.signing.kid).toMatch(/^ds_/);
    expect(view.webhook.signing.jwks_url).toBe(`${ORIGIN}/v1/stream/__ds/jwks.json`);

    const jwks = await call("GET", "__ds/jwks.json");
    expect(jwks.headers.get("content-type")).toBe("application/jwk-set+json");
    const keys = (await jwks.json<WebhookJwks>()).keys;
    expect(keys.map((k) => k.kid)).toContain(view.webhook.signing.kid);

    expect((await call("PUT", sub("r1"), config)).status).toBe(200);
    const conflict = await call("PUT", sub("r1"), { ...config, lease_ttl_ms: 2000 });
    expect(conflict.status).toBe(409);
    expect(await errorCode(conflict)).toBe("SUBSCRIPTION_ALREADY_EXISTS");
    expect((await (await call("GET", sub("r1"))).json<{ id: string }>()).id).toBe("r1");

    expect((await call("DELETE", sub("r1"))).status).toBe(204);
    expect((await call("DELETE", sub("r1"))).status).toBe(204);
    const gone = await call("GET", sub("r1"));
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("SUBSCRIPTION_NOT_FOUND");
  });

  it("refuses unsafe webhook URLs, bad JSON and unknown reserved routes", async () => {
    const unsafe = await call("PUT", sub("r2"), { type: "webhook", pattern: "x/*", webhook: { url: "http://10.0.0.1/hook" } });
    expect(unsafe.status).toBe(400);
    expect(await errorCode(unsafe)).toBe("WEBHOOK_URL_REJECTED");
    const bad = await call("PUT", sub("r2"), "{nope");
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("INVALID_REQUEST");
    const unknown = await call("GET", "__ds/elsewhere");
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("SUBSCRIPTION_NOT_FOUND");
  });

  it("a node's address serves the reserved API as the router does: the same records, URLs on the address used", async () => {
    const node = `${ORIGIN}/n/node-0`;
    const config = { type: "webhook", pattern: "n/*", webhook: { url: "https://hooks.example.com/n" } };
    const created = await callAt(node, "PUT", sub("n1"), config);
    expect(created.status).toBe(201);
    const view = await created.json<{ webhook: { signing: { jwks_url: string } } }>();
    // A client whose base URL is the node's address finds the JWKS (and its callbacks) under that base.
    expect(view.webhook.signing.jwks_url).toBe(`${node}/v1/stream/__ds/jwks.json`);
    const jwks = await callAt(node, "GET", "__ds/jwks.json");
    expect(jwks.status).toBe(200);
    expect(jwks.headers.get("content-type")).toBe("application/jwk-set+json");
    // One book of records: the router sees what the node's address created, and the other way round.
    expect((await call("PUT", sub("n1"), config)).status).toBe(200);
    expect((await callAt(node, "POST", sub("n1", "/streams"), { streams: ["n/a/b"] })).status).toBe(204);
    expect((await callAt(node, "DELETE", sub("n1", `/streams/${encodeURIComponent("n/a/b")}`))).status).toBe(204);
    const unknown = await callAt(node, "GET", "__ds/elsewhere");
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("SUBSCRIPTION_NOT_FOUND");
    expect((await callAt(node, "DELETE", sub("n1"))).status).toBe(204);
    expect((await call("GET", sub("n1"))).status).toBe(404);
    // An address of no node of this deployment serves nothing, reserved API included.
    const stranger = await callAt(`${ORIGIN}/n/node-9`, "GET", "__ds/jwks.json");
    expect(stranger.status).toBe(404);
    expect(await errorCode(stranger)).toBe("not_found");
  });

  it("adds and removes explicit streams (an encoded path segment)", async () => {
    const config = { type: "webhook", streams: ["manual/a"], webhook: { url: "https://hooks.example.com/b" } };
    expect((await call("PUT", sub("r3"), config)).status).toBe(201);
    expect((await call("POST", sub("r3", "/streams"), { streams: ["manual/b"] })).status).toBe(204);
    expect((await call("DELETE", sub("r3", `/streams/${encodeURIComponent("manual/b")}`))).status).toBe(204);
    const view = await (await call("GET", sub("r3"))).json<{ streams: Array<{ path: string; link_type: string }> }>();
    expect(view.streams).toEqual([{ path: "manual/a", link_type: "explicit", acked_offset: expect.any(String) as string }]);
    expect((await call("DELETE", sub("r3"))).status).toBe(204);
  });
});

describe("webhook wakes", () => {
  it("signs the webhook, acks on a synchronous done, and fences a stale callback", async () => {
    const config = { type: "webhook", pattern: "hook/*", webhook: { url: "https://hooks.example.com/c" }, lease_ttl_ms: 60_000 };
    expect((await call("PUT", sub("w1"), config)).status).toBe(201);
    const jwks = await (await call("GET", "__ds/jwks.json")).json<WebhookJwks>();
    const tail = "0000000000000000_0000000000000005";

    // A report as the node sends it; the receiver (a fetch stub) answers {"done": true}.
    const first = await meta.onStreamAppended([{ path: "hook/one", tailOffset: tail }]);
    const sent: PreparedEffect[] = [...first.effects];
    expect(sent.map((e) => e.kind)).toEqual(["send_webhook"]);
    const webhook = sent[0];
    if (webhook?.kind !== "send_webhook") throw new Error("expected a webhook");
    expect(await verifyWebhookSignature(webhook.signature, webhook.rawBody, jwks, Date.now())).toBe(true);
    const body = JSON.parse(webhook.rawBody) as { callback_url: string; streams: Array<{ path: string; tail_offset: string }> };
    expect(body.callback_url).toBe(`${ORIGIN}/v1/stream/__ds/subscriptions/w1/callback`);
    await performSubscriptionEffects(first.effects, {
      appendWakeEvent: () => Promise.reject(new Error("no wake events for webhooks")),
      webhookReplied: (id, ref, done) => meta.onWebhookReply(id, ref, done),
      fetch: () => Promise.resolve(new Response(JSON.stringify({ done: true }), { status: 200 })),
    });
    const acked = await (await call("GET", sub("w1"))).json<{ streams: Array<{ path: string; acked_offset: string }> }>();
    expect(acked.streams).toContainEqual({ path: "hook/one", link_type: "glob", acked_offset: tail });

    // The next append wakes generation 2; its callback acks once, then is fenced.
    const next = "0000000000000000_0000000000000009";
    const second = (await meta.onStreamAppended([{ path: "hook/one", tailOffset: next }])).effects[0];
    if (second?.kind !== "send_webhook") throw new Error("expected a webhook");
    const wake = JSON.parse(second.rawBody) as { wake_id: string; generation: number; callback_token: string };
    expect(wake.generation).toBe(2);
    const ack = { wake_id: wake.wake_id, generation: wake.generation, acks: [{ stream: "hook/one", offset: next }], done: true };
    const bearer = { ...json, authorization: `Bearer ${wake.callback_token}` };
    const wrongToken = await call("POST", sub("w1", "/callback"), ack, { ...json, authorization: "Bearer nope" });
    expect(wrongToken.status).toBe(401);
    const callback = await call("POST", sub("w1", "/callback"), ack, bearer);
    expect(callback.status).toBe(200);
    expect(await callback.json()).toEqual({ ok: true, next_wake: false });
    const stale = await call("POST", sub("w1", "/callback"), ack, bearer);
    expect(stale.status).toBe(409);
    expect(await errorCode(stale)).toBe("FENCED");
    expect((await call("DELETE", sub("w1"))).status).toBe(204);
  });

  it("reports nothing for streams no subscription follows", async () => {
    const none = await meta.onStreamAppended([{ path: "unfollowed/x", tailOffset: "0000000000000000_0000000000000001" }]);
    expect(none.effects).toEqual([]);
  });
});

describe("delivery from the node", () => {
  it("pull-wake: the append's wake event, claim, a second claim refused, ack, append then claim at once, release", async () => {
    expect((await call("PUT", "wake/pool", "[]")).status).toBe(201);
    const config = { type: "pull-wake", pattern: "pull/*", wake_stream: "wake/pool", lease_ttl_ms: 1000 };
    expect((await call("PUT", sub("p1"), config)).status).toBe(201);
    expect((await call("PUT", "pull/a", { event: "created" })).status).toBe(201);

    // The wake event is appended in the background after the create's answer: wait until it is in the pool.
    const events = await eventually(
      async () => {
        const read = await call("GET", "wake/pool");
        expect(read.status).toBe(200);
        const pool = await read.json<Array<{ subscription_id: string }>>();
        return pool.some((e) => e.subscription_id === "p1") && pool;
      },
      { what: "p1's wake event in wake/pool", errors: "fail" },
    );
    expect(events.some((e) => e.subscription_id === "p1")).toBe(true);

    const claim = await call("POST", sub("p1", "/claim"), { worker: "w-1" });
    expect(claim.status).toBe(200);
    const grant = await claim.json<{ wake_id: string; generation: number; token: string; streams: Array<{ path: string; tail_offset: string }> }>();
    const busy = await call("POST", sub("p1", "/claim"), { worker: "w-2" });
    expect(busy.status).toBe(409);
    expect((await busy.json<{ error: { code: string; current_holder: string } }>()).error).toMatchObject({
      code: "ALREADY_CLAIMED",
      current_holder: "w-1",
    });
    const tail = grant.streams.find((s) => s.path === "pull/a")?.tail_offset;
    const bearer = { ...json, authorization: `Bearer ${grant.token}` };
    const ack = await call("POST", sub("p1", "/ack"), { wake_id: grant.wake_id, generation: grant.generation, acks: [{ stream: "pull/a", offset: tail }], done: true }, bearer);
    expect(await ack.json()).toEqual({ ok: true, next_wake: false });

    expect((await call("POST", "pull/a", { event: "second" })).status).toBe(204);
    const again = await call("POST", sub("p1", "/claim"), { worker: "w-1" });
    expect(again.status).toBe(200);
    const grant2 = await again.json<{ wake_id: string; generation: number; token: string }>();
    // Release leaves the second append pending: the Worker appends the next wake event through the public
    // origin, which does not resolve here (the "append_wake_event failed" log line is expected).
    const release = await call("POST", sub("p1", "/release"), { wake_id: grant2.wake_id, generation: grant2.generation }, { ...json, authorization: `Bearer ${grant2.token}` });
    expect(release.status).toBe(204);
  });
});

describe("the append path while no subscription exists", () => {
  it("reports nothing, and reports the first append answered after a new subscription's PUT", async () => {
    expect((await call("DELETE", sub("p1"))).status).toBe(204);
    expect((await call("PUT", "quiet/x", "x", { "content-type": "text/plain" })).status).toBe(201);
    // The node hears of the delete through its watch; after that its appends are not reported.
    // Until then each append is still reported: append until one is not (a deadline, not a count).
    let before = -1;
    await eventually(
      async () => {
        before = await meta.subscriptionReports();
        expect((await call("POST", "quiet/x", "x", { "content-type": "text/plain" })).status).toBe(204);
        return (await meta.subscriptionReports()) === before;
      },
      { what: "an append of quiet/x not reported to the MetaLog", errors: "fail" },
    );
    for (let i = 0; i < 3; i++) expect((await call("POST", "quiet/x", "x", { "content-type": "text/plain" })).status).toBe(204);
    expect(await meta.subscriptionReports()).toBe(before);

    // The PUT answers only once the node confirmed the new set, so the very next append is delivered.
    const config = { type: "pull-wake", pattern: "quiet/*", wake_stream: "wake/quiet", lease_ttl_ms: 1000 };
    expect((await call("PUT", sub("q1"), config)).status).toBe(201);
    expect((await call("POST", "quiet/x", "y", { "content-type": "text/plain" })).status).toBe(204);
    const view = await (await call("GET", sub("q1"))).json<{ streams: Array<{ path: string }> }>();
    expect(view.streams.map((s) => s.path)).toEqual(["quiet/x"]);
    expect((await call("POST", sub("q1", "/claim"), { worker: "w" })).status).toBe(200);
  });
});

describe("subscription bounds (docs/limits.md)", () => {
  const metaLogStub = (): DurableObjectStub<MetaLog> => testEnv.META_LOG.getByName(META_LOG_NAME) as DurableObjectStub<MetaLog>;
  const tune = (change: Partial<{ maxSubscriptions: number; maxSubscriptionStreams: number; maxSubscriptionBookBytes: number }>): Promise<void> =>
    runInDurableObject(metaLogStub(), (instance) => {
      Object.assign(instance.tuning, change);
    });
  const pull = (wake: string, streams?: string[]): Record<string, unknown> =>
    streams === undefined ? { type: "pull-wake", pattern: "bounds/*", wake_stream: wake } : { type: "pull-wake", streams, wake_stream: wake };

  it("MAX_DS_BODY_BYTES: a __ds body over the bound is 413 PAYLOAD_TOO_LARGE before it is parsed, declared or not", async () => {
    const vars = { MAX_DS_BODY_BYTES: "64" };
    const big = `{"type": "pull-wake", "pattern": "a", "wake_stream": "w", "description": "${"x".repeat(100)}"}`;
    const declared = await callAt(ORIGIN, "PUT", sub("b0"), big, json, vars);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE", limit: "MAX_DS_BODY_BYTES", max: 64 } });
    // Not JSON at all, and over the bound without a length: still 413, never a parse error.
    const bytes = new TextEncoder().encode(`{nope${"x".repeat(100)}`);
    const unsized = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    const ctx = createExecutionContext();
    const request = new Request(`${ORIGIN}/v1/stream/${sub("b0")}`, { method: "PUT", headers: json, body: unsized });
    expect(request.headers.get("content-length")).toBeNull();
    const response = await worker.fetch(request, { ...testEnv, ...vars }, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(413);
    expect((await call("GET", sub("b0"))).status).toBe(404);
  });

  it("MAX_SUBSCRIPTIONS: a new subscription in a full deployment is 429 LIMIT_REACHED with Retry-After; a repeat PUT is still 200; a DELETE frees a slot", async () => {
    const existing = (await meta.onStreamAppended([])).subscriptions;
    await tune({ maxSubscriptions: existing + 1 });
    try {
      expect((await call("PUT", sub("b1"), pull("wake/b1"))).status).toBe(201);
      const full = await call("PUT", sub("b2"), pull("wake/b2"));
      expect(full.status).toBe(429);
      expect(full.headers.get("retry-after")).toBe("1");
      expect(await full.json()).toMatchObject({ error: { code: "LIMIT_REACHED", limit: "MAX_SUBSCRIPTIONS", max: existing + 1 } });
      expect((await call("PUT", sub("b1"), pull("wake/b1"))).status).toBe(200);
      expect((await call("DELETE", sub("b1"))).status).toBe(204);
      expect((await call("PUT", sub("b2"), pull("wake/b2"))).status).toBe(201);
    } finally {
      await tune({ maxSubscriptions: 10_000 });
      await call("DELETE", sub("b1"));
      await call("DELETE", sub("b2"));
    }
  });

  it("MAX_SUBSCRIPTION_BOOK_BYTES: a PUT or an added stream that would grow the book past it is 429 LIMIT_REACHED with Retry-After; a DELETE frees its bytes", async () => {
    const held = async (): Promise<number> => (await metaLogStub().stats()).subscriptionBytes;
    const before = await held();
    expect((await call("PUT", sub("b6"), pull("wake/b6", ["m/a"]))).status).toBe(201);
    const one = (await held()) - before;
    expect(one).toBeGreaterThan(0);
    // No room for a link more, nor for another record.
    const max = before + one + 5;
    await tune({ maxSubscriptionBookBytes: max });
    try {
      const grown = await call("POST", sub("b6", "/streams"), { streams: ["m/a-stream-with-a-longer-name"] });
      expect(grown.status).toBe(429);
      expect(grown.headers.get("retry-after")).toBe("1");
      expect(await grown.json()).toMatchObject({ error: { code: "LIMIT_REACHED", limit: "MAX_SUBSCRIPTION_BOOK_BYTES", max } });
      const full = await call("PUT", sub("b7"), pull("wake/b7", ["m/b"]));
      expect(full.status).toBe(429);
      expect(await full.json()).toMatchObject({ error: { code: "LIMIT_REACHED", limit: "MAX_SUBSCRIPTION_BOOK_BYTES", max } });
      expect(await held()).toBe(before + one);
      expect((await call("DELETE", sub("b6"))).status).toBe(204);
      expect(await held()).toBe(before);
      expect((await call("PUT", sub("b7"), pull("wake/b7", ["m/b"]))).status).toBe(201);
    } finally {
      await tune({ maxSubscriptionBookBytes: 8 * 1024 * 1024 });
      for (const id of ["b6", "b7"]) await call("DELETE", sub(id));
    }
  });

  it("MAX_SUBSCRIPTION_STREAMS: adding past the bound is 429 and adds nothing; a PUT naming more is 413", async () => {
    await tune({ maxSubscriptionStreams: 2 });
    try {
      expect((await call("PUT", sub("b3"), pull("wake/b3", ["m/a"]))).status).toBe(201);
      const over = await call("POST", sub("b3", "/streams"), { streams: ["m/b", "m/c"] });
      expect(over.status).toBe(429);
      expect(await over.json()).toMatchObject({ error: { code: "LIMIT_REACHED", limit: "MAX_SUBSCRIPTION_STREAMS", max: 2 } });
      expect((await call("POST", sub("b3", "/streams"), { streams: ["m/b"] })).status).toBe(204);
      const view = await (await call("GET", sub("b3"))).json<{ streams: Array<{ path: string }> }>();
      expect(view.streams.map((l) => l.path)).toEqual(["m/a", "m/b"]);
      const tooMany = await call("PUT", sub("b4"), pull("wake/b4", ["m/a", "m/b", "m/c"]), json, { MAX_SUBSCRIPTION_STREAMS: "2" });
      expect(tooMany.status).toBe(413);
      expect(await errorCode(tooMany)).toBe("PAYLOAD_TOO_LARGE");
    } finally {
      await tune({ maxSubscriptionStreams: 1_000 });
      await call("DELETE", sub("b3"));
    }
  });

  it("MAX_ACKS_PER_REQUEST: a callback or ack with more acks than the bound is 413", async () => {
    const acks = [1, 2, 3].map((i) => ({ stream: `m/${i}`, offset: "0000000000000000_0000000000000001" }));
    const body = { wake_id: "w", generation: 1, acks };
    for (const route of ["/callback", "/ack"]) {
      const response = await call("POST", sub("b5", route), body, { ...json, authorization: "Bearer t" }, { MAX_ACKS_PER_REQUEST: "2" });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE", limit: "MAX_ACKS_PER_REQUEST", max: 2 } });
    }
  });

  it("a webhook URL at the service's own origin, on loopback without WEBHOOK_ALLOW_LOOPBACK, or with credentials is 400 WEBHOOK_URL_REJECTED", async () => {
    const hook = (url: string): Record<string, unknown> => ({ type: "webhook", pattern: "x/*", webhook: { url } });
    const vars = { PUBLIC_ORIGIN: "https://streams.example.com" };
    for (const url of [
      "https://streams.example.com/v1/stream/stolen",
      `${ORIGIN}/v1/stream/stolen`,
      "http://127.0.0.1:9999/hook",
      "https://user:pw@hooks.example.com/h",
    ]) {
      const response = await call("PUT", sub("b6"), hook(url), json, vars);
      expect(response.status, url).toBe(400);
      expect(await errorCode(response)).toBe("WEBHOOK_URL_REJECTED");
    }
    const dev = await call("PUT", sub("b6"), hook("http://127.0.0.1:9999/hook"), json, { WEBHOOK_ALLOW_LOOPBACK: "1" });
    expect(dev.status).toBe(201);
    expect((await call("DELETE", sub("b6"))).status).toBe(204);
  });
});
