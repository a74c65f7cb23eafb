// Seal and replay: a sealed writer can never acknowledge again, and replay below the seal yields exactly
// what was acknowledged, in order, whatever the interleaving and whatever faults the store injects.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scheduledStore } from "../support/store-wrappers.ts";
import { MemoryStore, type StoreOperation } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { advanceCheckpoint } from "../../src/storage/checkpoint.ts";
import { walKey } from "../../src/storage/keys.ts";
import { StaleEpochError } from "../../src/storage/manifest.ts";
import type { WalRecord } from "../../src/storage/record-codec.ts";
import { WalCorruptError, encodeWalObject } from "../../src/storage/wal-format.ts";
import { readChain, replayChain, sealChain } from "../../src/storage/wal-chain.ts";
import { WalFencedError, WalWriter, WalWriterFailedError } from "../../src/storage/wal-writer.ts";
import { propertyRuns } from "../support/property-runs.ts";

const NODE = "n1";
const noSleep = async (): Promise<void> => {};
const decoder = new TextDecoder();
const label = (r: WalRecord): string => `${r.streamId}:${decoder.decode(r.data)}`;

function records(i: number, count: number): WalRecord[] {
  return Array.from({ length: count }, (_, j) => ({
    streamId: `s${i % 3}`,
    streamEpoch: 1,
    firstOffset: i * 100 + j,
    flags: 0,
    meta: new Uint8Array([i & 0xff]),
    data: new TextEncoder().encode(`${i}.${j}`),
  }));
}

async function replayed(store: ObjectStore, fromSeq: number, toSeq: number): Promise<string[]> {
  return (await readChain(store, { nodeId: NODE, fromSeq, toSeq })).flatMap((o) => o.records.map(label));
}


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

describe("seal", () => {
  it("a fenced old writer can never acknowledge after the seal, whatever the interleaving", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.nat({ max: 3 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(150, 1 << 20),
        async (s, earlierObjects, sizes, maxBatchBytes) => {
          const FROM = 4;
          const memory = new MemoryStore();
          // The chain already holds a few acknowledged objects of this incarnation.
          const old = new WalWriter(scheduledStore(s, memory), NODE, 10, FROM, { maxBatchBytes });
          const acked: { seq: number; labels: string[] }[] = [];
          for (let i = 0; i < earlierObjects; i++) {
            const earlier = records(100 + i, 1);
            acked.push({ ...(await s.waitFor(old.append(earlier))), labels: earlier.map(label) });
          }
          const outcomes = sizes.map(async (count, i) => {
            await s.schedule(Promise.resolve(), `append ${i}`);
            const batch = records(i, count);
            try {
              acked.push({ ...(await old.append(batch)), labels: batch.map(label) });
            } catch (error) {
              expect(error).toBeInstanceOf(WalFencedError);
            }
          });
          const sealing = (async () => {
            await s.schedule(Promise.resolve(), "seal");
            return sealChain(scheduledStore(s, memory), { nodeId: NODE, fromSeq: FROM, sealedBy: NODE, sealEpoch: 11 });
          })();
          const { sealSeq } = await s.waitFor(sealing);
          await s.waitFor(Promise.all(outcomes));

          // No acknowledgement at or above the seal, and none at all once it landed.
          for (const ack of acked) expect(ack.seq).toBeLessThan(sealSeq);
          await expect(s.waitFor(old.append(records(50, 1)))).rejects.toBeInstanceOf(WalFencedError);
          expect(old.state).toBe("fenced");
          // Replay below the seal is exactly the acknowledged records, in order, and nothing else.
          expect(await replayed(memory, FROM, sealSeq)).toEqual(acked.flatMap((a) => a.labels));

          // The next incarnation writes after the seal; a later replay passes the seal over.
          const next = new WalWriter(memory, NODE, 11, sealSeq + 1);
          const later = records(60, 2);
          await next.append(later);
          const second = await sealChain(memory, { nodeId: NODE, fromSeq: FROM, sealedBy: "n2", sealEpoch: 12 });
          expect(second.sealSeq).toBe(sealSeq + 2);
          expect(await replayed(memory, FROM, second.sealSeq)).toEqual([...acked.flatMap((a) => a.labels), ...later.map(label)]);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it("claims the lowest free seq: fromSeq on an empty chain, one past the last object otherwise", async () => {
    const store = new MemoryStore();
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 7, sealedBy: NODE, sealEpoch: 1 })).toEqual({ sealSeq: 7 });
    const writer = new WalWriter(store, NODE, 1, 8);
    await writer.append(records(1, 1));
    await writer.append(records(2, 1));
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 7, sealedBy: "n2", sealEpoch: 2 })).toEqual({ sealSeq: 10 });
    // Objects of other nodes (even with a prefix-like id) do not count.
    await new WalWriter(store, "n1-b", 1, 50).append(records(3, 1));
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 7, sealedBy: "n3", sealEpoch: 3 })).toEqual({ sealSeq: 11 });
  });

  it("is idempotent for the same sealer and epoch", async () => {
    const store = new MemoryStore();
    await new WalWriter(store, NODE, 1, 0).append(records(1, 1));
    const first = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 2 });
    const again = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 2 });
    expect(again).toEqual(first);
    expect(store.keys()).toHaveLength(2);
  });

  it("a seal on top is the sealer's own only if both its sealer and its epoch match: otherwise it seals again above", async () => {
    const store = new MemoryStore();
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 1 })).toEqual({ sealSeq: 0 });
    // The same node restarted at a higher epoch: the seal of its earlier incarnation does not fence that incarnation.
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 2 })).toEqual({ sealSeq: 1 });
    // Another sealer at the same epoch: not its seal either.
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 })).toEqual({ sealSeq: 2 });
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 })).toEqual({ sealSeq: 2 });
    expect(store.keys()).toHaveLength(3);
  });

  it("claims a wider window above when the old writer's last PUT lands first", async () => {
    const memory = new MemoryStore();
    const old = new WalWriter(memory, NODE, 1, 0);
    await old.append(records(1, 1));
    // The sealer lists (last object: 0) and, before its PUT at 1, the old writer lands seq 1 (once: the
    // sealer lists again after its seal, to find a writer above it).
    const racing = raceAfterFirstList(memory, async () => {
      await old.append(records(2, 1));
    });
    // Seq 1 lost, then the window [2, 4) is claimed: seals at 2 and 3, replay passes over the one at 2.
    expect(await sealChain(racing, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 })).toEqual({ sealSeq: 3 });
    expect(await replayed(memory, 0, 3)).toEqual([...records(1, 1), ...records(2, 1)].map(label));
    await expect(old.append(records(3, 1))).rejects.toBeInstanceOf(WalFencedError);
  });

  it("a window another, older sealer crossed (a start and a takeover sealing at once) is sealed again above; data there is corruption, a newer sealer refuses it", async () => {
    const seal = (seq: number, sealEpoch: number): Uint8Array => encodeWalObject({ kind: "seal", nodeId: NODE, seq, sealedBy: "n3", sealEpoch });
    const data = (seq: number): Uint8Array => encodeWalObject({ kind: "records", nodeId: NODE, nodeEpoch: 1, seq, records: records(seq, 1) });
    for (const [crossing, outcome] of [
      [seal(3, 2), "sealed above"],
      [data(3), WalCorruptError],
      [seal(3, 5), StaleEpochError],
    ] as const) {
      const memory = new MemoryStore();
      const old = new WalWriter(memory, NODE, 1, 0);
      await old.append(records(1, 1)); // seq 0
      // Round 0 aims at 1, which the old writer lands first; in round 1's window [2, 3], seq 3 is taken
      // just before this sealer's PUT there.
      const store = beforePut(memory, {
        [walKey(NODE, 1)]: async () => void (await old.append(records(2, 1))),
        [walKey(NODE, 3)]: () => memory.put(walKey(NODE, 3), crossing, { condition: { ifNoneMatch: "*" } }).then(() => undefined),
      });
      const sealing = sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 3 });
      if (outcome !== "sealed above") {
        await expect(sealing).rejects.toBeInstanceOf(outcome);
        continue;
      }
      const { sealSeq } = await sealing;
      expect(sealSeq).toBeGreaterThan(3);
      expect(await replayed(memory, 0, sealSeq)).toEqual([...records(1, 1), ...records(2, 1)].map(label));
      await expect(old.append(records(3, 1))).rejects.toBeInstanceOf(WalFencedError);
    }
  });

  it("invariant 5: a seal won on a seq the old writer freed below its moved checkpoint, with its data above, is sealed again above", async () => {
    const memory = new MemoryStore();
    const old = new WalWriter(memory, NODE, 1, 0);
    await old.append(records(1, 1)); // seq 0
    // Round 0 aims at 1, which the old writer lands first; before round 1's window [2, 3] is written, the old
    // writer lands 2 and 3, moves its checkpoint to 3 and frees 2: this sealer wins 2 and finds data at 3.
    const moveOn = async (): Promise<void> => {
      await old.append(records(3, 1)); // seq 2
      await old.append(records(4, 1)); // seq 3
      await advanceCheckpoint(memory, NODE, 1, 3);
      await memory.delete(walKey(NODE, 2));
    };
    let movedOn: Promise<void> | undefined;
    const store = beforePut(memory, {
      [walKey(NODE, 1)]: async () => void (await old.append(records(2, 1))),
      [walKey(NODE, 2)]: () => (movedOn ??= moveOn()),
      [walKey(NODE, 3)]: () => (movedOn ??= moveOn()),
    });
    const { sealSeq } = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 3 });
    expect(sealSeq).toBeGreaterThan(3);
    expect(await replayed(memory, 3, sealSeq)).toEqual(records(4, 1).map(label));
    await expect(old.append(records(5, 1))).rejects.toBeInstanceOf(WalFencedError);
  });

  it("refuses to seal above a newer owner's objects (a stale sealer must not fence it)", async () => {
    const store = new MemoryStore();
    await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 50 });
    await new WalWriter(store, NODE, 50, 1).append(records(1, 1));
    const error = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 49 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleEpochError);
    expect((error as StaleEpochError).currentEpoch).toBe(50);
    expect(store.keys()).toHaveLength(2);
  });
});

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
          const writer = new WalWriter(faultPlanStore(memory, plan, faultsByKey), NODE, 3, 0, { maxAttempts, sleep: noSleep });
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

  it("passes seals over but refuses data that no one-in-flight writer could have left", async () => {
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
    await store.put(walKey(NODE, 4), data(4, 6)); // epoch below the seal at 7
    await expect(readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 5 })).rejects.toMatchObject({ key: walKey(NODE, 4) });
    await store.put(walKey(NODE, 4), data(4, 8)); // a new epoch without a seal in between
    await expect(readChain(store, { nodeId: NODE, fromSeq: 0, toSeq: 5 })).rejects.toMatchObject({ key: walKey(NODE, 4) });
  });

  it("an empty range yields nothing and reads nothing", async () => {
    const store = new MemoryStore();
    expect(await readChain(store, { nodeId: NODE, fromSeq: 5, toSeq: 5 })).toEqual([]);
    expect(store.counts.get).toBe(0);
  });
});

describe("sealChain against a writer that frees seqs below its head", () => {
  it("invariant 5: a seal that lands on a seq the old writer's clean-up freed is followed by one above the writer's head", async () => {
    const memory = new MemoryStore();
    const old = new WalWriter(memory, NODE, 1, 0);
    await old.append(records(1, 1)); // seq 0
    // The sealer lists (last: 0) and aims at 1; meanwhile the old writer lands 1 and 2, compacts and frees 1.
    const racing = raceAfterFirstList(memory, async () => {
      await old.append(records(2, 1)); // seq 1
      await old.append(records(3, 1)); // seq 2
      await memory.delete(walKey(NODE, 1));
    });
    const { sealSeq } = await sealChain(racing, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 });
    expect(sealSeq).toBeGreaterThan(2);
    // The old writer's next PUT (seq 3) collides with a seal: it can never acknowledge again.
    await expect(old.append(records(4, 1))).rejects.toBeInstanceOf(WalFencedError);
  });
});

/** `memory`, whose first PUT of each key in `races` runs that race first (another writer taking the key). */
function beforePut(memory: MemoryStore, races: Record<string, () => Promise<void>>): ObjectStore {
  const pending = new Map(Object.entries(races));
  return {
    put: async (key, body, options) => {
      const race = pending.get(key);
      pending.delete(key);
      if (race !== undefined) await race();
      return memory.put(key, body, options);
    },
    get: memory.get.bind(memory),
    head: memory.head.bind(memory),
    delete: memory.delete.bind(memory),
    list: memory.list.bind(memory),
  };
}

/** `memory`, whose first list runs `race` after it answered (a writer moving on between a sealer's list and its PUTs). */
function raceAfterFirstList(memory: MemoryStore, race: () => Promise<void>): ObjectStore {
  let raced = false;
  return {
    put: memory.put.bind(memory),
    get: memory.get.bind(memory),
    head: memory.head.bind(memory),
    delete: memory.delete.bind(memory),
    list: async (prefix, options) => {
      const page = await memory.list(prefix, options);
      if (!raced) {
        raced = true;
        await race();
      }
      return page;
    },
  };
}
