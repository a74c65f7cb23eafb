// What one tiering round writes for one bucket (docs/tiering.md, table TR): the changelog records it read,
// from the last tiered offset, folded into the rows of a data file and the keys of an equality-delete file.
// A log table tiers every `+I` once. A primary-key table is tiered merge-on-read: each key the round touched
// gets an equality delete (it removes the key's rows of every earlier snapshot) and, when the key still
// holds a row after the round, that row (the same snapshot's deletes never remove its own rows).
import type { ChangeRecord, Row } from "../tables/changelog.ts";
import type { TableDefinition } from "../tables/definition.ts";
import { rejectResult, okResult, type TableResult } from "../tables/changelog.ts";

/** A row as the round writes it: the table's values, its bucket and the changelog offset of its record. */
export interface TieredRow {
  readonly values: Row;
  readonly bucket: number;
  /** The record's offset in the bucket's stream (record n has offset n). */
  readonly offset: number;
}

export interface BucketRound {
  /** Rows of the data file, in changelog order (a primary-key table: keys by their first record in the round). */
  readonly data: TieredRow[];
  /** The primary-key values of every key the round touched (empty for a log table), in the same order. */
  readonly deletes: Row[];
}

/** The least of a round's budget each bucket gets: 1,024 buckets make 16 MiB. */
const MIN_BUCKET_SHARE_BYTES = 16 * 1024;

/**
 * TR7: each bucket's share of a round's budget, so that a round holds about `maxRoundBytes` of changelog
 * whatever the bucket count, and at least MIN_BUCKET_SHARE_BYTES, so that every bucket moves every round.
 */
export function bucketShareBytes(maxRoundBytes: number, buckets: number): number {
  return Math.max(MIN_BUCKET_SHARE_BYTES, Math.floor(maxRoundBytes / Math.max(1, buckets)));
}

/**
 * TR1-TR6: folds one bucket's records, the first at `firstOffset`. A log table accepts `+I` only (W7 wrote
 * nothing else); anything else is `invalid`, as is a primary-key row missing a key column.
 */
export function foldBucketRecords(definition: TableDefinition, bucket: number, firstOffset: number, records: readonly ChangeRecord[]): TableResult<BucketRound> {
  if (definition.primaryKey === null) {
    const data: TieredRow[] = [];
    for (const [index, record] of records.entries()) {
      if (record.op !== "+I") return rejectResult("invalid", "a log table's changelog holds +I records only", { op: record.op, offset: firstOffset + index });
      data.push({ values: record.row, bucket, offset: firstOffset + index });
    }
    return okResult({ data, deletes: [] });
  }
  const primaryKey = definition.primaryKey;
  // The last image of each key, in the order the keys first appear.
  const latest = new Map<string, { keyRow: Row; image: TieredRow | null }>();
  for (const [index, record] of records.entries()) {
    const keyValues = primaryKey.map((name) => record.row[name]);
    if (keyValues.some((value) => value === undefined || value === null)) {
      return rejectResult("invalid", "a changelog row lacks a primary-key column", { offset: firstOffset + index });
    }
    const key = JSON.stringify(keyValues);
    const keyRow = Object.fromEntries(primaryKey.map((name, i) => [name, keyValues[i]!]));
    // -U changes nothing: its +U follows in the same append (table A, A1).
    if (record.op === "-U") continue;
    const image = record.op === "-D" ? null : { values: record.row, bucket, offset: firstOffset + index };
    latest.set(key, { keyRow, image });
  }
  const data: TieredRow[] = [];
  const deletes: Row[] = [];
  for (const { keyRow, image } of latest.values()) {
    deletes.push(keyRow);
    if (image !== null) data.push(image);
  }
  return okResult({ data, deletes });
}
