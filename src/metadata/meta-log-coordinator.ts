// The coordinator's requests to the metadata log (docs/failover.md, docs/tables.md): a tick that declares
// dead nodes and re-leads their streams, CreateTable and AddPartition with leaders chosen over the live
// nodes, and the garbage collector's question. Each is fenced by the coordinator's epoch first and runs in
// one synchronous step over the log, so it never acts on a stale view.
import {
  checkCoordinator,
  collectableStreams,
  deadToDeclare,
  isEligible,
  MAX_REASSIGN_BATCH,
  planReassignments,
  type Coordinator,
} from "../core/meta/index.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../core/meta/json.ts";
import { assignBuckets } from "../core/tables/assignment.ts";
import type { CollectionAnswer, CoordinatorTickAnswer, ProposeResult } from "../ports/meta-log-client.ts";
import type { ProposingLog } from "./proposing-log.ts";

/**
 * One coordinator tick: every registered node that stopped heartbeating is declared dead at its epoch,
 * then up to `maxMoves` streams of declared-dead nodes are re-led to the least-loaded live nodes, in
 * entries of at most MAX_REASSIGN_BATCH moves (a dead node with 100,000 streams takes many ticks of small
 * entries, and no tick holds the log for long). Every command carries the coordinator's epoch: a stale
 * coordinator's tick is refused at its first command and changes nothing.
 */
export function coordinatorTick(log: ProposingLog, coordinator: Coordinator, maxMoves: number): CoordinatorTickAnswer {
  // Fenced before anything is decided: a stale coordinator learns it at once, even with nothing to do.
  const fenced = checkCoordinator(log.state, coordinator, log.now());
  if (fenced !== null) return { ok: false, error: fenced };
  const live = new Set(log.liveNodes().map((node) => node.id));
  const declared: string[] = [];
  for (const node of deadToDeclare(log.state, live, coordinator.nodeId)) {
    const result = log.propose({ type: "DeclareDead", nodeId: node.id, nodeEpoch: node.epoch, coordinator });
    if (!result.ok && result.error.code === "fenced") return { ok: false, error: result.error };
    if (result.ok && result.changed) declared.push(node.id);
  }
  const moves = planReassignments(log.state, live, Math.max(0, maxMoves));
  let reassigned = 0;
  for (let i = 0; i < moves.length; i += MAX_REASSIGN_BATCH) {
    const result = log.propose({ type: "ReassignStreams", moves: moves.slice(i, i + MAX_REASSIGN_BATCH), coordinator });
    if (!result.ok) return { ok: false, error: result.error };
    reassigned += (result as ProposeResult<"ReassignStreams"> & { ok: true }).value.streams.length;
  }
  const orphansLeft = planReassignments(log.state, live, 1).length > 0;
  return { ok: true, declared, reassigned, orphansLeft, version: log.state.version };
}

/**
 * CreateTable for the coordinator (docs/tables.md, table A): the buckets' leaders assigned over the nodes
 * live now that take placements, here where liveness is, then proposed at the coordinator's epoch.
 */
export function createTable(
  log: ProposingLog,
  coordinator: Coordinator,
  name: string,
  definition: JsonValue,
  buckets: number,
  streamConfig: JsonObject,
): ProposeResult<"CreateTable"> {
  const leaders = liveLeaders(log, coordinator, buckets);
  if (!leaders.ok) return { ok: false, error: leaders.error, version: log.state.version };
  const command = { type: "CreateTable", name, definition, leaders: leaders.nodes, streamConfig, coordinator } as const;
  return log.propose(command) as ProposeResult<"CreateTable">;
}

/**
 * AddPartition at the coordinator's epoch: the partition's buckets (the table's bucket count) led by the
 * live eligible nodes as a new table's are (table A). A repeat answers the existing partition.
 */
export function addPartition(log: ProposingLog, coordinator: Coordinator, table: string, value: string | number, streamConfig: JsonObject): ProposeResult<"AddPartition"> {
  const definition = log.state.tables.get(String(table))?.definition;
  const buckets = isJsonObject(definition) && typeof definition["buckets"] === "number" ? definition["buckets"] : 0;
  const leaders = liveLeaders(log, coordinator, buckets);
  if (!leaders.ok) return { ok: false, error: leaders.error, version: log.state.version };
  const command = { type: "AddPartition", table, value, leaders: leaders.nodes, streamConfig, coordinator } as const;
  return log.propose(command) as ProposeResult<"AddPartition">;
}

/** The coordinator fenced, then `buckets` leaders assigned over the live nodes that take placements. */
function liveLeaders(log: ProposingLog, coordinator: Coordinator, buckets: number) {
  const fenced = checkCoordinator(log.state, coordinator, log.now());
  if (fenced !== null) return { ok: false, error: fenced } as const;
  const live = log.liveNodes().filter(isEligible).map((node) => node.id);
  const assigned = assignBuckets(buckets, live, log.now());
  if (!assigned.ok) return { ok: false, error: assigned.error } as const;
  return { ok: true, nodes: assigned.value.map((a) => a.node) } as const;
}

/** Which of these stream ids found in the store may be collected (table GC), for the coordinator only. */
export function collectable(log: ProposingLog, coordinator: Coordinator, streamIds: readonly string[]): CollectionAnswer {
  const fenced = checkCoordinator(log.state, coordinator, log.now());
  if (fenced !== null) return { ok: false, error: fenced };
  return { ok: true, ...collectableStreams(log.state, streamIds) };
}
