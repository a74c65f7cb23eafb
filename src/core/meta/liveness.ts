// Node liveness is soft state kept by MetaLog (heartbeats are not log entries): a node is live while its
// last heartbeat is younger than leaseTtlMs. These functions decide; MetaLog keeps the map in memory.
import type { DomainError } from "../errors.ts";
import { checkProposer } from "./node-rules.ts";
import type { MetaState, NodeRecord } from "./state.ts";

export const DEFAULT_LEASE_TTL_MS = 30_000;

/**
 * Table HB — heartbeat {nodeId, nodeEpoch} at nowMs:
 * | row | condition                     | result                                         |
 * | HB1 | node not registered           | not_found {nodeId}                             |
 * | HB2 | epoch lower than recorded     | stale_epoch {currentEpoch}: the old instance learns it is replaced |
 * | HB3 | epoch higher than recorded    | invalid {currentEpoch}: register first          |
 * | HB4 | epoch equal                   | accepted: last seen = nowMs                    |
 */
export function checkHeartbeat(state: MetaState, nodeId: string, nodeEpoch: number): DomainError | null {
  return checkProposer(state, { nodeId, nodeEpoch });
}

/**
 * After MetaLog itself restarts, the heartbeats it had are gone. Rather than declaring every node dead at
 * once (and letting the coordinator reassign everything), each registered node starts as last seen at the
 * load time: a node that is really gone is declared dead one leaseTtlMs later.
 */
export function seedLiveness(state: MetaState, nowMs: number): Map<string, number> {
  return new Map([...state.nodes.keys()].map((id) => [id, nowMs]));
}

function isLive(lastSeenMs: number | undefined, nowMs: number, leaseTtlMs: number): boolean {
  return lastSeenMs !== undefined && nowMs - lastSeenMs < leaseTtlMs;
}

/** Registered nodes whose last heartbeat is younger than leaseTtlMs, by id. */
export function liveNodes(
  state: MetaState,
  lastSeenMs: ReadonlyMap<string, number>,
  nowMs: number,
  leaseTtlMs: number = DEFAULT_LEASE_TTL_MS,
): NodeRecord[] {
  return [...state.nodes.values()]
    .filter((node) => isLive(lastSeenMs.get(node.id), nowMs, leaseTtlMs))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
