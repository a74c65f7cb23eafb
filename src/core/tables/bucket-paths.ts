// The path of a bucket in the table API (docs/tables.md, "HTTP API"): `/v1/table/<name>/bucket/<i>` for a
// table without partitions, `/v1/table/<name>/p/<partition key>/bucket/<i>` in a partition, the key
// (encodePartition) percent-encoded. The router, the nodes and the TypeScript client build and read bucket
// paths with these two functions only, so they cannot disagree.
import { parsePartitionKey } from "./bucketing.ts";
import { MAX_BUCKETS, parseTableName } from "./definition.ts";
import { parseCanonicalUint } from "../protocol/parsed.ts";
import type { BucketId } from "./requests.ts";
import type { RequestTarget } from "../protocol/request-target.ts";

export type BucketTarget = Extract<RequestTarget, { kind: "bucket" }>;

/** What a bucket path addresses: the table, the bucket and the operation. */
export interface BucketPath extends BucketId {
  readonly table: string;
  readonly op: string;
}

const BUCKET_PATH = /^\/v1\/table\/([^/]+)\/(?:p\/([^/]+)\/)?bucket\/([^/]+)\/(write|lookup|prefix|changelog)$/;

/** The path of bucket `id` of `table`, up to (not including) the operation. */
export function bucketPath(table: string, id: BucketId): string {
  const partition = id.partition === null ? "" : `/p/${encodeURIComponent(id.partition)}`;
  return `/v1/table/${encodeURIComponent(table)}${partition}/bucket/${id.bucket}`;
}

/** A bucket path with its operation (`.../write|lookup|prefix|changelog`); null for any other path. */
export function parseBucketPath(path: string): BucketPath | null {
  const match = BUCKET_PATH.exec(path);
  if (match === null) return null;
  const table = parseTableName(decodeSegment(match[1]!) ?? "");
  const partitionText = match[2] === undefined ? null : decodeSegment(match[2]);
  const partition = partitionText === null ? null : parsePartitionKey(partitionText);
  const bucket = parseCanonicalUint(match[3]!);
  if (!table.ok || bucket === null || bucket >= MAX_BUCKETS) return null;
  if (match[2] !== undefined && partition === null) return null;
  return { table: table.value, partition, bucket, op: match[4]! };
}

/** A bucket request's target (request-target.ts) checked as parseBucketPath checks a path: the same rules. */
export function checkBucketTarget(target: BucketTarget): BucketPath | null {
  const table = parseTableName(target.table);
  const partition = target.partition === null ? null : parsePartitionKey(target.partition);
  if (!table.ok || target.bucket >= MAX_BUCKETS) return null;
  if (target.partition !== null && partition === null) return null;
  return { table: table.value, partition, bucket: target.bucket, op: target.op };
}

function decodeSegment(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
