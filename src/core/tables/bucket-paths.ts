// The path of a bucket in the table API (docs/tables.md, "HTTP API" and "Partitions in URLs"):
// `/v1/table/<name>/bucket/<i>` for a table without partitions, `/v1/table/<name>/p/<partition>/bucket/<i>`
// in a partition, the partition written as its value's text (partitionSegmentOf), percent-encoded. The
// router, the nodes and the TypeScript client build and read bucket paths with these functions only, so
// they cannot disagree. Which partition the segment names needs the table's definition: the router and the
// node resolve it (partition-segment.ts, table PO).
import { MAX_BUCKETS, parseTableName } from "./definition.ts";
import { partitionSegmentOf, partitionValueOfKey } from "./partition-segment.ts";
import { parseCanonicalUint } from "../protocol/parsed.ts";
import type { BucketId } from "./requests.ts";
import type { RequestTarget } from "../protocol/request-target.ts";

export type BucketTarget = Extract<RequestTarget, { kind: "bucket" }>;

/** What a bucket path addresses: the table, the partition segment (decoded; null without one), the bucket and the operation. */
export interface BucketPath {
  readonly table: string;
  /** The partition as the path wrote it (the value's text, decoded), not yet resolved to a partition. */
  readonly partition: string | null;
  readonly bucket: number;
  readonly op: string;
}

const BUCKET_PATH = /^\/v1\/table\/([^/]+)\/(?:p\/([^/]+)\/)?bucket\/([^/]+)\/(write|lookup|prefix|changelog)$/;

/** The path of bucket `id` of `table`, up to (not including) the operation: the partition in the user's spelling. */
export function bucketPath(table: string, id: BucketId): string {
  return `/v1/table/${encodeURIComponent(table)}${partitionPart(id.partition)}/bucket/${id.bucket}`;
}

function partitionPart(key: string | null): string {
  const value = partitionValueOfKey(key);
  return value === null ? "" : `/p/${encodeURIComponent(partitionSegmentOf(value))}`;
}

/** A bucket path with its operation (`.../write|lookup|prefix|changelog`); null for any other path. */
export function parseBucketPath(path: string): BucketPath | null {
  const match = BUCKET_PATH.exec(path);
  if (match === null) return null;
  const table = parseTableName(decodeSegment(match[1]!) ?? "");
  const partition = match[2] === undefined ? null : decodeSegment(match[2]);
  const bucket = parseCanonicalUint(match[3]!);
  if (!table.ok || bucket === null || bucket >= MAX_BUCKETS) return null;
  if (match[2] !== undefined && (partition === null || partition === "")) return null;
  return { table: table.value, partition, bucket, op: match[4]! };
}

/** A bucket request's target (request-target.ts) checked as parseBucketPath checks a path: the same rules. */
export function checkBucketTarget(target: BucketTarget): BucketPath | null {
  const table = parseTableName(target.table);
  if (!table.ok || target.bucket >= MAX_BUCKETS) return null;
  return { table: table.value, partition: target.partition, bucket: target.bucket, op: target.op };
}

function decodeSegment(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
