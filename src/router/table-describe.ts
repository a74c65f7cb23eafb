// What the router reports about tables, read from the metadata log and the buckets' leaders: a table's
// description (GET /v1/table/<name>, GET /admin/tables/<name>), the list of tables, and snapshots taken at
// the leaders (`mink table snapshot`).
import { workerLog } from "../log/logger.ts";
import type { TableLookup } from "../core/meta/view.ts";
import { formatOffset } from "../core/protocol/offsets.ts";
import { definitionJson, isPlainObject, parseTableDefinition } from "../core/tables/definition.ts";
import { type Env, metaLogClient, streamNodeClient } from "../env.ts";
import type { BucketInfo } from "../ports/stream-node-client.ts";

/** How long GET /v1/table/<name> waits for the leaders' figures (a late leader's buckets show null). */
const BUCKET_INFO_TIMEOUT_MS = 2_000;
/** What GET /v1/table/<name> answers (also GET /admin/tables/<name>); null when there is no such table. */
export async function tableDescription(env: Env, name: string): Promise<TableDescription | null> {
  return (await tableDescriptionWithStreams(env, name))?.description ?? null;
}

/** The description, and each bucket's stream and changelog records at its leader (null: not known), in bucket order. */
export async function tableDescriptionWithStreams(env: Env, name: string): Promise<{ description: TableDescription; streams: { streamId: string; records: number | null }[] } | null> {
  const lookup = await metaLogClient(env.META_LOG).lookupTable(name);
  if (lookup.table === null) return null;
  const infos = await bucketInfos(env, lookup);
  const streams = lookup.buckets.map((bucket) => ({ streamId: bucket.streamId, records: infos.get(bucket.streamId)?.records ?? null }));
  return { description: describe(name, lookup, infos), streams };
}

function describe(name: string, lookup: TableLookup, infos: ReadonlyMap<string, BucketInfo>): TableDescription {
  if (lookup.table === null) throw new Error("describe: no table");
  const definition = parseTableDefinition(lookup.table.definition);
  return {
    name,
    definition: definition.ok ? definitionJson(definition.value) : lookup.table.definition,
    buckets: lookup.buckets.map((bucket) => {
      const info = infos.get(bucket.streamId);
      const newest = bucket.snapshots.at(-1);
      return {
        ...partitionOf(bucket),
        bucket: bucket.bucket,
        leader: bucket.leaderNode?.id ?? null,
        leaderAddr: bucket.leaderNode?.addr ?? null,
        leaderEpoch: bucket.stream?.epoch ?? null,
        nextOffset: info?.nextOffset ?? null,
        rows: info?.rows ?? null,
        snapshotOffset: newest === undefined ? null : formatOffset(newest.coveredPosition),
      };
    }),
  };
}

interface BucketDescription {
  /** The partition's value, in a partitioned table only. */
  readonly partition?: string | number;
  readonly bucket: number;
  readonly leader: string | null;
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number | null;
  readonly nextOffset: string | null;
  readonly rows: number | null;
  readonly snapshotOffset: string | null;
}

export interface TableDescription {
  readonly name: string;
  readonly definition: unknown;
  readonly buckets: readonly BucketDescription[];
}

/** A table's last recorded tiering round in a listing: `ageMs` is the router's now minus its time. */
interface TieredListing {
  readonly version: number;
  readonly snapshotId: number;
  readonly tieredAtMs: number;
  readonly records: number;
  readonly ageMs: number;
}

/** GET /v1/table (also GET /admin/tables): every table, its bucket count and kind, and its last tiering round. */
export async function tableList(env: Env): Promise<{ tables: { name: string; buckets: number; partitions: number | null; kind: "primary-key" | "log"; tiered: TieredListing | null }[] }> {
  const listing = await metaLogClient(env.META_LOG).listTables();
  const nowMs = Date.now();
  return {
    tables: listing.tables.map((table) => ({
      name: table.name,
      buckets: table.buckets,
      // null for a table without partitions (the recorded form leaves an absent partitionBy out).
      partitions: isPlainObject(table.definition) && typeof table.definition["partitionBy"] === "string" ? table.partitions : null,
      // The recorded form leaves an absent primary key out (definitionJson).
      kind: isPlainObject(table.definition) && Array.isArray(table.definition["primaryKey"]) ? "primary-key" : "log",
      tiered: table.tiered === null || table.tiered === undefined ? null : { ...table.tiered, ageMs: Math.max(0, nowMs - table.tiered.tieredAtMs) },
    })),
  };
}

/** Snapshots every primary-key bucket of the table now, at its leader (`mink table snapshot`). */
export async function snapshotTable(env: Env, name: string): Promise<{ partition?: string | number; bucket: number; coveredOffset: string | null; error: string | null }[] | null> {
  const lookup = await metaLogClient(env.META_LOG).lookupTable(name);
  if (lookup.table === null) return null;
  const definition = parseTableDefinition(lookup.table.definition);
  if (definition.ok && definition.value.primaryKey === null) {
    // A log table keeps no tablet: its changelog is all there is.
    return lookup.buckets.map((bucket) => ({ ...partitionOf(bucket), bucket: bucket.bucket, coveredOffset: null, error: "log_table" }));
  }
  const byLeader = leadersOf(lookup);
  const results = new Map<string, { coveredOffset: string | null; error: string | null }>();
  await Promise.all(
    [...byLeader].map(async ([leader, ids]) => {
      for (const { streamId, coveredOffset, error } of await streamNodeClient(env.STREAM_NODE, leader).snapshotBuckets(ids)) {
        results.set(streamId, { coveredOffset, error });
      }
    }),
  );
  return lookup.buckets.map((bucket) => ({ ...partitionOf(bucket), bucket: bucket.bucket, ...(results.get(bucket.streamId) ?? { coveredOffset: null, error: "not_loaded" }) }));
}

/** `{partition}` for a bucket of a partitioned table, nothing otherwise (the answers keep their shape without partitions). */
function partitionOf(bucket: TableLookup["buckets"][number]): { partition?: string | number } {
  return bucket.partition === null ? {} : { partition: bucket.partition };
}

/** The bucket stream ids of a table by leader. */
export function leadersOf(lookup: TableLookup): Map<string, string[]> {
  const byLeader = new Map<string, string[]>();
  for (const bucket of lookup.buckets) {
    const leader = bucket.leaderNode?.id;
    if (leader !== undefined) byLeader.set(leader, [...(byLeader.get(leader) ?? []), bucket.streamId]);
  }
  return byLeader;
}

/** Each leader's figures for its buckets, asked in parallel, bounded by BUCKET_INFO_TIMEOUT_MS. */
async function bucketInfos(env: Env, lookup: TableLookup): Promise<Map<string, BucketInfo>> {
  const byLeader = leadersOf(lookup);
  const infos = new Map<string, BucketInfo>();
  const late = new Promise<BucketInfo[]>((resolve) => setTimeout(() => resolve([]), BUCKET_INFO_TIMEOUT_MS));
  await Promise.all(
    [...byLeader].map(async ([leader, ids]) => {
      try {
        const answer = await Promise.race([streamNodeClient(env.STREAM_NODE, leader).tableBuckets(ids), late]);
        for (const info of answer) infos.set(info.streamId, info);
      } catch (error) {
        workerLog.log("worker.error", { during: "table_buckets", target: leader }, error);
      }
    }),
  );
  return infos;
}
