// Bucketing (rows B1..B7 of docs/tables.md): which bucket a row goes to, which partition, and the name of
// the stream that holds a (table, partition, bucket).
import { RESERVED_SEGMENT } from "../protocol/headers.ts";
import type { TableDefinition } from "./definition.ts";
import { encodeKey } from "./key-encoding.ts";
import { bucketKeyOf, type Row } from "./rows.ts";

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** B1: FNV-1a, 32 bits, over the UTF-8 bytes of `text` (a lone surrogate as U+FFFD, as TextEncoder does). */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  const mix = (byte: number): void => {
    hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
  };
  for (const char of text) {
    let point = char.codePointAt(0) ?? 0;
    if (point >= 0xd800 && point <= 0xdfff) point = 0xfffd;
    if (point < 0x80) {
      mix(point);
    } else if (point < 0x800) {
      mix(0xc0 | (point >> 6));
      mix(0x80 | (point & 0x3f));
    } else if (point < 0x10000) {
      mix(0xe0 | (point >> 12));
      mix(0x80 | ((point >> 6) & 0x3f));
      mix(0x80 | (point & 0x3f));
    } else {
      mix(0xf0 | (point >> 18));
      mix(0x80 | ((point >> 12) & 0x3f));
      mix(0x80 | ((point >> 6) & 0x3f));
      mix(0x80 | (point & 0x3f));
    }
  }
  return hash;
}

/**
 * B2, B3: the bucket of a checked row, 0 <= bucket < definition.buckets: the hash of the encoded bucket key,
 * or for a log table without a bucket key, of the whole row (B3: the same row always lands in the same
 * bucket, so a retried batch splits the same way and each bucket's producer headers deduplicate it).
 */
export function bucketOf(definition: TableDefinition, row: Row): number {
  const key = bucketKeyOf(definition, row);
  const input = key === null ? wholeRowText(definition, row) : encodeKey(key);
  return fnv1a32(input) % definition.buckets;
}

/** A partition value: the partition column's value, a string or an int. */
export type PartitionValue = string | number;

/** B4: the partition value of a checked row, or null for an unpartitioned table. */
export function partitionValue(definition: TableDefinition, row: Row): PartitionValue | null {
  if (definition.partitionBy === null) return null;
  // The partition column is a non-nullable string or int (definition.ts), so the row holds one.
  return row[definition.partitionBy] as PartitionValue;
}

/**
 * B4: the partition of a checked row as its key, `encodeKey([value])`: printable ASCII, one per value (the
 * string "5" and the int 5 differ), the form bucket stream names and bucket paths carry. Null when the
 * table is not partitioned.
 */
export function partitionKey(definition: TableDefinition, row: Row): string | null {
  const value = partitionValue(definition, row);
  return value === null ? null : encodePartition(value);
}

export function encodePartition(value: PartitionValue): string {
  return encodeKey([value]);
}

/** The first segments of every bucket stream name: under the stream API's reserved `__ds` (NAME-3). */
export const BUCKET_STREAM_PREFIX = `${RESERVED_SEGMENT}/table/`;

/**
 * B5..B7: the stream of bucket `bucket` of `table` (a name from parseTableName) in the partition whose key
 * is `partition` (encodePartition): `__ds/table/<table>/b/<bucket>`, or
 * `__ds/table/<table>/p/<partition key>/b/<bucket>`. The stream API refuses every name whose first segment
 * is `__ds`, so no client stream can take one; a table name has no `/` and the key encoding escapes it, so
 * two (table, partition, bucket) never share a name.
 */
export function bucketStreamName(table: string, partition: string | null, bucket: number): string {
  const partitionPart = partition === null ? "" : `p/${partition}/`;
  return `${BUCKET_STREAM_PREFIX}${table}/${partitionPart}b/${bucket}`;
}

/** The row as JSON in column order; json values with object keys sorted, so equal rows give equal text. */
function wholeRowText(definition: TableDefinition, row: Row): string {
  return JSON.stringify(definition.columns.map((column) => sortKeys(row[column.name] ?? null)));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, sortKeys(record[key])]));
}

/** The table, partition key (null when unpartitioned) and bucket of a bucket stream's name (B5); null for any other name. */
export function parseBucketStreamName(name: string): { table: string; partition: string | null; bucket: number } | null {
  if (!name.startsWith(BUCKET_STREAM_PREFIX)) return null;
  // A partition key is printable ASCII without `/` (the key encoding escapes every unit below 0x30).
  const match = /^([A-Za-z0-9][A-Za-z0-9_-]*)\/(?:p\/([!-.0-~]+)\/)?b\/(0|[1-9][0-9]{0,3})$/.exec(name.slice(BUCKET_STREAM_PREFIX.length));
  return match === null ? null : { table: match[1]!, partition: match[2] ?? null, bucket: Number(match[3]) };
}

/** The partition value whose key (encodePartition) is `key`; null when `key` is not one (encodePartition's inverse). */
export function decodePartitionKey(key: string): PartitionValue | null {
  if (/^i[0-9a-f]{14}$/.test(key)) {
    // The top digit and the low 52 bits apart, as offsetHex writes them: each part is exact in a double.
    const value = (parseInt(key.slice(1, 2), 16) - 2) * 2 ** 52 + parseInt(key.slice(2), 16);
    return Number.isSafeInteger(value) && encodePartition(value) === key ? value : null;
  }
  if (!/^s(?:[0-}]|#[0-_]|~[0-9a-f]{4})*!$/.test(key)) return null;
  const text = key.slice(1, -1).replace(/#(.)|~([0-9a-f]{4})/g, (_, low: string | undefined, high: string | undefined) =>
    low !== undefined ? String.fromCharCode(low.charCodeAt(0) - 0x30) : String.fromCharCode(parseInt(high!, 16)),
  );
  return encodePartition(text) === key ? text : null;
}
