// Table rules (docs/tables.md, "Metadata and leaders"): CreateTable, DropTable and CommitBucketSnapshot.
// A table is a set of buckets and every bucket is a stream of the streams map, named under the reserved
// `__ds/table/` prefix: its owner is the bucket's leader and its epoch the leader epoch, so everything the log
// does for streams (opening fences the previous writer, re-leading a dead node's streams, transfers,
// collection) does it for buckets too. The rows are tested by name in test/core/meta/table-rules.test.ts.
import { bucketStreamName, encodePartition } from "../tables/bucketing.ts";
import { parseTableDefinition } from "../tables/definition.ts";
import { validateRow } from "../tables/rows.ts";
import type { AddPartition, CommitBucketSnapshot, CreateTable, DropTable, ValueOf } from "./commands.ts";
import { checkCoordinator } from "./failover-rules.ts";
import { jsonEqual } from "./json.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { isDeclaredDead, streamIdFor, withStream, type MetaState, type StreamRecord } from "./state.ts";
import type { BucketRecord, BucketSnapshot, TableRecord } from "./table-records.ts";

/** The most tables one deployment keeps (each is in every snapshot and every node's view). */
export const MAX_TABLES = 1000;
/** The most buckets of one table. */
export const MAX_BUCKETS_PER_TABLE = 1024;
/** The most buckets of all tables together: each is a stream some node leads. */
export const MAX_TOTAL_BUCKETS = 65_536;
/** The most partitions of one table (each has the definition's bucket count; all count toward MAX_TOTAL_BUCKETS). */
export const MAX_PARTITIONS_PER_TABLE = 1024;
/** Snapshots kept per bucket: the newest is restored, the one before it is the fallback for a corrupt part. */
export const MAX_KEPT_SNAPSHOTS = 2;

function totalBuckets(tables: ReadonlyMap<string, TableRecord>): number {
  let total = 0;
  for (const table of tables.values()) total += table.buckets.length;
  return total;
}

function withTable(state: MetaState, name: string, next: TableRecord | null): MetaState {
  const tables = new Map(state.tables);
  if (next === null) tables.delete(name);
  else tables.set(name, next);
  return { ...state, tables };
}

/** A leader must be registered and not declared dead (liveness as the log knows it). */
function checkLeader(state: MetaState, nodeId: string): string | null {
  const node = state.nodes.get(nodeId);
  if (node === undefined) return "not_registered";
  return isDeclaredDead(node) ? "declared_dead" : null;
}

/**
 * Table TB — CreateTable {name, definition, leaders (one per bucket), streamConfig, coordinator} at nowMs:
 * | row | condition                                                 | result                                                   |
 * | TB1 | coordinator fails table C                                 | as table C                                               |
 * | TB1b | the definition parses and leaders do not fit it (one per bucket; none when partitioned) | invalid {reason: "leaders_mismatch", leaders} |
 * | TB2 | a table of that name, same definition and bucket count (leaders [] for a partitioned table: the definition alone) | no-op: the existing record (answers 200) |
 * | TB3 | a table of that name, different definition or buckets     | conflict {reason: "definition_differs", buckets}         |
 * | TB4 | MAX_TABLES tables exist                                   | limit_reached {limit: "max_tables", max}                 |
 * | TB5 | the buckets would pass MAX_TOTAL_BUCKETS                  | limit_reached {limit: "max_total_buckets", max}          |
 * | TB6 | a leader is not registered or is declared dead            | invalid {bucket, node, reason}                           |
 * | TB7 | a bucket's stream name is taken (a drop not yet settled)  | conflict {reason: "bucket_stream_exists", bucket}         |
 * | TB8 | otherwise                                                 | accepted: bucket i a stream `__ds/table/<name>/b/<i>` placed on leaders[i] at epoch 0 (its first open takes epoch 1), ids `s<n>` consecutive; a partitioned table (leaders []) has no bucket until AddPartition |
 */
export function createTable(state: MetaState, command: CreateTable, nowMs: number): Outcome<ValueOf["CreateTable"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  const expected = leadersExpected(command.definition);
  if (expected !== null && command.leaders.length !== expected) {
    return rejected(state, "invalid", "one leader per bucket; none for a partitioned table", { reason: "leaders_mismatch", leaders: expected });
  }
  const existing = state.tables.get(command.name);
  if (existing !== undefined) {
    // A partitioned table is created without buckets (leaders []), so only its definition is compared.
    const sameBuckets = command.leaders.length === 0 || existing.buckets.length === command.leaders.length;
    if (sameBuckets && jsonEqual(existing.definition, command.definition)) return unchanged(state, { table: existing });
    return rejected(state, "conflict", "a table of that name exists with another definition", {
      reason: "definition_differs",
      table: existing.name,
      buckets: existing.buckets.length,
    });
  }
  if (state.tables.size >= MAX_TABLES) {
    return rejected(state, "limit_reached", "too many tables", { limit: "max_tables", max: MAX_TABLES });
  }
  const placed = placeBuckets(state, command.name, null, command.leaders, command.streamConfig);
  if (!("placed" in placed)) return placed;
  const table: TableRecord = { name: command.name, definition: command.definition, buckets: placed.buckets };
  return accepted(withTable(placed.state, table.name, table), { table });
}

/** TB1b: how many leaders a table definition takes (its bucket count; 0 when partitioned); null when it does not parse (kept opaque). */
function leadersExpected(definition: CreateTable["definition"]): number | null {
  const parsed = parseTableDefinition(definition);
  if (!parsed.ok) return null;
  return parsed.value.partitionBy === null ? parsed.value.buckets : 0;
}

/**
 * TB5..TB8 and AP8..AP11: the bucket streams of a new table or partition, bucket i placed on leaders[i] at
 * epoch 0 (its first open takes epoch 1) with consecutive fresh ids; or the rejection.
 */
function placeBuckets(
  state: MetaState,
  table: string,
  partition: string | number | null,
  leaders: readonly string[],
  config: StreamRecord["config"],
): { readonly placed: true; readonly state: MetaState; readonly buckets: BucketRecord[] } | Outcome<never> {
  if (totalBuckets(state.tables) + leaders.length > MAX_TOTAL_BUCKETS) {
    return rejected(state, "limit_reached", "too many buckets in all tables", { limit: "max_total_buckets", max: MAX_TOTAL_BUCKETS });
  }
  const partitionKey = partition === null ? null : encodePartition(partition);
  for (const [bucket, node] of leaders.entries()) {
    const reason = checkLeader(state, node);
    if (reason !== null) return rejected(state, "invalid", "a bucket leader must be a registered live node", { bucket, node, reason });
    if (state.streams.idByName(bucketStreamName(table, partitionKey, bucket)) !== undefined) {
      return rejected(state, "conflict", "a bucket stream of that table still exists", { reason: "bucket_stream_exists", bucket });
    }
  }
  let next: MetaState = { ...state, nextStreamSeq: state.nextStreamSeq + leaders.length };
  const buckets = leaders.map((leader, bucket): BucketRecord => {
    const stream: StreamRecord = {
      id: streamIdFor(state.nextStreamSeq + bucket),
      name: bucketStreamName(table, partitionKey, bucket),
      owner: leader,
      epoch: 0,
      ownership: "placed",
      config,
    };
    next = withStream(next, stream.id, stream);
    return { partition, bucket, streamId: stream.id, snapshots: [] };
  });
  return { placed: true, state: next, buckets };
}

/**
 * Table AP — AddPartition {table, value, leaders, streamConfig, coordinator} at nowMs:
 * | row  | condition                                                        | result                                        |
 * | AP1  | coordinator fails table C                                        | as table C                                    |
 * | AP2  | no such table                                                    | not_found {table}                             |
 * | AP3  | the table is not partitioned (or its definition does not parse)  | invalid {reason: "not_partitioned"}           |
 * | AP4  | the value does not fit the partition column                      | invalid {field: "value"}                      |
 * | AP5  | the partition exists                                             | no-op: its buckets                            |
 * | AP6  | leaders.length is not the definition's bucket count              | invalid {reason: "leaders_mismatch", buckets} |
 * | AP7  | the table has MAX_PARTITIONS_PER_TABLE partitions                | limit_reached {limit: "max_partitions", max}  |
 * | AP8  | the buckets would pass MAX_TOTAL_BUCKETS                         | limit_reached {limit: "max_total_buckets", max} |
 * | AP9  | a leader is not registered or is declared dead                   | invalid {bucket, node, reason}                |
 * | AP10 | a bucket's stream name is taken (a drop not yet settled)         | conflict {reason: "bucket_stream_exists", bucket} |
 * | AP11 | otherwise                                                        | accepted: bucket i a stream `__ds/table/<t>/p/<encodePartition(value)>/b/<i>` placed on leaders[i] at epoch 0 |
 */
export function addPartition(state: MetaState, command: AddPartition, nowMs: number): Outcome<ValueOf["AddPartition"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  const table = state.tables.get(command.table);
  if (table === undefined) return rejected(state, "not_found", "no such table", { table: command.table });
  const definition = parseTableDefinition(table.definition);
  const column = definition.ok ? definition.value.columns.find((c) => c.name === definition.value.partitionBy) : undefined;
  if (!definition.ok || column === undefined) return rejected(state, "invalid", "the table is not partitioned", { reason: "not_partitioned", table: table.name });
  const fits = validateRow({ ...definition.value, columns: [column] }, { [column.name]: command.value });
  if (!fits.ok) return rejected(state, "invalid", `the partition value does not fit column '${column.name}'`, { field: "value" });
  const key = encodePartition(command.value);
  const existing = table.buckets.filter((b) => b.partition !== null && encodePartition(b.partition) === key);
  if (existing.length > 0) return unchanged(state, { table, buckets: existing });
  if (command.leaders.length !== definition.value.buckets) {
    return rejected(state, "invalid", "one leader per bucket of the table", { reason: "leaders_mismatch", buckets: definition.value.buckets });
  }
  if (partitionCount(table) >= MAX_PARTITIONS_PER_TABLE) {
    return rejected(state, "limit_reached", "too many partitions in this table", { limit: "max_partitions", max: MAX_PARTITIONS_PER_TABLE });
  }
  const placed = placeBuckets(state, table.name, command.value, command.leaders, command.streamConfig);
  if (!("placed" in placed)) return placed;
  const next: TableRecord = { ...table, buckets: [...table.buckets, ...placed.buckets] };
  return accepted(withTable(placed.state, table.name, next), { table: next, buckets: placed.buckets });
}

/** The partitions of a table: the buckets numbered 0, one per partition (none for a table without partitions). */
export function partitionCount(table: TableRecord): number {
  let count = 0;
  for (const bucket of table.buckets) if (bucket.partition !== null && bucket.bucket === 0) count++;
  return count;
}

/**
 * Table TD — DropTable {name, by?}:
 * | row | condition               | result                                                                        |
 * | TD1 | proposer fails table P  | as table P                                                                    |
 * | TD2 | no such table           | not_found {table}                                                             |
 * | TD3 | otherwise               | accepted: the record and its bucket streams removed (as DeleteStream: the leaders learn it from the view); the stream ids are never reused, so collection (table GC) deletes their objects |
 */
export function dropTable(state: MetaState, command: DropTable): Outcome<ValueOf["DropTable"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const table = state.tables.get(command.name);
  if (table === undefined) return rejected(state, "not_found", "no such table", { table: command.name });
  let next = withTable(state, table.name, null);
  for (const { streamId } of table.buckets) {
    if (next.streams.get(streamId) === undefined) continue;
    next = withStream({ ...next, transfers: next.transfers.delete(streamId) }, streamId, null);
  }
  return accepted(next, { table });
}

/**
 * Table CB — CommitBucketSnapshot {table, bucket, streamId, epoch, snapshot, by}:
 * | row | condition                                                          | result                                   |
 * | CB1 | proposer fails table P                                             | as table P                               |
 * | CB2 | no such table or bucket, or the bucket has another stream (dropped and created again) | not_found {table, bucket} |
 * | CB3 | the bucket stream is not opened by the proposer at `epoch` (a stale leader) | fenced {owner, epoch}           |
 * | CB4 | the snapshot covers no more than the newest kept one               | no-op (a retried commit, or a late one)  |
 * | CB5 | otherwise                                                          | accepted: kept = the newest MAX_KEPT_SNAPSHOTS; `dropped` lists the ones no longer kept |
 */
export function commitBucketSnapshot(state: MetaState, command: CommitBucketSnapshot): Outcome<ValueOf["CommitBucketSnapshot"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const table = state.tables.get(command.table);
  // By stream id: it names one bucket of one partition (and not a bucket dropped and created again).
  const bucket = table?.buckets.find((b) => b.streamId === command.streamId);
  if (table === undefined || bucket === undefined || bucket.bucket !== command.bucket) {
    return rejected(state, "not_found", "no such table bucket", { table: command.table, bucket: command.bucket });
  }
  const stream = state.streams.get(bucket.streamId);
  if (stream === undefined || stream.ownership !== "opened" || stream.owner !== command.by.nodeId || stream.epoch !== command.epoch) {
    return rejected(state, "fenced", "not the bucket's leader at this epoch", { owner: stream?.owner ?? null, epoch: stream?.epoch ?? 0 });
  }
  const newest = bucket.snapshots.at(-1);
  if (newest !== undefined && command.snapshot.coveredPosition <= newest.coveredPosition) return unchanged(state, { bucket, dropped: [] });
  const all: BucketSnapshot[] = [...bucket.snapshots, command.snapshot];
  const kept = all.slice(-MAX_KEPT_SNAPSHOTS);
  const next: BucketRecord = { ...bucket, snapshots: kept };
  const buckets = table.buckets.map((b) => (b.streamId === next.streamId ? next : b));
  return accepted(withTable(state, table.name, { ...table, buckets }), { bucket: next, dropped: all.slice(0, all.length - kept.length) });
}
