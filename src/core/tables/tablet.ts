// A bucket's KV tablet in the pure core: encoded key → row, plus the changelog offset applied so far.
// Offsets count records of the bucket's stream: record n has offset n, `appliedOffset` is the offset of the
// next record to apply. The tablet is immutable; the shell mirrors the same changes into SQLite.
import type { KeyedRecord, Row } from "./changelog.ts";

export interface Tablet {
  readonly rows: ReadonlyMap<string, Row>;
  readonly appliedOffset: number;
}

export const EMPTY_TABLET: Tablet = { rows: new Map(), appliedOffset: 0 };

/** Encoded keys compare by UTF-16 code units (JavaScript `<`); the key encoding must preserve order under it. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A batch whose records were handed to the stream but not yet acknowledged. */
export interface PendingBatch {
  readonly batchId: number;
  readonly records: readonly KeyedRecord[];
}

/** The leader's state of one bucket: the applied tablet (what lookups read) and, in order, the batches in
 * flight (what the write step reads through so two batches on the same key get the right images). */
export interface BucketState {
  readonly tablet: Tablet;
  readonly pending: readonly PendingBatch[];
  readonly nextBatchId: number;
}

export function openBucket(tablet: Tablet): BucketState {
  return { tablet, pending: [], nextBatchId: 0 };
}
