// Properties over random interleavings of writes, acknowledgements and WAL failures (docs/tables.md,
// tables W and A): the images are right with batches in flight, and a read never sees an unacknowledged row.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { KeyedRecord, Row } from "../../../src/core/tables/changelog.ts";
import { jsonEqual } from "../../../src/core/meta/json.ts";
import { acknowledgeBatch, applyRecords, failBatch } from "../../../src/core/tables/tablet-apply.ts";
import { lookup } from "../../../src/core/tables/tablet-read.ts";
import { writeStep, type WriteOp } from "../../../src/core/tables/tablet-write.ts";
import { EMPTY_TABLET, openBucket } from "../../../src/core/tables/tablet.ts";
import { propertyRuns } from "../../support/property-runs.ts";

function unwrap<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.error)}`);
  return result.value;
}

const KEYS = ["a", "b", "c", "d"];
const opArb: fc.Arbitrary<WriteOp> = fc.oneof(
  fc.record({ key: fc.constantFrom(...KEYS), v: fc.integer({ min: 0, max: 2 }) }).map(({ key, v }) => ({ key, upsert: { id: key, v } })),
  fc.constantFrom(...KEYS).map((key) => ({ delete: key })),
);
const actionArb = fc.oneof(
  fc.array(opArb, { maxLength: 5 }).map((ops) => ({ kind: "write" as const, ops })),
  fc.constant({ kind: "ack" as const }),
  fc.constant({ kind: "fail" as const }),
);

/** Checks that each record's image matches what its key held in the stream before it. */
function imagesAreRight(log: readonly KeyedRecord[]): void {
  const held = new Map<string, Row>();
  let pendingUpdate: Row | null = null;
  for (const { key, record } of log) {
    const before = held.get(key!);
    if (record.op === "+I") expect(before).toBeUndefined();
    if (record.op === "-U" || record.op === "-D") expect(before !== undefined && jsonEqual(before, record.row)).toBe(true);
    if (record.op === "+U") expect(pendingUpdate).not.toBeNull();
    pendingUpdate = record.op === "-U" ? record.row : null;
    if (record.op === "-D") held.delete(key!);
    else if (record.op !== "-U") held.set(key!, record.row);
  }
}

describe("write and apply under random interleavings", () => {
  test("W-P1 and A-P1 (property): images are right with batches in flight; reads see only acknowledged rows", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 60 }), (actions) => {
        let state = openBucket(EMPTY_TABLET);
        const log: KeyedRecord[] = [];
        for (const action of actions) {
          const head = state.pending[0];
          if (action.kind === "write") state = unwrap(writeStep(state, "primary-key", action.ops)).state;
          else if (action.kind === "ack" && head !== undefined) {
            state = unwrap(acknowledgeBatch(state, head.batchId, log.length));
            log.push(...head.records);
          } else if (action.kind === "fail" && head !== undefined) state = failBatch(state, head.batchId).state;
          const acknowledged = unwrap(applyRecords(EMPTY_TABLET, 0, log));
          expect(unwrap(lookup(state.tablet, KEYS))).toEqual(unwrap(lookup(acknowledged, KEYS)));
        }
        imagesAreRight(log);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
