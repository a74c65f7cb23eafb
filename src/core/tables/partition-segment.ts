// The partition segment of a bucket path (docs/tables.md, "Partitions in URLs", tables PS and PO): users
// write `/v1/table/<t>/p/<value>/bucket/<i>/...` with the partition column's value as text, percent-encoded
// as any URL value is. request-target.ts decodes the segment (it is a name); these rules turn the decoded
// text into the partition value by the partition column's type, and the value into its text for answers
// and for the paths mink builds (bucket-paths.ts). The internal key (encodePartition) never appears in a URL.
import { domainError, type DomainError } from "../errors.ts";
import { fail, ok, type Parsed } from "../protocol/parsed.ts";
import { decodePartitionKey, encodePartition, type PartitionValue } from "./bucketing.ts";
import type { TableDefinition } from "./definition.ts";
import { bucketIdText, type BucketId } from "./requests.ts";
import { MAX_PARTITION_STRING_LENGTH } from "./rows.ts";

/** The types a partition column may have (D12). */
export type PartitionColumnType = "string" | "int";

/** The canonical decimal spelling of an integer: no `+`, no leading zeros, no `-0`, no decimals, no exponent. */
const CANONICAL_INT = /^(?:0|-?[1-9][0-9]*)$/;

/**
 * Table PS: the decoded partition segment as a value of the partition column.
 *
 * | #   | column | the segment's text                                          | result                                   |
 * |-----|--------|-------------------------------------------------------------|------------------------------------------|
 * | PS1 | string | 1 to MAX_PARTITION_STRING_LENGTH (128) code units            | the text itself                          |
 * | PS2 | string | longer                                                      | invalid {field: "partition", reason: "too_long"} |
 * | PS3 | int    | a canonical decimal integer (`0`, `42`, `-7`) within ±(2^53−1) | that number                            |
 * | PS4 | int    | a canonical decimal integer beyond ±(2^53−1)                 | invalid {field: "partition", reason: "out_of_range"} |
 * | PS5 | int    | anything else (`+1`, `01`, `-0`, `1.0`, `1e3`, ` 1`, `i20…`) | invalid {field: "partition", reason: "not_an_int"} |
 */
export function parsePartitionSegment(type: PartitionColumnType, text: string): Parsed<PartitionValue> {
  if (type === "string") {
    if (text.length <= MAX_PARTITION_STRING_LENGTH) return ok(text);
    return rejected(`a partition value is at most ${MAX_PARTITION_STRING_LENGTH} characters`, "too_long");
  }
  if (!CANONICAL_INT.test(text)) return rejected("the partition column is an int: write the partition as a decimal integer (e.g. 42 or -7)", "not_an_int");
  const value = Number(text);
  return Number.isSafeInteger(value) ? ok(value) : rejected("the partition value must be an integer within ±(2^53-1)", "out_of_range");
}

/** The text of a partition value as users write it after `/p/` (before percent-encoding): PS's inverse. */
export function partitionSegmentOf(value: PartitionValue): string {
  return String(value);
}

/** The value of a partition key (encodePartition), as answers name a partition; null for null. */
export function partitionValueOfKey(key: string | null): PartitionValue | null {
  if (key === null) return null;
  const value = decodePartitionKey(key);
  if (value === null) throw new RangeError(`'${key}' is not a partition key`);
  return value;
}

/**
 * How a lookup's `minOffsets` and the client's write results name a bucket: `"<bucket>"`, or in a partition
 * `"<partition value's text>/<bucket>"` (`"2026-12-06/1"`, `"eu/west/0"`, `"-7/1"`: the bucket is after the last `/`).
 */
export function bucketLabel(id: BucketId): string {
  const value = partitionValueOfKey(id.partition);
  return value === null ? String(id.bucket) : `${partitionSegmentOf(value)}/${id.bucket}`;
}

/**
 * A lookup's `minOffsets` entry for bucket `id` (docs/tables.md, "Partitions in URLs"): keyed by bucketLabel;
 * the old `"<partition key>/<bucket>"` (bucketIdText) is still read when there is no entry of the new form.
 * Own keys only: the object is the client's JSON.
 */
export function minOffsetFor(minOffsets: Readonly<Record<string, unknown>>, id: BucketId): unknown {
  for (const key of [bucketLabel(id), bucketIdText(id)]) if (Object.hasOwn(minOffsets, key)) return minOffsets[key];
  return undefined;
}

/** The partition column's type, or null for a table without partitions. */
export function partitionColumnType(definition: TableDefinition): PartitionColumnType | null {
  const column = definition.columns.find((c) => c.name === definition.partitionBy);
  return column?.type === "string" || column?.type === "int" ? column.type : null;
}

/** What a partition segment names in a table whose partitions are `existing` (table PO). */
export type PartitionSegmentMeaning =
  | { readonly kind: "partition"; readonly value: PartitionValue; readonly key: string }
  | { readonly kind: "absent"; readonly value: PartitionValue; readonly key: string }
  | { readonly kind: "refused"; readonly error: DomainError };

/**
 * Table PO: a segment in a partitioned table, the old internal spelling included.
 *
 * | #   | the segment                                                                    | meaning                                    |
 * |-----|--------------------------------------------------------------------------------|--------------------------------------------|
 * | PO1 | as a value (PS), a partition the table has                                     | that partition (the user's value wins, even when the text is also another partition's internal key) |
 * | PO2 | otherwise, the internal key (encodePartition) of a partition the table has       | not_found {reason: "internal_partition_key", partitionSegment: the value's text}: the message names the segment to write |
 * | PO3 | otherwise, a value (PS1, PS3)                                                   | absent: no such partition (a bucket request answers 404, a lookup null) |
 * | PO4 | otherwise (PS2, PS4, PS5)                                                       | PS's invalid                               |
 */
export function partitionSegmentMeaning(type: PartitionColumnType, text: string, existing: readonly PartitionValue[]): PartitionSegmentMeaning {
  const value = parsePartitionSegment(type, text);
  if (value.ok && existing.includes(value.value)) return { kind: "partition", value: value.value, key: encodePartition(value.value) };
  const meant = existing.find((candidate) => encodePartition(candidate) === text);
  if (meant !== undefined) {
    const segment = partitionSegmentOf(meant);
    const message = `'${text}' is mink's internal key of partition ${JSON.stringify(meant)}: address the partition by its value, /p/${encodeURIComponent(segment)}/`;
    return { kind: "refused", error: domainError("not_found", message, { reason: "internal_partition_key", partitionSegment: segment }) };
  }
  if (value.ok) return { kind: "absent", value: value.value, key: encodePartition(value.value) };
  return { kind: "refused", error: value.error };
}

function rejected(message: string, reason: string): Parsed<never> {
  return fail("invalid", message, { field: "partition", reason });
}
