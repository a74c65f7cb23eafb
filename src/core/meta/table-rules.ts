// Table rules (docs/tables.md): CreateTable, DropTable and LeadBucket. A table is a set of buckets;
// each bucket has one leader and a leader epoch that only grows, and its own stream id (`s<n>`, from the
// same sequence as streams, so object-store prefixes never collide and collection finds them). The rows are
// tested by name in test/core/meta/table-rules.test.ts.
import type { CreateTable, DropTable, LeadBucket, ValueOf } from "./commands.ts";
import { checkCoordinator } from "./failover-rules.ts";
import { jsonEqual } from "./json.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { isDeclaredDead, streamIdFor, type MetaState } from "./state.ts";
import type { BucketRecord, TableRecord } from "./table-records.ts";

/** The most tables one deployment keeps (each is in every snapshot and every node's view). */
export const MAX_TABLES = 1000;
/** The most buckets of one table. */
export const MAX_BUCKETS_PER_TABLE = 1024;
/** The most buckets of all tables together: each is a stream some node leads. */
export const MAX_TOTAL_BUCKETS = 65_536;

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
 * Table TB — CreateTable {name, definition, leaders (one per bucket), coordinator} at nowMs:
 * | row | condition                                                 | result                                                   |
 * | TB1 | coordinator fails table C                                 | as table C                                               |
 * | TB2 | a table of that name, same definition and bucket count    | no-op: the existing record (answers 200)                 |
 * | TB3 | a table of that name, different definition or buckets     | conflict {reason: "definition_differs", buckets}         |
 * | TB4 | MAX_TABLES tables exist                                   | limit_reached {limit: "max_tables", max}                 |
 * | TB5 | the buckets would pass MAX_TOTAL_BUCKETS                  | limit_reached {limit: "max_total_buckets", max}          |
 * | TB6 | a leader is not registered or is declared dead            | invalid {bucket, node, reason}                           |
 * | TB7 | otherwise                                                 | accepted: bucket i led by leaders[i] at leader epoch 1, stream ids `s<n>` consecutive |
 */
export function createTable(state: MetaState, command: CreateTable, nowMs: number): Outcome<ValueOf["CreateTable"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  const existing = state.tables.get(command.name);
  if (existing !== undefined) {
    if (existing.buckets.length === command.leaders.length && jsonEqual(existing.definition, command.definition)) {
      return unchanged(state, { table: existing });
    }
    return rejected(state, "conflict", "a table of that name exists with another definition", {
      reason: "definition_differs",
      table: existing.name,
      buckets: existing.buckets.length,
    });
  }
  if (state.tables.size >= MAX_TABLES) {
    return rejected(state, "limit_reached", "too many tables", { limit: "max_tables", max: MAX_TABLES });
  }
  if (totalBuckets(state.tables) + command.leaders.length > MAX_TOTAL_BUCKETS) {
    return rejected(state, "limit_reached", "too many buckets in all tables", { limit: "max_total_buckets", max: MAX_TOTAL_BUCKETS });
  }
  for (const [bucket, node] of command.leaders.entries()) {
    const reason = checkLeader(state, node);
    if (reason !== null) return rejected(state, "invalid", "a bucket leader must be a registered live node", { bucket, node, reason });
  }
  const buckets = command.leaders.map((leader, bucket) => ({
    bucket,
    leader,
    leaderEpoch: 1,
    streamId: streamIdFor(state.nextStreamSeq + bucket),
  }));
  const table: TableRecord = { name: command.name, definition: command.definition, buckets };
  const next = withTable({ ...state, nextStreamSeq: state.nextStreamSeq + buckets.length }, table.name, table);
  return accepted(next, { table });
}

/**
 * Table TD — DropTable {name, by?}:
 * | row | condition               | result                                                                        |
 * | TD1 | proposer fails table P  | as table P                                                                    |
 * | TD2 | no such table           | not_found {table}                                                             |
 * | TD3 | otherwise               | accepted: the record removed; its bucket stream ids are never reused, so collection (table GC) deletes their objects |
 */
export function dropTable(state: MetaState, command: DropTable): Outcome<ValueOf["DropTable"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const table = state.tables.get(command.name);
  if (table === undefined) return rejected(state, "not_found", "no such table", { table: command.name });
  return accepted(withTable(state, table.name, null), { table });
}

/**
 * Table LB — LeadBucket {table, bucket, node, coordinator} at nowMs:
 * | row | condition                                  | result                                                           |
 * | LB1 | coordinator fails table C (a stale coordinator epoch) | as table C: fenced {holder, coordinatorEpoch}          |
 * | LB2 | no such table, or no such bucket           | not_found {table, bucket}                                        |
 * | LB3 | the node is not registered or declared dead | invalid {node, reason}                                          |
 * | LB4 | otherwise (also the same leader: a restart) | accepted: leader = node, leaderEpoch + 1 (strictly above every earlier one) |
 */
export function leadBucket(state: MetaState, command: LeadBucket, nowMs: number): Outcome<ValueOf["LeadBucket"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  const table = state.tables.get(command.table);
  const current = table?.buckets[command.bucket];
  if (table === undefined || current === undefined) {
    return rejected(state, "not_found", "no such table bucket", { table: command.table, bucket: command.bucket });
  }
  const reason = checkLeader(state, command.node);
  if (reason !== null) return rejected(state, "invalid", "a bucket leader must be a registered live node", { node: command.node, reason });
  const bucket: BucketRecord = { ...current, leader: command.node, leaderEpoch: current.leaderEpoch + 1 };
  const buckets = table.buckets.map((b) => (b.bucket === bucket.bucket ? bucket : b));
  return accepted(withTable(state, table.name, { ...table, buckets }), { bucket });
}
