// The bucket-addressed table API at a node (docs/tables.md, "HTTP API"): `/v1/table/<name>/bucket/<i>/`
// (`/v1/table/<name>/p/<partition value>/bucket/<i>/` in a partition, bucket-paths.ts):
// `write`, `lookup`, `prefix` (POST, JSON bodies) and `changelog` (GET: the Durable Streams read protocol
// over the bucket's stream, so any Durable Streams client tails a table). A bucket this node does not lead
// answers `not_leader` (307 to the leader, the facts in the body). Served at the node's address
// (`/n/<id>/v1/table/...`); the router forwards table requests here.
import { domainError } from "../core/errors.ts";
import { parseAppendRequest } from "../core/protocol/append.ts";
import { HEADER, QUERY } from "../core/protocol/headers.ts";
import { parseOffsetParam } from "../core/protocol/offsets.ts";
import { parseCursorParam, parseReadMode } from "../core/protocol/read.ts";
import { MAX_TABLE_WRITE_BYTES } from "../core/tables/tablet-write.ts";
import { checkBucketTarget, type BucketTarget } from "../core/tables/bucket-paths.ts";
import { bucketStreamName, encodePartition, type PartitionValue } from "../core/tables/bucketing.ts";
import { parseTableDefinition } from "../core/tables/definition.ts";
import { parsePartitionSegment, partitionColumnType, partitionSegmentMeaning, type PartitionColumnType } from "../core/tables/partition-segment.ts";
import { pathBelowNode } from "../http/request-target.ts";
import type { TableContext } from "../node/tables/buckets.ts";
import { readStream } from "../node/paths/read.ts";
import { errorReply, unavailable, type Reply } from "../node/state/replies.ts";
import { sseStream } from "../node/paths/sse.ts";
import { leadBucket, type BucketAddress } from "../node/tables/leader.ts";
import { lookupBucket, prefixBucket } from "../node/tables/read.ts";
import { writeBucket } from "../node/tables/write.ts";
import { holdingBody } from "./body-pool.ts";
import { errorResponse, readBody, toResponse, type BodyHold } from "../http/responses.ts";
import type { Result } from "../core/result.ts";

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A bucket request at its node; `target` is the request's, as the Worker authorized it (request-target.ts). */
export async function tableNodeRequest(ctx: TableContext, request: Request, url: URL, target: BucketTarget): Promise<Response> {
  const parsed = checkBucketTarget(target);
  if (parsed === null) return errorResponse(domainError("not_found", "no such table route (a node serves /v1/table/<name>[/p/<partition>]/bucket/<i>/...)"));
  const resolved = parsed.partition === null ? { ok: true as const, value: { key: null, value: null } } : await resolvePartition(ctx, parsed.table, parsed.partition, parsed.bucket);
  if (!resolved.ok) return errorResponse(resolved.error);
  const partition = resolved.value;
  const path = pathBelowNode(target);
  const address: BucketAddress = { table: parsed.table, partition: partition.key, partitionValue: partition.value, bucket: parsed.bucket, pathAndQuery: `${path}${url.search}` };
  const answer = (reply: Reply): Response => toResponse(reply, false, url);
  if (parsed.op === "changelog") {
    if (request.method !== "GET") return errorResponse(domainError("invalid", "a changelog is read with GET"));
    return answer(await readChangelog(ctx, request, url, address));
  }
  if (request.method !== "POST") return errorResponse(domainError("invalid", `${parsed.op} is a POST`));
  return holdingBody(ctx, request, (hold) => bucketRequest(ctx, request, parsed.op, address, answer, hold));
}

/**
 * The partition a bucket path's segment names (partition-segment.ts, table PO), by the partition column's
 * type. A bucket loaded here answers without asking anyone: its definition says the type, and it exists.
 * Otherwise the metadata log's table (definition and partitions) decides, the old internal spelling
 * included (PO2). A partition the table lacks resolves to its key all the same: leadBucket answers 404.
 */
async function resolvePartition(ctx: TableContext, table: string, text: string, bucket: number): Promise<Result<{ key: string; value: PartitionValue }>> {
  for (const type of PARTITION_TYPES) {
    const value = parsePartitionSegment(type, text);
    if (!value.ok) continue;
    const key = encodePartition(value.value);
    const stream = ctx.registry.byName(bucketStreamName(table, key, bucket));
    const loaded = stream === undefined ? undefined : ctx.tables.current(stream);
    if (loaded !== undefined && partitionColumnType(loaded.definition) === type) return { ok: true, value: { key, value: value.value } };
  }
  const lookup = await ctx.meta.lookupTable(table);
  if (lookup.table === null) return { ok: false, error: domainError("not_found", "no such table", { table }) };
  const definition = parseTableDefinition(lookup.table.definition);
  if (!definition.ok) return { ok: false, error: unavailable("the table's recorded definition does not parse", { table }) };
  const type = partitionColumnType(definition.value);
  if (type === null) {
    return { ok: false, error: domainError("not_found", "the table is not partitioned: its buckets are /v1/table/<name>/bucket/<i>/...", { table, reason: "not_partitioned" }) };
  }
  const existing = lookup.buckets.flatMap((b) => (b.partition === null ? [] : [b.partition]));
  const meaning = partitionSegmentMeaning(type, text, existing);
  return meaning.kind === "refused" ? { ok: false, error: meaning.error } : { ok: true, value: { key: meaning.key, value: meaning.value } };
}

const PARTITION_TYPES: readonly PartitionColumnType[] = ["string", "int"];

/** A write, lookup or prefix scan of a bucket, its body held in the node's pool (body-pool.ts) until answered. */
async function bucketRequest(
  ctx: TableContext,
  request: Request,
  op: string,
  address: BucketAddress,
  answer: (reply: Reply) => Response,
  hold: BodyHold,
): Promise<Response> {
  const maxBytes = op === "write" ? Math.min(ctx.settings.maxBodyBytes, MAX_TABLE_WRITE_BYTES) : ctx.settings.maxBodyBytes;
  const read = await readBody(request, maxBytes, hold);
  if (!read.ok) return errorResponse(read.error);
  const bytes = read.value;
  const body = parseJson(bytes);
  if (body === undefined) return errorResponse(domainError("invalid", "the body is not JSON", { field: "body" }));
  switch (op) {
    case "write": {
      const header = (key: string): string | null => request.headers.get(key);
      const append = parseAppendRequest(
        {
          contentType: "application/json",
          closed: null,
          streamSeq: null,
          producerId: header(HEADER.producerId),
          producerEpoch: header(HEADER.producerEpoch),
          producerSeq: header(HEADER.producerSeq),
        },
        bytes.byteLength,
        ctx.settings.maxBodyBytes,
      );
      if (!append.ok) return errorResponse(append.error);
      return answer(await writeBucket(ctx, { ...address, body, bodyBytes: bytes, request: append.value }));
    }
    case "lookup":
      return answer(await lookupBucket(ctx, { ...address, body }));
    default:
      return answer(await prefixBucket(ctx, { ...address, body }));
  }
}

/** The bucket's stream read as a stream: catch-up, long-poll or SSE, at the leader. */
async function readChangelog(ctx: TableContext, request: Request, url: URL, address: BucketAddress): Promise<Reply> {
  const led = await leadBucket(ctx, address);
  if ("kind" in led) return led;
  const offsets = url.searchParams.getAll(QUERY.offset);
  const start = parseOffsetParam(offsets);
  if (!start.ok) return errorReply(start.error);
  const mode = parseReadMode(url.searchParams.getAll(QUERY.live), offsets.length > 0);
  if (!mode.ok) return errorReply(mode.error);
  const input = {
    name: led.stream.name,
    start: start.value,
    mode: mode.value,
    cursor: parseCursorParam(url.searchParams.getAll(QUERY.cursor)),
    ifNoneMatch: request.headers.get(HEADER.ifNoneMatch),
    signal: request.signal,
  };
  return mode.value === "sse" ? sseStream(ctx, input) : readStream(ctx, input);
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(fatalUtf8.decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}
