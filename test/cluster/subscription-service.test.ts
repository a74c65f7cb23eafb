// The MetaLog's subscriptions over the in-memory book (src/metadata/subscriptions): the same service the
// Durable Object runs over SQLite, so a restart over the same storage and the parameters it draws time,
// ids and tokens from can be checked without workerd.
import { describe, expect, it } from "vitest";
import type { SubscriptionConfig } from "../../src/core/subscriptions/index.ts";
import { MemorySubscriptionStorage } from "../../src/metadata/subscriptions/subscription-storage.ts";
import { SubscriptionService, type SubscriptionServiceOptions } from "../../src/metadata/subscriptions/subscription-service.ts";

const LIMITS = { maxSubscriptions: 10, maxSubscriptionStreams: 10, maxSubscriptionBookBytes: 1 << 20 };
const CONFIG: SubscriptionConfig = {
  type: "webhook",
  pattern: "jobs/*",
  streams: [],
  webhookUrl: "https://hooks.example.com/in",
  wakeStream: null,
  leaseTtlMs: 5_000,
  description: null,
};
const ORIGIN = "https://mink.example.com";

function service(storage: MemorySubscriptionStorage, seed: number, deadlines: Array<number | null> = []): SubscriptionService {
  let n = seed;
  const options: SubscriptionServiceOptions = {
    limits: LIMITS,
    onDeadline: (deadline) => deadlines.push(deadline),
    now: () => 1_000_000,
    freshWakeId: () => `wake-${n++}`,
    freshToken: () => `token-${n++}`,
  };
  return new SubscriptionService(storage, options);
}

describe("subscriptions over the in-memory book", () => {
  it("a restarted service over the same storage holds the same records and signs with the same key", async () => {
    const storage = new MemorySubscriptionStorage();
    const first = service(storage, 0);
    const put = await first.put("s1", CONFIG, ORIGIN);
    expect(put.ok).toBe(true);
    await first.streamsAppended([{ path: "jobs/a", tailOffset: "0000000000000000_0000000000000005" }]);
    const restarted = service(storage, 100);
    expect(restarted.record("s1")).toEqual(first.record("s1"));
    expect(restarted.heldBytes).toBe(first.heldBytes);
    expect(await restarted.jwks()).toEqual(await first.jwks());
  });

  it("a followed append wakes with the wake id and token the parameters drew, and sets the lease deadline", async () => {
    const deadlines: Array<number | null> = [];
    const subscriptions = service(new MemorySubscriptionStorage(), 7, deadlines);
    await subscriptions.put("s1", CONFIG, ORIGIN);
    const effects = await subscriptions.streamsAppended([{ path: "jobs/a", tailOffset: "0000000000000000_0000000000000005" }]);
    expect(effects).toHaveLength(1);
    const [effect] = effects;
    if (effect?.kind !== "send_webhook") throw new Error("expected a webhook");
    const body = JSON.parse(effect.rawBody) as { wake_id: string; callback_token: string; generation: number };
    expect(body).toMatchObject({ wake_id: "wake-7", callback_token: "token-8", generation: 1 });
    expect(deadlines.at(-1)).toBe(1_000_000 + CONFIG.leaseTtlMs);
  });
});
