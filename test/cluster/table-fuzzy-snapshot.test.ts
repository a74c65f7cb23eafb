// S-P2: a snapshot written a part at a time while writes go on (tables/snapshot-store.ts, writeSnapshotOf:
// the rows read from the tablet in key order, batches applied between the parts), restored and replayed
// from the mark read before its first row, equals the tablet after every batch. The changelog's records are
// whole images and applying them is idempotent, which is what makes such a fuzzy snapshot sufficient.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeKey } from "../../src/core/tables/key-encoding.ts";
import type { KeyedRecord } from "../../src/core/tables/changelog.ts";
import { openBucket, type BucketState } from "../../src/core/tables/tablet.ts";
import { netChanges, takeAcknowledged } from "../../src/core/tables/tablet-apply.ts";
import { writeStep, type WriteOp } from "../../src/core/tables/tablet-write.ts";
import { MemoryTabletStorage } from "../support/memory-tablet-storage.ts";
import { TabletRowsView } from "../../src/node/tables/tablet-rows-view.ts";
import { restoreInto, writeSnapshotOf } from "../../src/node/tables/snapshot-store.ts";
import type { BucketTablet } from "../../src/ports/tablet-storage.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";

const KEYS = 40;
const op = fc.oneof(
  fc.record({ kind: fc.constant("upsert" as const), key: fc.nat(KEYS - 1), v: fc.nat(3) }),
  fc.record({ kind: fc.constant("delete" as const), key: fc.nat(KEYS - 1) }),
);
const batches = fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 30 });

function toOp(raw: { kind: "upsert" | "delete"; key: number; v?: number }): WriteOp {
  const key = encodeKey([raw.key]);
  return raw.kind === "delete" ? { delete: key } : { upsert: { id: raw.key, v: raw.v ?? 0 }, key };
}

/** A leader's bucket over a stored tablet: each batch through the write step, acknowledged, applied. */
class Leader {
  readonly records: KeyedRecord[] = [];
  private state: BucketState;

  constructor(readonly tablet: BucketTablet) {
    this.state = openBucket({ rows: new TabletRowsView(tablet), appliedOffset: 0 });
  }

  write(ops: readonly WriteOp[]): void {
    const step = writeStep(this.state, "primary-key", ops);
    if (!step.ok) throw new Error(step.error.message);
    const taken = takeAcknowledged(step.value.state, step.value.batch.batchId);
    if (!taken.ok) throw new Error(taken.error.message);
    const changes = netChanges(taken.value.records);
    if (!changes.ok) throw new Error(changes.error.message);
    this.records.push(...taken.value.records);
    this.state = taken.value.state;
    // The position stands for the stream's bytes: one per record is enough here.
    this.tablet.apply(changes.value, { appliedOffset: this.records.length, appliedPosition: this.records.length });
  }
}

/** The store, with `between` run before each part is stored: the writes that go on during a snapshot. */
function interleaved(store: MemoryStore, between: () => void): ObjectStore {
  return {
    put: (key, body, options) => {
      if (key.includes("/parts/")) between();
      return store.put(key, body, options);
    },
    get: (key, range) => store.get(key, range),
    head: (key) => store.head(key),
    list: (prefix, options) => store.list(prefix, options),
    delete: (key) => store.delete(key),
  };
}

describe("fuzzy snapshots", () => {
  it("S-P2: a snapshot taken while writes go on, restored and replayed from its mark, equals the tablet", async () => {
    await fc.assert(
      fc.asyncProperty(batches, batches, async (before, during) => {
        const leader = new Leader(new MemoryTabletStorage().open("s1"));
        for (const batch of before) leader.write(batch.map(toOp));
        const mark = { appliedOffset: leader.records.length, appliedPosition: leader.records.length };
        const pending = [...during];
        const store = new MemoryStore();
        const writing = interleaved(store, () => {
          const next = pending.shift();
          if (next !== undefined) leader.write(next.map(toOp));
        });
        // Small parts, so the writes fall between many of them.
        const ref = await writeSnapshotOf(writing, "s1", leader.tablet.entries(), mark, { maxPartBytes: 64, boundaryModulus: 3 });
        for (const batch of pending.splice(0)) leader.write(batch.map(toOp));

        const restored = new MemoryTabletStorage().open("s1");
        expect(await restoreInto(store, [ref], restored)).toEqual(ref);
        const replay = netChanges(leader.records.slice(ref.coveredOffset));
        if (!replay.ok) throw new Error(replay.error.message);
        restored.apply(replay.value, { appliedOffset: leader.records.length, appliedPosition: leader.records.length });
        expect([...restored.entries()]).toEqual([...leader.tablet.entries()]);
      }),
      { numRuns: 200 },
    );
  });
});
