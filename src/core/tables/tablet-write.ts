// The write step of one bucket (docs/tables.md, table W): a batch of ops in, the changelog records
// out, queued as a pending batch. The applied tablet does not change here; it changes only when the stream
// acknowledges the records (tablet-apply.ts). The step reads "applied tablet + pending batches, in order".
import { jsonEqual } from "../meta/json.ts";
import { okResult, rejectResult, type KeyedRecord, type Row, type TableResult } from "./changelog.ts";
import type { BucketState, PendingBatch } from "./tablet.ts";

/**
 * A bound on ops in one batch (per bucket): a larger batch is refused whole. A batch is decided and applied
 * in one turn of its leader, so this and MAX_TABLE_WRITE_BYTES bound how long one write can keep the node
 * from its other streams: at 10,000 ops appends beside a write waited up to 2.9 s (docs/limits.md).
 */
export const MAX_OPS_PER_BATCH = 2_500;

/** A bound on the body of one table write (table-addressed, or one bucket's): its time goes with its bytes. */
export const MAX_TABLE_WRITE_BYTES = 2 * 1024 * 1024;

/** A bound on batches in flight per bucket: a write beyond it waits for acknowledgements (retry later). */
export const MAX_PENDING_BATCHES = 64;

export type TableKind = "log" | "primary-key";

export type WriteOp =
  | { readonly upsert: Row; readonly key: string }
  | { readonly delete: string }
  | { readonly append: Row };

export interface WriteOutcome {
  readonly state: BucketState;
  readonly batch: PendingBatch;
}

/** What a key holds as the write step sees it: the last pending image, else the applied row. */
function overlayLookup(state: BucketState, key: string): Row | undefined {
  for (let b = state.pending.length - 1; b >= 0; b--) {
    const records = state.pending[b]!.records;
    for (let r = records.length - 1; r >= 0; r--) {
      const { key: recordKey, record } = records[r]!;
      if (recordKey !== key) continue;
      return record.op === "-D" ? undefined : record.row;
    }
  }
  return state.tablet.rows.get(key);
}

function opKindAllowed(op: WriteOp, kind: TableKind): boolean {
  return "append" in op ? kind === "log" : kind === "primary-key";
}

/** W1-W8: the records of one op, given what the key holds before it. */
function recordsOf(op: WriteOp, before: Row | undefined): KeyedRecord[] {
  if ("append" in op) return [{ key: null, record: { op: "+I", row: op.append } }];
  if ("delete" in op) return before === undefined ? [] : [{ key: op.delete, record: { op: "-D", row: before } }];
  if (before === undefined) return [{ key: op.key, record: { op: "+I", row: op.upsert } }];
  // W3: an upsert of the row already there changes nothing, so the changelog says nothing.
  if (jsonEqual(before, op.upsert)) return [];
  return [
    { key: op.key, record: { op: "-U", row: before } },
    { key: op.key, record: { op: "+U", row: op.upsert } },
  ];
}

export function writeStep(state: BucketState, kind: TableKind, ops: readonly WriteOp[]): TableResult<WriteOutcome> {
  if (ops.length > MAX_OPS_PER_BATCH) {
    return rejectResult("too_large", "too many ops in one batch", { limit: "MAX_OPS_PER_BATCH", max: MAX_OPS_PER_BATCH });
  }
  if (state.pending.length >= MAX_PENDING_BATCHES) {
    return rejectResult("limit_reached", "too many batches in flight for this bucket", { limit: "MAX_PENDING_BATCHES", max: MAX_PENDING_BATCHES });
  }
  const mismatch = ops.findIndex((op) => !opKindAllowed(op, kind));
  if (mismatch >= 0) {
    const reason = kind === "log" ? "a log table takes append ops only" : "a primary-key table takes upsert and delete ops only";
    return rejectResult("invalid", reason, { opIndex: mismatch });
  }
  const records: KeyedRecord[] = [];
  // Ops apply in order: each reads through the records this batch produced so far.
  const inBatch: PendingBatch = { batchId: state.nextBatchId, records };
  const reading: BucketState = { ...state, pending: [...state.pending, inBatch] };
  for (const op of ops) {
    const key = "append" in op ? null : "delete" in op ? op.delete : op.key;
    records.push(...recordsOf(op, key === null ? undefined : overlayLookup(reading, key)));
  }
  const batch: PendingBatch = { batchId: state.nextBatchId, records };
  return okResult({ state: { ...state, pending: [...state.pending, batch], nextBatchId: state.nextBatchId + 1 }, batch });
}
