// Backoff: 503 and 429 are retried after the server's Retry-After at least, with a doubling jittered
// backoff up to its cap, and given up after MAX_ATTEMPTS; a request that is not idempotent is not sent
// again after a lost answer. The sleep is virtual: it records each delay and returns at once.
import { describe, expect, it } from "vitest";
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, TableWriteError } from "../../src/client/index.ts";
import { backoffDelayMs } from "../../src/client/retry.ts";
import { error } from "./fake-table-service.ts";
import { ITEMS, harness, writesSeen } from "./harness.ts";

const RETRY_AFTER_S = 2;
const unavailable = (): Response => error(503, "unavailable", "the bucket is opening", undefined, { "retry-after": String(RETRY_AFTER_S) });

describe("retrying refusals that say later", () => {
  it("a 503 with Retry-After is retried after at least Retry-After, the batch then written once", async () => {
    const { service, client, sleeps } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    service.fault((request) => request.url.endsWith("/write"), unavailable, 2);
    const result = await table.write([{ upsert: { id: "k", v: 1 } }]);

    expect(sleeps.length).toBe(2);
    for (const delayMs of sleeps) expect(delayMs).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1_000);
    expect(writesSeen(service).map((write) => write.seq)).toEqual([0, 0, 0]);
    expect(result.buckets[0]).toMatchObject({ count: 1, duplicate: false });
  });

  it("gives up after MAX_ATTEMPTS attempts with the last refusal, having slept between each", async () => {
    const { service, client, sleeps } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    service.fault((request) => request.url.endsWith("/write"), unavailable, Infinity);
    const refused = await table.write([{ upsert: { id: "k", v: 1 } }]).catch((caught: unknown) => caught);

    expect(refused).toBeInstanceOf(TableWriteError);
    expect(refused).toMatchObject({ code: "unavailable", status: 503, retryable: true });
    expect(writesSeen(service).length).toBe(MAX_ATTEMPTS);
    expect(sleeps.length).toBe(MAX_ATTEMPTS - 1);
    for (const delayMs of sleeps) {
      expect(delayMs).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1_000);
      expect(delayMs).toBeLessThanOrEqual(Math.max(BACKOFF_CAP_MS, RETRY_AFTER_S * 1_000));
    }
  });

  it("a 429 without Retry-After backs off by the doubling schedule", async () => {
    const { service, client, sleeps } = harness({ random: () => 0 });
    const table = client.table("items");
    await table.create(ITEMS);
    service.fault((request) => request.url.endsWith("/write"), () => error(429, "limit_reached", "too many batches in flight"), 3);
    await table.write([{ upsert: { id: "k", v: 1 } }]);
    // With the jitter at 0, each delay is the lower half of its doubling step.
    expect(sleeps).toEqual([0, 1, 2].map((retry) => Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry) / 2));
  });

  it("a DELETE whose answer is lost is not sent again", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    service.fault((request) => request.method === "DELETE", "drop-answer", 1);
    const lost = await table.drop().catch((caught: unknown) => caught);
    expect(lost).toMatchObject({ code: "network_error", status: null, outcomeUnknown: true });
    expect(service.seen.filter((request) => request.method === "DELETE").length).toBe(1);
  });
});

describe("the backoff schedule", () => {
  it("doubles from BACKOFF_BASE_MS up to BACKOFF_CAP_MS, jittered within the upper half of each step", () => {
    for (let retry = 0; retry < 12; retry++) {
      const stepMs = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
      expect(backoffDelayMs(retry, null, () => 0)).toBe(stepMs / 2);
      expect(backoffDelayMs(retry, null, () => 0.999_999)).toBeLessThanOrEqual(stepMs);
      expect(backoffDelayMs(retry, null, () => 0.999_999)).toBeGreaterThan(stepMs * 0.99);
    }
  });

  it("waits at least Retry-After, but never longer than MAX_RETRY_AFTER_MS for it", () => {
    expect(backoffDelayMs(0, 3_000, () => 0)).toBe(3_000);
    expect(backoffDelayMs(0, MAX_RETRY_AFTER_MS * 10, () => 0)).toBe(MAX_RETRY_AFTER_MS);
  });
});
