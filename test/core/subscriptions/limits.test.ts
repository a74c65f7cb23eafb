// The subscription bounds (src/core/subscriptions/limits.ts, docs/limits.md): each one
// refuses with the setting's name and max, on the wire as 413 PAYLOAD_TOO_LARGE (the request alone is over)
// or 429 LIMIT_REACHED with Retry-After (a full bound that a DELETE frees).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  checkAddedLinks,
  checkBookBytes,
  checkRecordGrowth,
  checkRecordSize,
  checkSubscriptionCount,
  MAX_SUBSCRIPTION_RECORD_CHARS,
  newSubscription,
  onStreamAppend,
  parseAckRequest,
  parseSubscriptionConfig,
  type SubscriptionError,
} from "../../../src/core/subscriptions/index.ts";
import { subscriptionErrorResponse } from "../../../src/subscriptions/error-wire.ts";
import { config, contexts, DEV_POLICY, off, splitUrl, webhookSub } from "./fixtures.ts";

function wire(error: SubscriptionError): { status: number; headers: Record<string, string>; body: unknown } {
  const { status, headers, body } = subscriptionErrorResponse(error);
  return { status, headers, body: JSON.parse(body) as unknown };
}

describe("subscription bounds", () => {
  test("MAX_SUBSCRIPTIONS: a new subscription when the deployment is full is 429 LIMIT_REACHED with Retry-After", () => {
    expect(checkSubscriptionCount(9, 10)).toBeNull();
    const full = checkSubscriptionCount(10, 10);
    if (full === null) throw new Error("expected a refusal");
    expect(wire(full)).toEqual({
      status: 429,
      headers: { "retry-after": "1" },
      body: { error: { code: "LIMIT_REACHED", message: expect.any(String) as string, limit: "MAX_SUBSCRIPTIONS", max: 10 } },
    });
  });

  test("MAX_SUBSCRIPTION_STREAMS: a PUT naming more explicit streams than a subscription may link is 413", () => {
    const body = { type: "pull-wake", streams: ["a", "b", "c"], wake_stream: "w" };
    expect(parseSubscriptionConfig(body, splitUrl, { ...DEV_POLICY, maxStreams: 3 }).ok).toBe(true);
    const parsed = parseSubscriptionConfig(body, splitUrl, { ...DEV_POLICY, maxStreams: 2 });
    if (parsed.ok) throw new Error("expected a refusal");
    expect(wire(parsed.error)).toMatchObject({
      status: 413,
      headers: {},
      body: { error: { code: "PAYLOAD_TOO_LARGE", limit: "MAX_SUBSCRIPTION_STREAMS", max: 2 } },
    });
  });

  test("MAX_SUBSCRIPTION_STREAMS: adding streams past the links a subscription may hold is 429; links it already has do not count twice", () => {
    const record = newSubscription("s", config({ type: "pull-wake", streams: ["a", "b"], wake_stream: "w" }), 0, []);
    expect(checkAddedLinks(record.links, ["a", "b", "c"], 3)).toBeNull();
    const full = checkAddedLinks(record.links, ["c", "d"], 3);
    expect(full).toMatchObject({ code: "limit_reached", details: { limit: "MAX_SUBSCRIPTION_STREAMS", max: 3 } });
    if (full !== null) expect(wire(full).status).toBe(429);
  });

  test("MAX_SUBSCRIPTION_STREAMS: an append links no new stream by pattern past the bound, and still records the tails of linked ones", () => {
    const ctx = contexts();
    let record = webhookSub(); // pattern events/*
    for (const path of ["events/a", "events/b"]) record = onStreamAppend(record, { path, tailOffset: off(1) }, { ...ctx(1), maxLinks: 2 }).state;
    const third = onStreamAppend(record, { path: "events/c", tailOffset: off(1) }, { ...ctx(2), maxLinks: 2 });
    expect(third.result).toEqual({ ok: true, value: { followed: false } });
    expect(third.state.links.map((l) => l.path)).toEqual(["events/a", "events/b"]);
    const linked = onStreamAppend(third.state, { path: "events/a", tailOffset: off(9) }, { ...ctx(3), maxLinks: 2 });
    expect(linked.result).toEqual({ ok: true, value: { followed: true } });
    expect(linked.state.links.find((l) => l.path === "events/a")?.tailOffset).toBe(off(9));
  });

  test("property: appends never make a subscription hold more links than MAX_SUBSCRIPTION_STREAMS", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 40 }), (maxLinks, streams) => {
        const ctx = contexts();
        let record = webhookSub();
        for (const [i, n] of streams.entries()) {
          record = onStreamAppend(record, { path: `events/s${n}`, tailOffset: off(i + 1) }, { ...ctx(i), maxLinks }).state;
          expect(record.links.length).toBeLessThanOrEqual(maxLinks);
        }
      }),
    );
  });

  test("MAX_ACKS_PER_REQUEST: more acks than the bound is 413, before any ack is looked at", () => {
    const acks = [{ stream: "a", offset: off(1) }, { stream: "b", offset: off(1) }, { junk: true }];
    const body = { wake_id: "w", generation: 1, acks };
    expect(parseAckRequest(body, 3)).toMatchObject({ ok: false, error: { code: "invalid" } });
    const over = parseAckRequest(body, 2);
    if (over.ok) throw new Error("expected a refusal");
    expect(wire(over.error)).toMatchObject({ status: 413, body: { error: { code: "PAYLOAD_TOO_LARGE", limit: "MAX_ACKS_PER_REQUEST", max: 2 } } });
  });

  test("a subscription record over the MetaLog's row bound is 413, one at the bound is written", () => {
    expect(checkRecordSize(MAX_SUBSCRIPTION_RECORD_CHARS)).toBeNull();
    const over = checkRecordSize(MAX_SUBSCRIPTION_RECORD_CHARS + 1);
    if (over === null) throw new Error("expected a refusal");
    expect(wire(over)).toMatchObject({ status: 413, body: { error: { code: "PAYLOAD_TOO_LARGE" } } });
  });

  test("a record over the row bound (written under an earlier bound) still takes changes that do not grow it; growth past the bound is 413", () => {
    const over = MAX_SUBSCRIPTION_RECORD_CHARS + 10;
    expect(checkRecordGrowth(over, over - 5, over - 5)).toBeNull();
    expect(checkRecordGrowth(over, over, over)).toBeNull();
    const grown = checkRecordGrowth(100, MAX_SUBSCRIPTION_RECORD_CHARS + 1, MAX_SUBSCRIPTION_RECORD_CHARS + 1);
    if (grown === null) throw new Error("expected a refusal");
    expect(wire(grown)).toMatchObject({ status: 413, body: { error: { code: "PAYLOAD_TOO_LARGE" } } });
    expect(checkRecordGrowth(100, 200, 200)).toBeNull();
  });

  test("MAX_SUBSCRIPTION_BOOK_BYTES: growth past the book's bytes is 429 with Retry-After; shrinking or staying within is taken", () => {
    expect(checkBookBytes(900, 100, 200, 1_000)).toBeNull();
    expect(checkBookBytes(1_000, 300, 200, 1_000)).toBeNull(); // a smaller record, even in a full book
    expect(checkBookBytes(2_000, 300, 300, 1_000)).toBeNull(); // unchanged size, a book over a lowered bound
    const full = checkBookBytes(900, 100, 201, 1_000);
    if (full === null) throw new Error("expected a refusal");
    expect(wire(full)).toMatchObject({
      status: 429,
      headers: { "retry-after": "1" },
      body: { error: { code: "LIMIT_REACHED", limit: "MAX_SUBSCRIPTION_BOOK_BYTES", max: 1_000 } },
    });
  });
});
