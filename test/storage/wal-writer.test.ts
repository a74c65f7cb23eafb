// The WAL writer: group commit with exactly one PUT in flight, acknowledgement only after the object landed
// and strictly in seq order, fencing on a lost race, and lost answers resolved by reading the key back.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { ObjectStoreError } from "../../src/storage/object-store.ts";
import { GatedStore } from "../support/gated-store.ts";
import { walKey } from "../../src/storage/keys.ts";
import { InvalidRecordError, type WalRecord } from "../../src/storage/record-codec.ts";
import { decodeWalObject, encodeWalObject, walObjectOverheadBytes, walRecordBytes } from "../../src/storage/wal-format.ts";
import { readChain } from "../../src/storage/wal-chain.ts";
import { sealChain } from "../../src/storage/wal-seal.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { WalDeadlineError, WalFencedError, WalWriterFailedError } from "../../src/storage/wal-writer-bounds.ts";
import { putCreateOnce } from "../../src/storage/create-once.ts";
import { resolveRetry } from "../../src/storage/retry-policy.ts";
import { rejection, scheduledStore } from "../support/store-wrappers.ts";
import { propertyRuns } from "../support/property-runs.ts";

const noSleep = async (): Promise<void> => {};
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

function record(label: string, streamId = "s1"): WalRecord {
  return { streamId, streamEpoch: 1, firstOffset: 0, flags: 0, meta: new Uint8Array(0), data: text(label) };
}

describe("WalWriter group commit", () => {
  it("a lone append on an idle writer costs exactly one PUT", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, "n1", 1, 0);
    expect(await writer.append([record("a")])).toEqual({ seq: 0 });
    expect(store.counts).toMatchObject({ put: 1, get: 0, head: 0, list: 0 });
    expect(await writer.append([record("b")])).toEqual({ seq: 1 });
    expect(store.counts.put).toBe(2);
    expect(store.keys()).toEqual([walKey("n1", 0), walKey("n1", 1)]);
    expect(writer.stats).toMatchObject({ objectsWritten: 2, recordsWritten: 2, appendsAcknowledged: 2, retries: 0 });
    // bytesWritten is what landed: the two objects' sizes.
    const landed = (await store.get(walKey("n1", 0))).body.byteLength + (await store.get(walKey("n1", 1))).body.byteLength;
    expect(writer.stats.bytesWritten).toBe(landed);
  });

  it("with one object in flight (WAL_MAX_IN_FLIGHT=1), appends arriving while it is in flight share the next object: 101 appends, 2 PUTs", async () => {
    const memory = new MemoryStore();
    const store = new GatedStore(memory);
    const writer = new WalWriter(store, "n1", 1, 5, { maxInFlight: 1 });
    const order: number[] = [];
    const first = writer.append([record("first")]).then((ack) => (order.push(0), ack));
    await tick();
    expect(store.pendingPuts).toBe(1);
    const rest = Array.from({ length: 100 }, (_, i) => writer.append([record(`r${i}`)]).then((ack) => (order.push(i + 1), ack)));
    await tick();
    expect(store.pendingPuts).toBe(1); // still only the first object in flight
    store.open();
    const acks = await Promise.all([first, ...rest]);
    expect(memory.counts.put).toBe(2);
    expect(store.maxInFlight).toBe(1);
    expect(acks.map((a) => a.seq)).toEqual([5, ...Array<number>(100).fill(6)]);
    expect(order).toEqual(Array.from({ length: 101 }, (_, i) => i));
    const second = decodeWalObject((await memory.get(walKey("n1", 6))).body, walKey("n1", 6));
    expect(second.kind === "records" && second.records.map((r) => new TextDecoder().decode(r.data))).toEqual(
      Array.from({ length: 100 }, (_, i) => `r${i}`),
    );
  });

  it("appends made in the same tick on an idle writer go out together", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, "n1", 1, 0);
    const acks = await Promise.all([writer.append([record("a")]), writer.append([record("b")]), writer.append([record("c")])]);
    expect(acks).toEqual([{ seq: 0 }, { seq: 0 }, { seq: 0 }]);
    expect(store.counts.put).toBe(1);
  });

  it("splits a backlog above maxBatchBytes into consecutive objects without splitting an append", async () => {
    const memory = new MemoryStore();
    const store = new GatedStore(memory);
    const one = walRecordBytes(record("x".repeat(100)));
    const maxBatchBytes = walObjectOverheadBytes("n1") + 3 * one;
    const writer = new WalWriter(store, "n1", 1, 0, { maxBatchBytes, maxInFlight: 1 });
    const appends = [writer.append([record("0".repeat(100))])];
    await tick();
    for (let i = 1; i <= 7; i++) appends.push(writer.append([record(String(i % 10).repeat(100))]));
    appends.push(writer.append([record("big".repeat(100)), record("y".repeat(100)), record("z".repeat(100)), record("w".repeat(100))]));
    store.open();
    const seqs = (await Promise.all(appends)).map((a) => a.seq);
    // object 0: the first append; then 7 appends in 3 + 3 + 1 (+ nothing fits next to the big one); the big
    // append (4 records, over the bound) goes alone.
    expect(seqs).toEqual([0, 1, 1, 1, 2, 2, 2, 3, 4]);
    for (const key of memory.keys().slice(0, 4)) expect((await memory.get(key)).size).toBeLessThanOrEqual(maxBatchBytes);
    expect((await memory.get(walKey("n1", 4))).size).toBeGreaterThan(maxBatchBytes);
    expect(store.maxInFlight).toBe(1);
  });

  it("acks resolve in call order and seq order with up to WAL_MAX_IN_FLIGHT objects landing in any order, whatever the timing (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 15 }),
        fc.constantFrom(200, 400, 1 << 20),
        fc.constantFrom(1, 2, 4, 8),
        async (s, sizes, maxBatchBytes, maxInFlight) => {
          const memory = new MemoryStore();
          const stats = { inFlight: 0, maxInFlight: 0 };
          // A clock that stands still: no round trip is observed, so no object is held back on a timer.
          const writer = new WalWriter(scheduledStore(s, memory, stats), "n1", 1, 0, { maxBatchBytes, maxInFlight, now: () => 0 });
          const called: number[] = [];
          const resolved: { i: number; seq: number }[] = [];
          const appends = sizes.map(async (count, i) => {
            await s.schedule(Promise.resolve(), `append ${i}`);
            called.push(i);
            const records = Array.from({ length: count }, (_, j) => record(`${i}.${j}`, `s${i % 3}`));
            const { seq } = await writer.append(records);
            resolved.push({ i, seq });
          });
          await s.waitFor(Promise.all(appends));
          expect(stats.maxInFlight).toBeLessThanOrEqual(maxInFlight);
          expect(resolved.map((r) => r.i)).toEqual(called);
          const seqs = resolved.map((r) => r.seq);
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
          const objects = await readChain(memory, { nodeId: "n1", fromSeq: 0, toSeq: writer.nextSeq });
          expect(objects.map((o) => o.seq)).toEqual([...new Set(seqs)]);
          const labels = objects.flatMap((o) => o.records.map((r) => new TextDecoder().decode(r.data)));
          expect(labels).toEqual(called.flatMap((i) => Array.from({ length: sizes[i]! }, (_, j) => `${i}.${j}`)));
        },
      ),
      { numRuns: propertyRuns(150) },
    );
  });
});

describe("WalWriter failures", () => {
  it("a lost answer to a conditional PUT neither duplicates nor loses a WAL object", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, "n1", 1, 0, { sleep: noSleep });
    store.inject({ op: "put", keyPrefix: "wal/", kind: "lost_answer" });
    expect(await writer.append([record("a")])).toEqual({ seq: 0 });
    // It landed; the read-back found our bytes, so nothing was sent again.
    expect(store.counts).toMatchObject({ put: 1, get: 1 });
    expect(await writer.append([record("b")])).toEqual({ seq: 1 });
    expect(store.keys()).toEqual([walKey("n1", 0), walKey("n1", 1)]);
    const objects = await readChain(store, { nodeId: "n1", fromSeq: 0, toSeq: 2 });
    expect(objects.map((o) => o.records.map((r) => new TextDecoder().decode(r.data)))).toEqual([["a"], ["b"]]);
    expect(writer.stats.retries).toBe(1);
  });

  it("a PUT that failed without landing is sent again after the read-back finds nothing", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, "n1", 1, 0, { sleep: noSleep });
    store.inject({ op: "put", keyPrefix: "wal/", kind: "fail", times: 2 });
    store.inject({ op: "get", keyPrefix: "wal/", kind: "fail" });
    expect(await writer.append([record("a")])).toEqual({ seq: 0 });
    // put ✗, get ✗, get (absent), put ✗, get (absent), put ✓: every resend preceded by a read-back.
    expect(store.counts).toMatchObject({ put: 3, get: 3 });
    expect(writer.stats.retries).toBe(3);
    expect(store.keys()).toEqual([walKey("n1", 0)]);
  });

  it("a retried PUT whose seq was sealed in between is fenced, not acknowledged", async () => {
    const store = new MemoryStore();
    const sleep = async (): Promise<void> => {
      await sealChain(store, { nodeId: "n1", fromSeq: 0, sealedBy: "n2", sealEpoch: 2 });
    };
    const writer = new WalWriter(store, "n1", 1, 0, { sleep });
    store.inject({ op: "put", keyPrefix: "wal/", kind: "fail" });
    const error = await rejection(writer.append([record("a")]));
    expect(error).toBeInstanceOf(WalFencedError);
    expect(writer.state).toBe("fenced");
    const seal = decodeWalObject((await store.get(walKey("n1", 0))).body, walKey("n1", 0));
    expect(seal).toMatchObject({ kind: "seal", sealedBy: "n2", sealEpoch: 2 });
  });

  it("a lost race fences the writer: the batch in flight, the queue and every later append reject", async () => {
    const memory = new MemoryStore();
    const store = new GatedStore(memory);
    const writer = new WalWriter(store, "n1", 1, 3, { maxInFlight: 1 });
    const inFlight = writer.append([record("a")]);
    await tick();
    const queued = writer.append([record("b")]);
    await memory.put(walKey("n1", 3), encodeWalObject({ kind: "seal", nodeId: "n1", seq: 3, sealedBy: "n1", sealEpoch: 2 }));
    store.open();
    expect(await rejection(inFlight)).toBeInstanceOf(WalFencedError);
    expect(await rejection(queued)).toBeInstanceOf(WalFencedError);
    expect(await rejection(writer.append([record("c")]))).toBeInstanceOf(WalFencedError);
    expect(writer.state).toBe("fenced");
    expect(writer.nextSeq).toBe(3);
    expect(memory.counts.put).toBe(2); // the seal and the writer's losing PUT: nothing after fencing
    expect(writer.stats.appendsAcknowledged).toBe(0);
  });

  it("after the retry budget the writer fails, names the seq in doubt, and never acknowledges again", async () => {
    const store = new MemoryStore();
    const waits: number[] = [];
    const writer = new WalWriter(store, "n1", 1, 0, { maxAttempts: 3, sleep: async (ms) => void waits.push(ms) });
    expect(await writer.append([record("a")])).toEqual({ seq: 0 });
    store.inject({ op: "*", keyPrefix: "wal/", kind: "fail", times: Infinity });
    const error = await rejection(writer.append([record("b")]));
    expect(error).toBeInstanceOf(WalWriterFailedError);
    expect((error as WalWriterFailedError).inDoubtSeq).toBe(1);
    expect(waits).toEqual([50, 100]);
    store.clearFaults();
    expect(await rejection(writer.append([record("c")]))).toBe(error);
    expect(writer.state).toBe("failed");
    expect(store.keys()).toEqual([walKey("n1", 0)]);
  });

  it("a fatal store error fails the writer at once, without retrying", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, "n1", 1, 0, { sleep: noSleep });
    store.inject({ op: "put", kind: "fail", errorKind: "fatal" });
    const error = await rejection(writer.append([record("a")]));
    expect(error).toBeInstanceOf(WalWriterFailedError);
    expect((error as Error).cause).toBeInstanceOf(ObjectStoreError);
    expect(store.counts.put).toBe(1);
    expect(writer.state).toBe("failed");
  });

  it("rejects invalid appends without touching the writer", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, "n1", 1, 0);
    expect(await rejection(writer.append([]))).toBeInstanceOf(InvalidRecordError);
    expect(await rejection(writer.append([{ ...record("a"), firstOffset: -1 }]))).toBeInstanceOf(InvalidRecordError);
    expect(store.counts.put).toBe(0);
    expect(await writer.append([record("a")])).toEqual({ seq: 0 });
    expect(() => new WalWriter(store, "", 1, 0)).toThrow();
    expect(() => new WalWriter(store, "n1", 1, -1)).toThrow();
  });
});

describe("WalWriter bounds (MAX_WAL_QUEUE_BYTES, WAL_BATCH_DEADLINE_MS)", () => {
  it("queuedBytes counts appends until their object is acknowledged or rejected", async () => {
    const gated = new GatedStore(new MemoryStore());
    const writer = new WalWriter(gated, "n1", 1, 0, { sleep: noSleep });
    const first = writer.append([record("abc")]);
    const second = writer.append([record("defgh")]);
    expect(writer.queuedBytes).toBe(walRecordBytes(record("abc")) + walRecordBytes(record("defgh")));
    gated.open();
    await Promise.all([first, second]);
    expect(writer.queuedBytes).toBe(0);
  });

  it("one deadline per object replaces the retry count: a store failing retryably keeps being retried until WAL_BATCH_DEADLINE_MS, then the writer fails with the seq in doubt", async () => {
    const store = new MemoryStore();
    // Each backoff yields one event-loop turn; the deadline is a real (short) timer.
    const writer = new WalWriter(store, "n1", 1, 0, { batchDeadlineMs: 30, sleep: tick });
    store.inject({ op: "*", keyPrefix: "wal/", kind: "fail", times: Infinity });
    const error = await rejection(writer.append([record("a")]));
    expect(error).toBeInstanceOf(WalWriterFailedError);
    expect((error as WalWriterFailedError).inDoubtSeq).toBe(0);
    expect((error as Error).cause).toBeInstanceOf(WalDeadlineError);
    // More attempts (a PUT, then read-backs) than the default budget of 4: the deadline, not a count, ended them.
    expect(store.counts.put + store.counts.get).toBeGreaterThan(4);
    const requestsAtStop = store.counts.put + store.counts.get;
    for (let turn = 0; turn < 10; turn++) await tick();
    expect(store.counts.put + store.counts.get).toBe(requestsAtStop); // nothing is retried after the deadline
    expect(writer.queuedBytes).toBe(0);
  });

  it("a PUT that hangs past the deadline is given up on at the deadline", async () => {
    let release!: () => void;
    const hung = new Promise<void>((resolve) => (release = resolve));
    const store = new MemoryStore({ sleep: () => hung });
    store.inject({ op: "put", keyPrefix: "wal/", kind: "delay", delayMs: 1 });
    const writer = new WalWriter(store, "n1", 1, 0, { batchDeadlineMs: 20 });
    const error = await rejection(writer.append([record("a")]));
    expect((error as Error).cause).toBeInstanceOf(WalDeadlineError);
    expect(writer.state).toBe("failed");
    release();
  });

  it("putCreateOnce stops at an aborted deadline instead of sending again", async () => {
    const store = new MemoryStore();
    store.inject({ op: "put", kind: "fail", times: Infinity });
    const controller = new AbortController();
    const retry = resolveRetry({ maxAttempts: Number.POSITIVE_INFINITY, sleep: async () => controller.abort(new Error("deadline")) });
    await expect(putCreateOnce(store, "k", text("x"), retry, () => {}, controller.signal)).rejects.toThrow("deadline");
    expect(store.counts.put).toBe(1);
  });
});
