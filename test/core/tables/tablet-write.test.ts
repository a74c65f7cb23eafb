// Rows C, W, A and R of docs/tables.md: the changelog record format, the write step, applying
// acknowledged records, and reads of the applied tablet.
import { describe, expect, test } from "vitest";
import { decodeChangeRecord, encodeChangeRecord, parseChangeRecord } from "../../../src/core/tables/changelog.ts";
import { acknowledgeBatch, applyRecords, failBatch } from "../../../src/core/tables/tablet-apply.ts";
import { lookup, MAX_LOOKUP_KEYS, MAX_SCAN_LIMIT, prefixScan, ready } from "../../../src/core/tables/tablet-read.ts";
import { MAX_OPS_PER_BATCH, MAX_PENDING_BATCHES, writeStep, type WriteOp } from "../../../src/core/tables/tablet-write.ts";
import { EMPTY_TABLET, openBucket, type BucketState } from "../../../src/core/tables/tablet.ts";

function unwrap<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.error)}`);
  return result.value;
}

const up = (key: string, v: number): WriteOp => ({ key, upsert: { id: key, v } });

/** Writes one batch and acknowledges it at once. */
function writeAcked(state: BucketState, ops: readonly WriteOp[]): BucketState {
  const { state: next, batch } = unwrap(writeStep(state, "primary-key", ops));
  return unwrap(acknowledgeBatch(next, batch.batchId, next.tablet.appliedOffset));
}

describe("changelog records", () => {
  test("C1: a record round-trips through its JSON message", () => {
    const record = { op: "-U", row: { id: "a", n: [1, { x: null }] } } as const;
    expect(unwrap(parseChangeRecord(encodeChangeRecord(record)))).toEqual(record);
  });
  test("C2: an unknown op is refused", () => {
    expect(decodeChangeRecord({ op: "+X", row: {} })).toMatchObject({ ok: false, error: { code: "invalid" } });
  });
  test("C3: a row that is not a JSON object is refused", () => {
    for (const row of [null, [1], "a", 3]) {
      expect(decodeChangeRecord({ op: "+I", row })).toMatchObject({ ok: false, error: { code: "invalid" } });
    }
  });
  test("C4: missing or extra fields are refused", () => {
    expect(decodeChangeRecord({ op: "+I" }).ok).toBe(false);
    expect(decodeChangeRecord({ op: "+I", row: {}, extra: 1 }).ok).toBe(false);
    expect(decodeChangeRecord([{ op: "+I", row: {} }]).ok).toBe(false);
  });
  test("C5: text that is not JSON is refused", () => {
    expect(parseChangeRecord("{op").ok).toBe(false);
  });
});

describe("write step", () => {
  test("W1: a new key gives +I", () => {
    const { batch } = unwrap(writeStep(openBucket(EMPTY_TABLET), "primary-key", [up("a", 1)]));
    expect(batch.records).toEqual([{ key: "a", record: { op: "+I", row: { id: "a", v: 1 } } }]);
  });
  test("W2: an existing key with a different row gives -U old, +U new", () => {
    const state = writeAcked(openBucket(EMPTY_TABLET), [up("a", 1)]);
    const { batch } = unwrap(writeStep(state, "primary-key", [up("a", 2)]));
    expect(batch.records.map((r) => [r.record.op, r.record.row["v"]])).toEqual([["-U", 1], ["+U", 2]]);
  });
  test("W3: an existing key with the same row gives no record", () => {
    const state = writeAcked(openBucket(EMPTY_TABLET), [up("a", 1)]);
    expect(unwrap(writeStep(state, "primary-key", [{ key: "a", upsert: { v: 1, id: "a" } }])).batch.records).toEqual([]);
  });
  test("W4: a delete of an existing key gives -D old; of a missing key nothing", () => {
    const state = writeAcked(openBucket(EMPTY_TABLET), [up("a", 1)]);
    const { batch } = unwrap(writeStep(state, "primary-key", [{ delete: "a" }, { delete: "b" }]));
    expect(batch.records).toEqual([{ key: "a", record: { op: "-D", row: { id: "a", v: 1 } } }]);
  });
  test("W5: ops in a batch apply in order (upsert then delete of one key gives +I, -D)", () => {
    const { batch } = unwrap(writeStep(openBucket(EMPTY_TABLET), "primary-key", [up("a", 1), { delete: "a" }, up("a", 3)]));
    expect(batch.records.map((r) => r.record.op)).toEqual(["+I", "-D", "+I"]);
  });
  test("W6: a second batch in flight reads through the first (images of the pending row)", () => {
    const first = unwrap(writeStep(openBucket(EMPTY_TABLET), "primary-key", [up("a", 1)]));
    const second = unwrap(writeStep(first.state, "primary-key", [up("a", 2)]));
    expect(second.batch.records.map((r) => [r.record.op, r.record.row["v"]])).toEqual([["-U", 1], ["+U", 2]]);
    expect(second.state.tablet.rows.size).toBe(0);
  });
  test("W7: an op of the other table kind is refused whole", () => {
    const state = openBucket(EMPTY_TABLET);
    expect(writeStep(state, "log", [{ append: { a: 1 } }, up("a", 1)])).toMatchObject({ ok: false, error: { code: "invalid", details: { opIndex: 1 } } });
    expect(writeStep(state, "primary-key", [{ append: { a: 1 } }])).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(unwrap(writeStep(state, "log", [{ append: { a: 1 } }])).batch.records).toEqual([{ key: null, record: { op: "+I", row: { a: 1 } } }]);
  });
  test("W8: a batch over MAX_OPS_PER_BATCH is refused; one at the bound is taken", () => {
    const ops = Array.from({ length: MAX_OPS_PER_BATCH }, (_, i) => up(`k${i}`, i));
    expect(writeStep(openBucket(EMPTY_TABLET), "primary-key", ops).ok).toBe(true);
    expect(writeStep(openBucket(EMPTY_TABLET), "primary-key", [...ops, up("x", 0)])).toMatchObject({ ok: false, error: { code: "too_large" } });
  });
  test("W9: a write beyond MAX_PENDING_BATCHES in flight is refused until one is acknowledged", () => {
    let state = openBucket(EMPTY_TABLET);
    for (let i = 0; i < MAX_PENDING_BATCHES; i++) state = unwrap(writeStep(state, "primary-key", [up("a", i)])).state;
    expect(writeStep(state, "primary-key", [up("b", 0)])).toMatchObject({ ok: false, error: { code: "limit_reached" } });
    const acked = unwrap(acknowledgeBatch(state, state.pending[0]!.batchId, 0));
    expect(writeStep(acked, "primary-key", [up("b", 0)]).ok).toBe(true);
  });
});

describe("applying acknowledged records", () => {
  const records = [
    { key: "a", record: { op: "+I", row: { v: 1 } } },
    { key: "a", record: { op: "-U", row: { v: 1 } } },
    { key: "a", record: { op: "+U", row: { v: 2 } } },
    { key: "b", record: { op: "+I", row: { v: 3 } } },
    { key: "b", record: { op: "-D", row: { v: 3 } } },
  ] as const;
  test("A1: records update the rows and the applied offset", () => {
    const tablet = unwrap(applyRecords(EMPTY_TABLET, 0, records));
    expect([...tablet.rows]).toEqual([["a", { v: 2 }]]);
    expect(tablet.appliedOffset).toBe(5);
  });
  test("A2: records below the applied offset are skipped (replay after a restart)", () => {
    const once = unwrap(applyRecords(EMPTY_TABLET, 0, records.slice(0, 4)));
    const again = unwrap(applyRecords(once, 0, records));
    expect(again).toEqual(unwrap(applyRecords(EMPTY_TABLET, 0, records)));
    expect(unwrap(applyRecords(once, 1, records.slice(1, 3)))).toBe(once);
  });
  test("A3: records starting after the applied offset are a gap", () => {
    expect(applyRecords(EMPTY_TABLET, 1, records)).toMatchObject({ ok: false, error: { code: "conflict", details: { reason: "changelog_gap" } } });
  });
  test("A4: a keyless record other than +I is refused", () => {
    expect(applyRecords(EMPTY_TABLET, 0, [{ key: null, record: { op: "-D", row: {} } }]).ok).toBe(false);
  });
  test("A5: acknowledgements come in batch order", () => {
    const first = unwrap(writeStep(openBucket(EMPTY_TABLET), "primary-key", [up("a", 1)]));
    const second = unwrap(writeStep(first.state, "primary-key", [up("b", 1)]));
    expect(acknowledgeBatch(second.state, second.batch.batchId, 0)).toMatchObject({ ok: false, error: { details: { reason: "ack_out_of_order" } } });
    const acked = unwrap(acknowledgeBatch(second.state, first.batch.batchId, 0));
    expect([...acked.tablet.rows.keys()]).toEqual(["a"]);
    expect(acked.pending.map((b) => b.batchId)).toEqual([second.batch.batchId]);
  });
  test("A6: an acknowledgement at another offset than the applied one is a gap", () => {
    const first = unwrap(writeStep(openBucket(EMPTY_TABLET), "primary-key", [up("a", 1)]));
    expect(acknowledgeBatch(first.state, first.batch.batchId, 3)).toMatchObject({ ok: false, error: { details: { reason: "changelog_gap" } } });
  });
  test("A7: a failed batch fails every later batch and never leaves a row visible", () => {
    const acked = writeAcked(openBucket(EMPTY_TABLET), [up("a", 1)]);
    const first = unwrap(writeStep(acked, "primary-key", [up("a", 2)]));
    const second = unwrap(writeStep(first.state, "primary-key", [up("b", 1)]));
    const failed = failBatch(second.state, first.batch.batchId);
    expect(failed.failedBatchIds).toEqual([first.batch.batchId, second.batch.batchId]);
    expect(unwrap(lookup(failed.state.tablet, ["a", "b"]))).toEqual([{ id: "a", v: 1 }, null]);
    // The next write computes from the applied tablet, not from the failed images.
    const retry = unwrap(writeStep(failed.state, "primary-key", [up("a", 3)]));
    expect(retry.batch.records.map((r) => [r.record.op, r.record.row["v"]])).toEqual([["-U", 1], ["+U", 3]]);
  });
});

describe("reads of the applied tablet", () => {
  const state = writeAcked(openBucket(EMPTY_TABLET), ["b/2", "a/1", "b/1", "b/3", "c/1"].map((k, i) => up(k, i)));
  test("R1: a lookup answers in request order, null for a missing key, and never a pending row", () => {
    const pending = unwrap(writeStep(state, "primary-key", [up("z", 9)])).state;
    expect(unwrap(lookup(pending.tablet, ["c/1", "z", "a/1"])).map((row) => row?.["id"] ?? null)).toEqual(["c/1", null, "a/1"]);
  });
  test("R2: a lookup over MAX_LOOKUP_KEYS is refused", () => {
    expect(lookup(state.tablet, Array.from({ length: MAX_LOOKUP_KEYS + 1 }, () => "a")).ok).toBe(false);
    expect(lookup(state.tablet, Array.from({ length: MAX_LOOKUP_KEYS }, () => "a")).ok).toBe(true);
  });
  test("R3-R5: a prefix scan pages in key order with an exclusive cursor", () => {
    const first = unwrap(prefixScan(state.tablet, "b/", 2, null));
    expect(first.rows.map((r) => r.key)).toEqual(["b/1", "b/2"]);
    expect(first.cursor).toBe("b/2");
    const second = unwrap(prefixScan(state.tablet, "b/", 2, first.cursor));
    expect(second).toMatchObject({ rows: [{ key: "b/3" }], cursor: null });
  });
  test("R6: a scan limit outside 1..MAX_SCAN_LIMIT is refused", () => {
    for (const limit of [0, MAX_SCAN_LIMIT + 1, 1.5]) expect(prefixScan(state.tablet, "", limit, null).ok).toBe(false);
  });
  test("R7: ready once the applied offset reaches minOffset", () => {
    expect([ready(4, 5), ready(5, 5), ready(6, 5)]).toEqual([false, true, true]);
  });
});
