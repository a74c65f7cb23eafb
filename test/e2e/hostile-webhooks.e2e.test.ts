// Hostile webhook targets (docs/limits.md, table WU): three nodes in token mode with the development flag
// WEBHOOK_ALLOW_LOOPBACK=1, so receivers on 127.0.0.1 can stand for hostile servers. A webhook is sent
// when an append lands on a subscribed stream; what the service does with the receiver's answer is what
// these tests watch from the receiver's side. (Without the flag, loopback is refused outright:
// hostile-protocol.e2e.test.ts.) Each test names the rule it proves.
//
//   npm run test:e2e -- test/e2e/hostile-webhooks.e2e.test.ts
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually } from "../support/eventually.ts";
import { allLive, call, mint, nodeEpochs, OPS, startHostileService, streamPath, type Answer, type Minted } from "./hostile-support.ts";
import type { Service } from "./service.ts";

let service: Service;
let root: Minted;
let epochsAtStart: Map<string, number>;
const receivers: Server[] = [];

interface Receiver {
  url: string;
  hits: { method: string; path: string; atMs: number }[];
}

/** A webhook receiver on 127.0.0.1 that answers every request with `answer`. */
async function receiver(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<Receiver> {
  const hits: Receiver["hits"] = [];
  const server = createServer((request, response) => {
    hits.push({ method: request.method ?? "", path: request.url ?? "", atMs: Date.now() });
    request.resume();
    request.on("end", () => answer(request, response));
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits };
}

beforeAll(async () => {
  service = await startHostileService({ WEBHOOK_ALLOW_LOOPBACK: "1" });
  root = await mint(service, [""], OPS);
  await allLive(service, root.token);
  epochsAtStart = await nodeEpochs(service);
}, 180_000);

afterAll(async () => {
  if (service !== undefined && epochsAtStart !== undefined) expect(await nodeEpochs(service), "no node reset").toEqual(epochsAtStart);
  for (const server of receivers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await service?.stop();
});

let subscriptions = 0;
/** A stream, and a webhook subscription on it with the shortest lease (1 s), so unacknowledged wakes retry soon. */
async function subscribed(url: string): Promise<{ stream: string; answer: Answer }> {
  const n = ++subscriptions;
  const stream = `wh/s${n}`;
  expect((await call(service, streamPath(stream), { method: "PUT", token: root.token, headers: { "content-type": "text/plain" } })).status).toBe(201);
  const answer = await call(service, `/v1/stream/__ds/subscriptions/wh-${n}`, {
    method: "PUT",
    token: root.token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "webhook", streams: [stream], webhook: { url }, lease_ttl_ms: 1_000 }),
  });
  return { stream, answer };
}

const appendTo = (stream: string, body: string): Promise<Answer> =>
  call(service, streamPath(stream), { method: "POST", token: root.token, headers: { "content-type": "text/plain" }, body });

describe("webhook targets with the loopback development flag on", () => {
  test("control: a loopback receiver is allowed with WEBHOOK_ALLOW_LOOPBACK=1 and gets the webhook of an append", async () => {
    const target = await receiver((_request, response) => response.writeHead(200, { "content-type": "application/json" }).end('{"done":true}'));
    const { stream, answer } = await subscribed(target.url);
    expect(answer.status, answer.text).toBe(201);
    expect((await appendTo(stream, "ping")).status).toBe(204);
    await eventually(() => target.hits.some((hit) => hit.method === "POST"), { timeoutMs: 15_000, what: "the webhook POST" });
  });

  test("a redirecting receiver is not followed: the receiver it points to gets nothing, even after the wake is sent again", async () => {
    const elsewhere = await receiver((_request, response) => response.writeHead(200, { "content-type": "application/json" }).end('{"done":true}'));
    const redirecting = await receiver((_request, response) => response.writeHead(307, { location: elsewhere.url }).end());
    const { stream, answer } = await subscribed(redirecting.url);
    expect(answer.status, answer.text).toBe(201);
    expect((await appendTo(stream, "ping")).status).toBe(204);
    // A redirect the service followed would reach `elsewhere` right after the first answer; the second POST
    // to the redirecting receiver (the next generation, after the 1 s lease lapsed) comes later than that.
    await eventually(() => redirecting.hits.length >= 2 || elsewhere.hits.length > 0, { timeoutMs: 30_000, what: "the webhook to be sent a second time" });
    expect(elsewhere.hits, "the redirect target was never contacted").toEqual([]);
  });

  test("a receiver answering an endless body is read to a bound: the service hangs up long before the receiver stops writing", async () => {
    const STOP_AT_BYTES = 256 * 1024 * 1024;
    const state = { written: 0, closedAtBytes: -1, requests: 0 };
    const chunk = Buffer.alloc(64 * 1024, 0x7b); // "{{{{": never valid JSON either
    const target = await receiver((_request, response) => {
      state.requests++;
      response.writeHead(200, { "content-type": "application/json" });
      response.on("close", () => {
        if (state.closedAtBytes < 0) state.closedAtBytes = state.written;
      });
      const pump = (): void => {
        while (state.written < STOP_AT_BYTES && !response.destroyed) {
          state.written += chunk.byteLength;
          if (!response.write(chunk)) {
            response.once("drain", pump);
            return;
          }
        }
        // Past STOP_AT_BYTES: hold the connection open (never end), as a hostile server would.
      };
      pump();
    });
    const { stream, answer } = await subscribed(target.url);
    expect(answer.status, answer.text).toBe(201);
    const startedAtMs = Date.now();
    expect((await appendTo(stream, "ping")).status).toBe(204);
    await eventually(() => state.closedAtBytes >= 0, { timeoutMs: 30_000, what: "the service to hang up on the endless reply" });
    console.log(`[hostile] endless webhook reply: the service hung up after ${state.closedAtBytes} bytes, ${Date.now() - startedAtMs} ms after the append`);
    expect(state.closedAtBytes, "bytes the receiver wrote before the service hung up").toBeLessThan(64 * 1024 * 1024);
    // The node that sent it serves on.
    const { status } = await appendTo(stream, "after");
    expect(status).toBe(204);
  });

  test.each([
    ["its router address", (s: Service) => `${s.baseUrl}/v1/stream/wh/own`],
    ["a node address", (s: Service) => `${s.baseUrl}/n/node-1/v1/stream/wh/own`],
    ["its admin API", (s: Service) => `${s.baseUrl}/admin/nodes`],
  ])("the service's own origin is refused as a webhook target even with the loopback flag: %s (400)", async (_what, url) => {
    const n = ++subscriptions;
    const answer = await call(service, `/v1/stream/__ds/subscriptions/own-${n}`, {
      method: "PUT",
      token: root.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "webhook", pattern: "wh/*", webhook: { url: url(service) } }),
    });
    expect(answer.status, answer.text).toBe(400);
  });

  test("the service's own port spelled as localhost is refused too (400)", async () => {
    const answer = await call(service, `/v1/stream/__ds/subscriptions/own-localhost`, {
      method: "PUT",
      token: root.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "webhook", pattern: "wh/*", webhook: { url: `http://localhost:${service.port}/v1/stream/wh/own` } }),
    });
    expect(answer.status, answer.text).toBe(400);
  });

  test.each(["https://10.1.2.3/hook", "https://169.254.169.254/latest/meta-data/", "http://169.254.169.254/latest/meta-data/", "https://[::ffff:169.254.169.254]/x", "http://0x7f.1:9/hook", "https://[2002:7f00:1::]:9/hook", "http://[64:ff9b::7f00:1]:9/hook", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", "https://[64:ff9b:1::a9fe:a9fe]/x"])(
    "private, metadata and IPv6 transition (6to4, NAT64, Teredo: table WU-H) addresses stay refused with the loopback flag on, except loopback itself: %s",
    async (url) => {
      const n = ++subscriptions;
      const answer = await call(service, `/v1/stream/__ds/subscriptions/priv-${n}`, {
        method: "PUT",
        token: root.token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "webhook", pattern: "wh/*", webhook: { url } }),
      });
      // http://0x7f.1 is 127.0.0.1: loopback, which the flag allows; the others are never allowed.
      expect(answer.status, answer.text).toBe(url.startsWith("http://0x7f.1") ? 201 : 400);
    },
  );
});
