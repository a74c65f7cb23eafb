// A bucket request at a node (docs/tables.md, table BR): route it like a request for the bucket's stream
// (paths/routing.ts), answer `not_leader` with the leader's address when another node leads it, and
// otherwise open the stream here and load the bucket (tables/buckets.ts). A load that takes longer than
// LOAD_WAIT_MS goes on in the background while the request gets 503 and Retry-After.
import { domainError, type DomainError } from "../../core/errors.ts";
import { bucketStreamName, type PartitionValue } from "../../core/tables/bucketing.ts";
import { bucketStreamRequest } from "../../core/tables/bucket-stream.ts";
import { parseTableDefinition } from "../../core/tables/definition.ts";
import { createStream } from "../paths/create.ts";
import { settleWithin } from "../../waits/keyed-waiters.ts";
import { routeAtNode } from "../paths/routing.ts";
import { errorReply, unavailable, type Reply } from "../state/replies.ts";
import { ensureOpened } from "../streams/lifecycle.ts";
import type { BucketIdentity, LoadedBucket, TableContext } from "./buckets.ts";
import { loadBucket } from "./load.ts";
import type { StreamState } from "../state/stream-registry.ts";
import type { Result } from "../../core/result.ts";

/** How long a request waits for its bucket to load before it is answered 503 (the load goes on). */
const LOAD_WAIT_MS = 2_000;

/**
 * A bucket request: which bucket (its partition's key, null when the table has no partitions, and the
 * partition's value, which answers name), and the path and query it came with (a `not_leader` names the
 * same at the leader).
 */
export interface BucketAddress {
  readonly table: string;
  readonly partition: string | null;
  readonly partitionValue: PartitionValue | null;
  readonly bucket: number;
  readonly pathAndQuery: string;
}

export interface LedBucket {
  readonly stream: StreamState;
  readonly bucket: LoadedBucket;
}

/** The bucket, opened and loaded here at its current epoch; or the reply (not_leader, 404, 503). */
export async function leadBucket(ctx: TableContext, address: BucketAddress): Promise<LedBucket | Reply> {
  const name = bucketStreamName(address.table, address.partition, address.bucket);
  const routed = await routeAtNode(ctx, name);
  if (routed !== null) return routed.kind === "redirect" ? notLeader(ctx, address, name, routed.node.id, routed.node.addr) : routed;
  const stream = ctx.registry.byName(name) ?? (await createOnFirstUse(ctx, name));
  if (stream === undefined) return errorReply(noSuchBucket(address));
  if ("kind" in stream) return stream;
  const openError = await ensureOpened(ctx, stream);
  if (openError !== null) return errorReply(openError);
  if (stream.phase.kind !== "opened") return errorReply(unavailable("the bucket is moving; retry"));
  const current = ctx.tables.current(stream);
  if (current !== undefined) return { stream, bucket: current };
  const loading = startLoad(ctx, stream, address);
  if ((await settleWithin(loading, LOAD_WAIT_MS)) === "timeout") {
    return errorReply(unavailable("the bucket is opening (its tablet is being restored); retry", { reason: "bucket_opening" }));
  }
  const loaded = await loading;
  return loaded.ok ? { stream, bucket: loaded.value } : errorReply(loaded.error);
}

/**
 * A bucket stream placed here and never opened (epoch 0: CreateTable placed it) is created by its leader at
 * its first request, as an empty JSON stream with the configuration CreateTable recorded.
 */
async function createOnFirstUse(ctx: TableContext, name: string): Promise<StreamState | Reply | undefined> {
  const { stream } = await ctx.view.lookup(name, true);
  if (stream === null || stream.owner !== ctx.nodeId || stream.ownership !== "placed" || stream.epoch !== 0) return undefined;
  const created = await createStream(ctx, { name, request: bucketStreamRequest(), body: new Uint8Array(0), bodyText: "", location: name, routed: true });
  if (created.kind !== "reply") return created;
  return ctx.registry.byName(name);
}

function startLoad(ctx: TableContext, stream: StreamState, address: BucketAddress): Promise<Result<LoadedBucket>> {
  const loads = ctx.tables.loads;
  const key = `${stream.id}@${stream.epoch}`;
  const running = loads.get(key);
  if (running !== undefined) return running;
  const load = identify(ctx, stream, address)
    .then((identity): Promise<Result<LoadedBucket>> | Result<LoadedBucket> => (identity.ok ? loadBucket(ctx, stream, identity.value) : identity))
    .catch((error: unknown): Result<LoadedBucket> => {
      ctx.log.log("node.error", { during: "table_load", streamId: stream.id }, error);
      return { ok: false, error: unavailable("the bucket could not be loaded; retry") };
    })
    .finally(() => loads.delete(key));
  loads.set(key, load);
  ctx.background(load);
  return load;
}

/** The table's definition from the metadata log, for the bucket whose stream this is. */
async function identify(ctx: TableContext, stream: StreamState, address: BucketAddress): Promise<Result<BucketIdentity>> {
  const lookup = await ctx.meta.lookupTable(address.table);
  const bucket = lookup.buckets.find((b) => b.streamId === stream.id);
  if (lookup.table === null || bucket === undefined || bucket.bucket !== address.bucket) return { ok: false, error: noSuchBucket(address) };
  const definition = parseTableDefinition(lookup.table.definition);
  if (!definition.ok) return { ok: false, error: unavailable("the table's recorded definition does not parse", { table: address.table }) };
  return { ok: true, value: { table: address.table, bucket: address.bucket, definition: definition.value, snapshots: bucket.snapshots } };
}

function noSuchBucket(address: BucketAddress): DomainError {
  return domainError("not_found", "no such table bucket", { table: address.table, ...partitionDetail(address), bucket: address.bucket });
}

/** The partition as answers name it: its value, as users write it (docs/tables.md, "Partitions in URLs"). */
function partitionDetail(address: BucketAddress): { partition?: PartitionValue } {
  return address.partitionValue === null ? {} : { partition: address.partitionValue };
}

/** BR1: another node leads the bucket: its id, address and leader epoch, and the same request there. */
async function notLeader(ctx: TableContext, address: BucketAddress, name: string, leader: string, leaderAddr: string): Promise<Reply> {
  const lookup = await ctx.view.lookup(name);
  return errorReply(
    domainError("not_leader", "another node leads this bucket", {
      table: address.table,
      ...partitionDetail(address),
      bucket: address.bucket,
      leader,
      leaderAddr,
      leaderEpoch: lookup.stream?.epoch ?? null,
      location: `${leaderAddr}${address.pathAndQuery}`,
    }),
  );
}
