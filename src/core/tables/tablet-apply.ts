// Applying acknowledged records to the tablet (docs/tables.md, table A). The tablet moves only
// here, so a lookup never sees a row the stream has not acknowledged. Replay after a restart and after a
// restore goes through the same function: records below `appliedOffset` are skipped, a gap is refused.
import { okResult, rejectResult, type KeyedRecord, type Row, type TableResult } from "./changelog.ts";
import type { BucketState, Tablet } from "./tablet.ts";

function applyOne(rows: Map<string, Row>, { key, record }: KeyedRecord): TableResult<null> {
  if (key === null) {
    return record.op === "+I" ? okResult(null) : rejectResult("invalid", "a record without a key is a log-table +I");
  }
  if (record.op === "-D") rows.delete(key);
  // A -U carries the old image for readers of the changelog; its +U follows and sets the row.
  else if (record.op !== "-U") rows.set(key, record.row);
  return okResult(null);
}

/** What records change in a tablet, net (A1, A4): the rows to set and the keys to remove, each key once. */
export interface NetChanges {
  readonly set: (readonly [string, Row])[];
  readonly remove: string[];
}

/** A1/A4 as changes for a tablet kept elsewhere (the leader's SQLite): the same rule as applyRecords. */
export function netChanges(records: readonly KeyedRecord[]): TableResult<NetChanges> {
  const rows = new Map<string, Row>();
  const removed = new Set<string>();
  for (const keyed of records) {
    const applied = applyOne(rows, keyed);
    if (!applied.ok) return applied;
    if (keyed.key === null) continue;
    if (rows.has(keyed.key)) removed.delete(keyed.key);
    else if (keyed.record.op === "-D") removed.add(keyed.key);
  }
  return okResult({ set: [...rows], remove: [...removed] });
}

/**
 * A5 for a tablet kept elsewhere: the oldest pending batch leaves the queue, acknowledged; its records are
 * the caller's to apply (netChanges), and the state's applied offset moves past them.
 */
export function takeAcknowledged(state: BucketState, batchId: number): TableResult<{ state: BucketState; records: readonly KeyedRecord[] }> {
  const head = state.pending[0];
  if (head === undefined || head.batchId !== batchId) {
    return rejectResult("conflict", "acknowledgement of a batch that is not the oldest in flight", { reason: "ack_out_of_order", batchId });
  }
  const tablet = { ...state.tablet, appliedOffset: state.tablet.appliedOffset + head.records.length };
  return okResult({ state: { ...state, tablet, pending: state.pending.slice(1) }, records: head.records });
}

/** A1-A4: `records[i]` has offset `fromOffset + i`. */
export function applyRecords(tablet: Tablet, fromOffset: number, records: readonly KeyedRecord[]): TableResult<Tablet> {
  if (fromOffset > tablet.appliedOffset) {
    return rejectResult("conflict", "changelog gap: records start after the applied offset", {
      reason: "changelog_gap",
      appliedOffset: tablet.appliedOffset,
      fromOffset,
    });
  }
  const skip = tablet.appliedOffset - fromOffset;
  if (skip >= records.length) return okResult(tablet);
  const rows = new Map(tablet.rows);
  for (const keyed of records.slice(skip)) {
    const applied = applyOne(rows, keyed);
    if (!applied.ok) return applied;
  }
  return okResult({ rows, appliedOffset: fromOffset + records.length });
}

/** A5-A6: the stream acknowledged the oldest pending batch at `fromOffset`; acknowledgements come in order. */
export function acknowledgeBatch(state: BucketState, batchId: number, fromOffset: number): TableResult<BucketState> {
  const head = state.pending[0];
  if (head === undefined || head.batchId !== batchId) {
    return rejectResult("conflict", "acknowledgement of a batch that is not the oldest in flight", {
      reason: "ack_out_of_order",
      batchId,
    });
  }
  if (fromOffset !== state.tablet.appliedOffset) {
    return rejectResult("conflict", "a batch acknowledged at an offset other than the applied one", {
      reason: "changelog_gap",
      appliedOffset: state.tablet.appliedOffset,
      fromOffset,
    });
  }
  const tablet = applyRecords(state.tablet, fromOffset, head.records);
  if (!tablet.ok) return tablet;
  return okResult({ ...state, tablet: tablet.value, pending: state.pending.slice(1) });
}

export interface FailOutcome {
  readonly state: BucketState;
  /** The failed batch and every batch after it: their images were computed through the failed one. */
  readonly failedBatchIds: readonly number[];
}

/** A7: a WAL failure of a batch fails it and every later batch in flight; the tablet is untouched. Whether
 * the failed records reached the stream is unknown, so the shell re-opens the bucket (replay from
 * `appliedOffset` reads what the stream really holds) before it takes another write. */
export function failBatch(state: BucketState, batchId: number): FailOutcome {
  const index = state.pending.findIndex((batch) => batch.batchId === batchId);
  if (index < 0) return { state, failedBatchIds: [] };
  return {
    state: { ...state, pending: state.pending.slice(0, index) },
    failedBatchIds: state.pending.slice(index).map((batch) => batch.batchId),
  };
}
