// Webhook delivery (src/subscriptions/effects.ts) against a real HTTP receiver on loopback: no redirect is
// followed (a 3xx is a failed delivery), and a reply is read to WEBHOOK_MAX_REPLY_BYTES and no further.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WakeRef } from "../../src/core/subscriptions/wire.ts";
import type { PreparedEffect } from "../../src/ports/meta-log-client.ts";
import { MAX_WEBHOOKS_IN_FLIGHT_PER_HOST, performSubscriptionEffects } from "../../src/subscriptions/effects.ts";
import { eventually, NotYet } from "../support/eventually.ts";

const hits: string[] = [];
let sentBytes = 0;
let server: Server;
let base = "";

beforeAll(async () => {
  server = createServer((request, response) => {
    hits.push(request.url ?? "");
    request.resume();
    if (request.url === "/redirect") {
      response.writeHead(307, { location: `${base}/inside` }).end();
    } else if (request.url === "/inside") {
      response.writeHead(200, { "content-type": "application/json" }).end('{"done": true}');
    } else if (request.url === "/endless") {
      // A reply that never ends: `{"done": true, "pad": "xxxx...` for as long as the reader reads.
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"done": true, "pad": "');
      const chunk = "x".repeat(16 * 1024);
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk)) sentBytes += chunk.length;
        if (!response.destroyed) response.once("drain", pump);
      };
      response.on("close", () => undefined);
      pump();
    } else if (request.url === "/done") {
      response.writeHead(200, { "content-type": "application/json" }).end(`{"done": true, "pad": "${"x".repeat(900)}"}`);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function webhook(path: string): PreparedEffect {
  return { kind: "send_webhook", subscriptionId: "s", wakeId: "w", generation: 1, url: `${base}${path}`, rawBody: "{}", signature: "t=1" };
}

async function deliver(path: string, maxReplyBytes: number): Promise<WakeRef[]> {
  const replied: WakeRef[] = [];
  await performSubscriptionEffects([webhook(path)], {
    appendWakeEvent: () => Promise.reject(new Error("not a pull-wake test")),
    webhookReplied: (_id, ref) => {
      replied.push(ref);
      return Promise.resolve([]);
    },
    maxReplyBytes,
  });
  return replied;
}

describe("webhook delivery", () => {
  it("follows no redirect: a 307 is a failed delivery, and the address it names is never posted to", async () => {
    hits.length = 0;
    expect(await deliver("/redirect", 1024)).toEqual([]);
    expect(hits).toEqual(["/redirect"]);
  });

  it("reads a reply to WEBHOOK_MAX_REPLY_BYTES and no further: an endless reply acks nothing", async () => {
    sentBytes = 0;
    expect(await deliver("/endless", 64 * 1024)).toEqual([]);
    // The reader stopped: what the receiver managed to send is bounded by socket buffers, not by the reply.
    expect(sentBytes).toBeLessThan(64 * 1024 * 1024);
  });

  it("a reply within the bound that says done acks the wake", async () => {
    expect(await deliver("/done", 1024)).toEqual([{ wakeId: "w", generation: 1 }]);
    expect(await deliver("/done", 900)).toEqual([]);
  });
});

describe("webhook delivery is shared fairly between receivers", () => {
  it("a host that never answers holds at most its share of deliveries, and another tenant's webhook is delivered meanwhile", async () => {
    const released: (() => void)[] = [];
    const posted: string[] = [];
    const fetchPort = (async (input: string): Promise<Response> => {
      const url = input;
      posted.push(url);
      if (url.startsWith("https://black-hole.example/")) await new Promise<void>((resolve) => released.push(resolve));
      return new Response('{"done": true}', { status: 200 });
    }) as typeof fetch;
    const effect = (subscriptionId: string, url: string): PreparedEffect => ({ kind: "send_webhook", subscriptionId, wakeId: "w", generation: 1, url, rawBody: "{}", signature: "t=1" });
    const hostile = Array.from({ length: 12 }, (_, i) => effect(`hostile-${i}`, `https://black-hole.example/${i}`));
    const replied: string[] = [];
    const done = performSubscriptionEffects([...hostile, effect("other-tenant", "https://receiver.example/hook")], {
      appendWakeEvent: () => Promise.reject(new Error("not a pull-wake test")),
      webhookReplied: (id) => {
        replied.push(id);
        return Promise.resolve([]);
      },
      fetch: fetchPort,
    });
    await eventually(() => {
      if (!replied.includes("other-tenant")) throw new NotYet("the other tenant's webhook is not delivered yet");
      return true;
    });
    expect(posted.filter((url) => url.startsWith("https://black-hole.example/")).length).toBe(MAX_WEBHOOKS_IN_FLIGHT_PER_HOST);
    for (const release of released) release();
    await done;
  });
});
