// The seal, row by row (docs/storage-format.md, table WS), and its invariant over random interleavings of a
// writer with several objects in flight: the seal fences the writer, replay below it is exactly what the
// writer acknowledged, and the next writer, starting above it, never meets the fenced writer's late PUTs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interceptStore, scheduledStore } from "../support/store-wrappers.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { advanceCheckpoint } from "../../src/storage/checkpoint.ts";
import { parseWalKey, walKey } from "../../src/storage/keys.ts";
import { StaleEpochError } from "../../src/storage/manifest.ts";
import { WAL_IN_FLIGHT_CAP, encodeWalObject } from "../../src/storage/wal-format.ts";
import { readChain } from "../../src/storage/wal-chain.ts";
import { sealChain } from "../../src/storage/wal-seal.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { WalFencedError } from "../../src/storage/wal-writer-bounds.ts";
import { propertyRuns } from "../support/property-runs.ts";
import { walBatch, walLabel } from "../support/wal-records.ts";

const NODE = "n1";
const CAP = WAL_IN_FLIGHT_CAP;
const label = walLabel;
const records = walBatch;

async function replayed(store: ObjectStore, fromSeq: number, toSeq: number): Promise<string[]> {
  return (await readChain(store, { nodeId: NODE, fromSeq, toSeq })).flatMap((o) => o.records.map(label));
}

const data = (seq: number, nodeEpoch = 1): Uint8Array => encodeWalObject({ kind: "records", nodeId: NODE, nodeEpoch, seq, records: records(seq, 1) });
const seal = (seq: number, sealEpoch: number, sealedBy = "n3"): Uint8Array => encodeWalObject({ kind: "seal", nodeId: NODE, seq, sealedBy, sealEpoch });

describe("seal (table WS)", () => {
  it("a fenced writer with several objects in flight never acknowledges after the seal; replay is exactly its acknowledgements; the next writer never meets its late PUTs (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.nat({ max: 3 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 24 }),
        fc.constantFrom(1, 2, 4, CAP),
        fc.constantFrom(150, 1 << 20),
        fc.uniqueArray(fc.nat({ max: 12 }), { maxLength: 3 }),
        async (s, earlierObjects, sizes, maxInFlight, maxBatchBytes, slow) => {
          const FROM = 4;
          const memory = new MemoryStore();
          // Some of the old writer's PUTs are slow: they reach the store only once the seal is done (a hole
          // the sealer sees, landing after the recovery's replay).
          let sealed!: () => void;
          const sealDone = new Promise<void>((resolve) => (sealed = resolve));
          const slowSeqs = new Set(slow.map((k) => FROM + earlierObjects + k));
          const oldStore = interceptStore(scheduledStore(s, memory), async (op, key, run) => {
            if (op === "put" && slowSeqs.has(parseWalKey(key).seq)) await sealDone;
            return run();
          });
          const old = new WalWriter(oldStore, NODE, 10, FROM, { maxBatchBytes, maxInFlight, now: () => 0 });
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
          sealed();
          // Replayed at once, as a recovery does: before the fenced writer's late PUTs land.
          const replayedAtSeal = await replayed(memory, FROM, sealSeq);

          // The next incarnation writes above the seal while the old writer's PUTs are still on their way,
          // interleaved with them: more objects than the old writer could have in flight, and none of them
          // meets one of its PUTs.
          const next = new WalWriter(scheduledStore(s, memory), NODE, 11, sealSeq + 1, { maxInFlight: 1, now: () => 0 });
          const later: string[] = [];
          const nextWrites = (async () => {
            for (let i = 0; i < CAP + 2; i++) {
              const batch = records(60 + i, 1);
              await next.append(batch);
              later.push(...batch.map(label));
            }
          })();
          await s.waitFor(Promise.all([...outcomes, nextWrites]));

          for (const ack of acked) expect(ack.seq).toBeLessThan(sealSeq);
          await expect(s.waitFor(old.append(records(50, 1)))).rejects.toBeInstanceOf(WalFencedError);
          expect(old.state).toBe("fenced");
          expect(next.state).toBe("open");
          const ackedLabels = [...acked].sort((a, b) => a.seq - b.seq).flatMap((a) => a.labels);
          expect(replayedAtSeal).toEqual(ackedLabels);
          expect(await replayed(memory, FROM, sealSeq)).toEqual(ackedLabels);

          // A later seal replays across both incarnations, passing seals and garbage over.
          const second = await sealChain(memory, { nodeId: NODE, fromSeq: FROM, sealedBy: "n2", sealEpoch: 12 });
          expect(second.sealSeq).toBe(next.nextSeq + CAP - 1);
          expect(await replayed(memory, FROM, second.sealSeq)).toEqual([...ackedLabels, ...later]);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it("WS3: a quiet chain is sealed over [m, m + cap), m its lowest missing seq; the top seal is returned", async () => {
    const store = new MemoryStore();
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 7, sealedBy: NODE, sealEpoch: 1 })).toMatchObject({ sealSeq: 7 + CAP - 1 });
    const writer = new WalWriter(store, NODE, 1, 7 + CAP);
    await writer.append(records(1, 1));
    await writer.append(records(2, 1));
    const m = 7 + CAP + 2;
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 7, sealedBy: "n2", sealEpoch: 2 })).toMatchObject({ sealSeq: m + CAP - 1 });
    // Objects of other nodes (even with a prefix-like id) do not count.
    await new WalWriter(store, "n1-b", 1, 500).append(records(3, 1));
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 7, sealedBy: "n3", sealEpoch: 3 })).toMatchObject({ sealSeq: m + 2 * CAP - 1 });
  });

  it("WS3: a hole below landed data is sealed at the hole; the data above it is the fenced writer's garbage, passed over", async () => {
    const memory = new MemoryStore();
    for (const seq of [0, 1, 3, 4]) await memory.put(walKey(NODE, seq), data(seq));
    const { sealSeq } = await sealChain(memory, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 });
    // Seals at 2 and at every free seq up to 2 + cap: the writer fenced at 2 never issued 2 + cap or above.
    expect(sealSeq).toBe(2 + CAP - 1);
    expect(await replayed(memory, 0, sealSeq)).toEqual([...records(0, 1), ...records(1, 1)].map(label));
    // Its late PUT below 2 + cap meets an occupied seq; the next writer starts above.
    await expect(memory.put(walKey(NODE, 9), data(9), { condition: { ifNoneMatch: "*" } })).rejects.toMatchObject({ kind: "precondition_failed" });
  });

  it("WS3: a writer that lands the lowest missing seq between the sealer's list and its claims, then issues further, is fenced at the first seal won; every seq it could still land is claimed", async () => {
    const memory = new MemoryStore();
    await memory.put(walKey(NODE, 0), data(0));
    // After the list (lowest missing: 1), the writer lands 1, acknowledges it, and lands 1 + cap, the last
    // seq its limit allows while 2 is unacknowledged.
    const racing = raceAfterFirstList(memory, async () => {
      await memory.put(walKey(NODE, 1), data(1));
      await memory.put(walKey(NODE, 1 + CAP), data(1 + CAP));
    });
    const { sealSeq } = await sealChain(racing, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 });
    // Fenced at 2: its seqs end below 2 + cap, and the top must be the sealer's own, so one more above.
    expect(sealSeq).toBe(2 + CAP);
    expect(await replayed(memory, 0, sealSeq)).toEqual([...records(0, 1), ...records(1, 1)].map(label));
    await expect(new WalWriter(memory, NODE, 2, sealSeq + 1).append(records(5, 1))).resolves.toEqual({ seq: sealSeq + 1 });
  });

  it("WS2: a repeated call returns its own top seal on a dense chain, and seals again otherwise", async () => {
    const store = new MemoryStore();
    await new WalWriter(store, NODE, 1, 0).append(records(1, 1));
    const first = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 2 });
    const again = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 2 });
    expect(again).toEqual(first);
    expect(store.keys()).toHaveLength(1 + CAP);
    // The seal on top is another's (same node, earlier epoch; or same epoch, other sealer): seal above.
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 3 })).toMatchObject({ sealSeq: first.sealSeq + CAP });
    expect(await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 3 })).toMatchObject({ sealSeq: first.sealSeq + 2 * CAP });
    // Our own seal on top, but a hole below it: a later sealer would seal at the hole, off our path.
    await store.delete(walKey(NODE, 3));
    expect((await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 3 })).sealSeq).toBeGreaterThan(first.sealSeq + 2 * CAP);
    expect(store.keys()).toContain(walKey(NODE, 3));
  });

  it("WS5: the top of the sealed range is always the sealer's own seal, claimed above the writer's reach if garbage took it", async () => {
    const memory = new MemoryStore();
    await memory.put(walKey(NODE, 0), data(0));
    // The fenced writer's PUT at cap (the top of the first window) lands first: the sealer claims one above.
    const store = beforePut(memory, { [walKey(NODE, CAP)]: () => memory.put(walKey(NODE, CAP), data(CAP)).then(() => undefined) });
    const { sealSeq } = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 });
    expect(sealSeq).toBe(CAP + 1);
    expect(await replayed(memory, 0, sealSeq)).toEqual(records(0, 1).map(label));
  });

  it("WS1: a crossing older sealer's seals are passed; a newer one's, or a newer writer's data, refuse the seal", async () => {
    for (const [crossing, outcome] of [
      [seal(3, 2), "sealed"],
      [data(3, 1), "sealed"],
      [seal(3, 5), StaleEpochError],
      [data(3, 5), StaleEpochError],
    ] as const) {
      const memory = new MemoryStore();
      const old = new WalWriter(memory, NODE, 1, 0, { maxInFlight: 1 });
      await old.append(records(1, 1)); // seq 0
      // Seq 3, inside the first window, is taken just before this sealer's PUT there.
      const store = beforePut(memory, { [walKey(NODE, 3)]: () => memory.put(walKey(NODE, 3), crossing, { condition: { ifNoneMatch: "*" } }).then(() => undefined) });
      const sealing = sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 3 });
      if (outcome !== "sealed") {
        await expect(sealing).rejects.toBeInstanceOf(outcome);
        continue;
      }
      const { sealSeq } = await sealing;
      expect(sealSeq).toBe(CAP);
      expect(await replayed(memory, 0, sealSeq)).toEqual(records(1, 1).map(label));
      await expect(old.append(records(3, 1))).rejects.toBeInstanceOf(WalFencedError);
    }
  });

  it("WS1: refuses to seal above a newer owner's objects (a stale sealer must not fence it) and writes nothing", async () => {
    const store = new MemoryStore();
    const { sealSeq } = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: NODE, sealEpoch: 50 });
    await new WalWriter(store, NODE, 50, sealSeq + 1).append(records(1, 1));
    const keys = store.keys();
    const error = await sealChain(store, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 49 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleEpochError);
    expect((error as StaleEpochError).currentEpoch).toBe(50);
    expect(store.keys()).toEqual(keys);
  });

  it("WS6: a writer that takes the whole first window is sealed in a wider one above", async () => {
    const memory = new MemoryStore();
    await memory.put(walKey(NODE, 0), data(0));
    // Between the sealer's list and its PUTs, the writer lands every seq of [1, 1 + cap).
    const racing = raceAfterFirstList(memory, async () => {
      for (let seq = 1; seq <= CAP; seq++) await memory.put(walKey(NODE, seq), data(seq));
    });
    const { sealSeq } = await sealChain(racing, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 2 });
    expect(sealSeq).toBe(CAP + 1 + 2 * CAP - 1);
    expect(await replayed(memory, 0, sealSeq)).toHaveLength(CAP + 1);
  });

  it("WS7 (invariant 5): a seal won on a seq the fenced writer's compaction freed below its moved checkpoint is sealed again above it", async () => {
    const memory = new MemoryStore();
    const old = new WalWriter(memory, NODE, 1, 0, { maxInFlight: 1 });
    await old.append(records(1, 1)); // seq 0
    // The sealer lists (lowest missing: 1); before its PUTs the writer lands 1 to cap + 2, moves its
    // checkpoint to cap + 2 and frees everything below: the sealer wins seqs the writer had left behind.
    const racing = raceAfterFirstList(memory, async () => {
      for (let i = 2; i <= CAP + 3; i++) await old.append(records(i, 1));
      await advanceCheckpoint(memory, NODE, 1, CAP + 2);
      for (let seq = 0; seq < CAP + 2; seq++) await memory.delete(walKey(NODE, seq));
    });
    const { fromSeq, sealSeq } = await sealChain(racing, { nodeId: NODE, fromSeq: 0, sealedBy: "n2", sealEpoch: 3 });
    // Replay starts at the moved checkpoint: the first round's seals lie below it (on the freed seqs).
    expect(fromSeq).toBe(CAP + 2);
    expect(sealSeq).toBeGreaterThan(CAP + 2);
    expect(await replayed(memory, fromSeq, sealSeq)).toEqual(records(CAP + 3, 1).map(label));
    await expect(old.append(records(99, 1))).rejects.toBeInstanceOf(WalFencedError);
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
