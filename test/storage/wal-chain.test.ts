// Seal and replay: a sealed writer can never acknowledge again, and replay below the seal yields exactly
// what was acknowledged, in order, whatever the interleaving and whatever faults the store injects.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryStore, type StoreOperation } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { walKey } from "../../src/storage/keys.ts";
import { WalCorruptError, encodeWalObject } from "../../src/storage/wal-format.ts";
import { readChain, replayChain } from "../../src/storage/wal-chain.ts";
import { sealChain } from "../../src/storage/wal-seal.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { WalWriterFailedError } from "../../src/storage/wal-writer-bounds.ts";
import { propertyRuns } from "../support/property-runs.ts";
import { walBatch, walLabel } from "../support/wal-records.ts";

const NODE = "n1";
const noSleep = async (): Promise<void> => {};
const label = walLabel;
const records = walBatch;

type FaultStep = "ok" | "fail" | "lost_answer";

/**
 * Before each WAL operation, injects the next planned fault into the memory store (then "ok" forever);
 * `faultsByKey` counts the faults each key received.
 */
function faultPlanStore(memory: MemoryStore, plan: FaultStep[], faultsByKey: Map<string, number>): ObjectStore {
  let next = 0;
  const arm = (op: StoreOperation, key: string): void => {
    const step = key.startsWith("wal/") ? (plan[next++] ?? "ok") : "ok";
    if (step === "ok") return;
    memory.inject({ op, keyPrefix: key, kind: step });
    faultsByKey.set(key, (faultsByKey.get(key) ?? 0) + 1);
  };
  return {
    put: (k, b, o) => (arm("put", k), memory.put(k, b, o)),
    get: (k, r) => (arm("get", k), memory.get(k, r)),
    head: (k) => (arm("head", k), memory.head(k)),
    list: (p, o) => memory.list(p, o),
    delete: (k) => memory.delete(k),
  };
}

describe("replay", () => {
  it("replay yields exactly the acknowledged records, with lost answers and failures injected at random", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<FaultStep>("ok", "ok", "fail", "lost_answer"), { maxLength: 40 }),
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 3 }), awaitAfter: fc.boolean() }), { minLength: 1, maxLength: 15 }),
        fc.integer({ min: 2, max: 4 }),
        async (plan, appends, maxAttempts) => {
          const memory = new MemoryStore();
          const faultsByKey = new Map<string, number>();
          const writer = new WalWriter(faultPlanStore(memory, plan, faultsByKey), NODE, 3, 0, { maxAttempts, sleep: noSleep, maxInFlight: 1 });
          const acked: { seq: number; labels: string[] }[] = [];
          const rejected: string[] = [];
          let failure: WalWriterFailedError | undefined;
          let pending: Promise<void>[] = [];
          for (const [i, { count, awaitAfter }] of appends.entries()) {
            const batch = records(i, count);
            pending.push(
              writer.append(batch).then(
                (ack) => void acked.push({ ...ack, labels: batch.map(label) }),
                (error: unknown) => {
                  expect(error).toBeInstanceOf(WalWriterFailedError);
                  failure = error as WalWriterFailedError;
                  rejected.push(...batch.map(label));
                },
              ),
            );
            if (awaitAfter) await Promise.all(pending.splice(0));
          }
          await Promise.all(pending);
          pending = [];

          const { sealSeq } = await sealChain(memory, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 4 });
          const objects = await readChain(memory, { nodeId: NODE, fromSeq: 0, toSeq: sealSeq });
          const labels = objects.flatMap((o) => o.records.map(label));
          const ackedLabels = acked.flatMap((a) => a.labels);
          for (const ack of acked) {
            expect(objects.find((o) => o.seq === ack.seq)?.records.map(label)).toEqual(expect.arrayContaining(ack.labels));
          }
          if (writer.state === "open") {
            expect(labels).toEqual(ackedLabels);
          } else {
            // Only a spent retry budget fails the writer, and it leaves at most one object in doubt: the
            // batch in flight, which a seal settles.
            expect(writer.state).toBe("failed");
            expect(faultsByKey.get(walKey(NODE, failure!.inDoubtSeq))).toBeGreaterThanOrEqual(maxAttempts);
            expect(labels.slice(0, ackedLabels.length)).toEqual(ackedLabels);
            const extra = labels.slice(ackedLabels.length);
            expect(extra).toEqual(rejected.slice(0, extra.length));
            expect(objects.length).toBeLessThanOrEqual(new Set(acked.map((a) => a.seq)).size + 1);
          }
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it("names the missing key of a gap", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, NODE, 1, 0);
    for (let i = 0; i < 6; i++) await writer.append(records(i, 1));
    await store.delete(walKey(NODE, 2));
    const seen: number[] = [];
    const error = await (async () => {
      for await (const object of replayChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 6 })) seen.push(object.seq);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([0, 1]);
    expect(error).toBeInstanceOf(WalCorruptError);
    expect((error as WalCorruptError).key).toBe(walKey(NODE, 2));
    // Beyond the written chain is a gap too: replay never stops early in silence.
    await expect(readChain(store, { nodeId: NODE, fromSeq: 3, toSeq: 7 })).rejects.toMatchObject({ key: walKey(NODE, 6) });
  });

  it("names the key of a corrupt or misplaced object", async () => {
    const store = new MemoryStore();
    const writer = new WalWriter(store, NODE, 1, 0);
    for (let i = 0; i < 3; i++) await writer.append(records(i, 1));
    const body = (await store.get(walKey(NODE, 1))).body;
    body[body.length - 9]! ^= 0x10;
    await store.put(walKey(NODE, 1), body);
    await expect(readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 3 })).rejects.toMatchObject({
      name: "WalCorruptError",
      key: walKey(NODE, 1),
    });
    await store.put(walKey(NODE, 1), (await store.get(walKey(NODE, 2))).body); // a copy of seq 2 at seq 1
    await expect(readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 3 })).rejects.toMatchObject({
      key: walKey(NODE, 1),
      problem: expect.stringMatching(/misplaced/) as unknown,
    });
  });

  it("passes seals over, passes a fenced writer's garbage over (WR2), and refuses a new epoch without a seal (WR3)", async () => {
    const store = new MemoryStore();
    const data = (seq: number, nodeEpoch: number): Uint8Array =>
      encodeWalObject({ kind: "records", nodeId: NODE, nodeEpoch, seq, records: records(seq, 1) });
    const seal = (seq: number, sealEpoch: number): Uint8Array => encodeWalObject({ kind: "seal", nodeId: NODE, seq, sealedBy: "x", sealEpoch });
    await store.put(walKey(NODE, 0), data(0, 5));
    await store.put(walKey(NODE, 1), seal(1, 6));
    await store.put(walKey(NODE, 2), seal(2, 7));
    await store.put(walKey(NODE, 3), data(3, 7));
    expect((await readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 4 })).map((o) => [o.seq, o.nodeEpoch])).toEqual([
      [0, 5],
      [3, 7],
    ]);
    await store.put(walKey(NODE, 4), data(4, 6)); // epoch below the seal at 7: the writer it fenced left it
    const garbage: number[] = [];
    expect((await readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 5, onGarbage: (seq) => garbage.push(seq) })).map((o) => o.seq)).toEqual([0, 3]);
    expect(garbage).toEqual([4]);
    await store.put(walKey(NODE, 4), data(4, 8)); // a new epoch without a seal in between
    await expect(readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 5 })).rejects.toMatchObject({ key: walKey(NODE, 4) });
  });

  it("an empty range yields nothing and reads nothing", async () => {
    const store = new MemoryStore();
    expect(await readChain(store, { nodeId: NODE, fromSeq: 5, toSeq: 5 })).toEqual([]);
    expect(store.counts.get).toBe(0);
  });
});

