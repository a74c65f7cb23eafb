// Failover rules (docs/failover.md): the coordinator's authority, declaring an incarnation dead,
// re-leading its streams, and the takeover of its WAL chain, claimed once and completed once. One function
// per table; the rows are tested by name in test/core/meta/failover-rules.test.ts.
import { domainError, type DomainError } from "../errors.ts";
import type { ClaimTakeover, CompleteTakeover, Coordinator, DeclareDead, ReassignStreams, ValueOf } from "./commands.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { isEligible } from "./placement.ts";
import { isDeclaredDead, withNode, withStream, type MetaState, type NodeRecord, type StreamRecord } from "./state.ts";

export { isDeclaredDead };

/** The most moves one ReassignStreams entry carries: a dead node with 100,000 streams takes 100 entries. */
export const MAX_REASSIGN_BATCH = 1000;

/**
 * Table C — a coordinator command carries {nodeId, nodeEpoch, coordinatorEpoch}, checked at the entry's time:
 * | row | condition                                                         | result                                      |
 * | C1  | proposer fails table P                                            | as table P                                  |
 * | C2  | no lease, or held by another node, node epoch or coordinator epoch | fenced {holder, coordinatorEpoch}           |
 * | C3  | the lease expired                                                 | fenced {holder, coordinatorEpoch, expiresAtMs} |
 * | C4  | otherwise                                                         | passes                                      |
 */
export function checkCoordinator(state: MetaState, coordinator: Coordinator, nowMs: number): DomainError | null {
  const proposerError = checkProposer(state, coordinator);
  if (proposerError !== null) return proposerError;
  const lease = state.lease;
  if (
    lease === null ||
    lease.holder !== coordinator.nodeId ||
    lease.holderEpoch !== coordinator.nodeEpoch ||
    lease.coordinatorEpoch !== coordinator.coordinatorEpoch
  ) {
    return domainError("fenced", "not the coordinator at this coordinator epoch", {
      holder: lease?.holder ?? null,
      coordinatorEpoch: lease?.coordinatorEpoch ?? 0,
    });
  }
  if (nowMs >= lease.expiresAtMs) {
    return domainError("fenced", "the coordinator lease expired", {
      holder: lease.holder,
      coordinatorEpoch: lease.coordinatorEpoch,
      expiresAtMs: lease.expiresAtMs,
    });
  }
  return null;
}


/**
 * Table DD — DeclareDead {nodeId, nodeEpoch E, coordinator}:
 * | row | condition                                   | result                                                          |
 * | DD1 | coordinator fails table C                   | as table C                                                      |
 * | DD2 | node not registered                         | not_found {nodeId}                                              |
 * | DD3 | already declared dead at E (taken over or not) | no-op                                                        |
 * | DD4 | the node's epoch is not E (it registered again) | stale_epoch {currentEpoch}                                  |
 * | DD5 | the node is the coordinator itself          | invalid                                                         |
 * | DD6 | otherwise                                   | accepted: epoch E + 1 (E's proposals refused), dead {epoch E}; a dead incarnation not taken over yet is replaced (the new takeover covers its chain too) |
 */
export function declareDead(state: MetaState, command: DeclareDead, nowMs: number): Outcome<ValueOf["DeclareDead"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  const node = state.nodes.get(command.nodeId);
  if (node === undefined) return rejected(state, "not_found", "node is not registered", { nodeId: command.nodeId });
  if (isDeclaredDead(node) && node.epoch === command.nodeEpoch + 1) return unchanged(state, { node });
  if (node.epoch !== command.nodeEpoch) {
    return rejected(state, "stale_epoch", "the node registered at another epoch", { nodeId: node.id, currentEpoch: node.epoch });
  }
  if (node.id === command.coordinator.nodeId) return rejected(state, "invalid", "the coordinator cannot declare itself dead");
  const declared: NodeRecord = { ...node, epoch: command.nodeEpoch + 1, dead: { epoch: command.nodeEpoch } };
  return accepted(withNode(state, declared), { node: declared });
}

/**
 * Table RA — ReassignStreams {moves, coordinator}, each move {streamId, target}:
 * | row | condition                                                   | result                                         |
 * | RA1 | coordinator fails table C                                   | as table C                                     |
 * | RA2 | a target is not registered, has no slots, drains or is declared dead | invalid {target}: nothing moves       |
 * | RA3 | a move's stream is gone, not placed or opened, or its owner is not declared dead, or is the target | that move is skipped |
 * | RA4 | opened by the dead owner                                    | placed on the target at the same epoch, orphanOf {owner, dead epoch} (none once that epoch is taken over); a pending transfer is dropped |
 * | RA5 | placed on the dead owner                                    | placed on the target, its orphanOf kept; a pending transfer is dropped |
 * | RA6 | every move skipped                                          | no-op                                          |
 */
export function reassignStreams(state: MetaState, command: ReassignStreams, nowMs: number): Outcome<ValueOf["ReassignStreams"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  for (const { target } of command.moves) {
    const node = state.nodes.get(target);
    if (node === undefined || !isEligible(node) || isDeclaredDead(node)) {
      return rejected(state, "invalid", "a reassignment target must be a registered, eligible, live node", { target });
    }
  }
  let next = state;
  const streams: StreamRecord[] = [];
  const skipped: string[] = [];
  for (const { streamId, target } of command.moves) {
    const moved = reassigned(next, streamId, target);
    if (moved === null) {
      skipped.push(streamId);
      continue;
    }
    next = withStream({ ...next, transfers: next.transfers.delete(streamId) }, streamId, moved);
    streams.push(moved);
  }
  if (streams.length === 0) return unchanged(state, { streams, skipped });
  return accepted(next, { streams, skipped });
}

/** The stream re-led to `target` (RA4, RA5), or null when the move is skipped (RA3). */
function reassigned(state: MetaState, streamId: string, target: string): StreamRecord | null {
  const stream = state.streams.get(streamId);
  if (stream === undefined || stream.owner === null || stream.owner === target) return null;
  if (stream.ownership !== "placed" && stream.ownership !== "opened") return null;
  const owner = state.nodes.get(stream.owner);
  if (owner === undefined || !isDeclaredDead(owner)) return null;
  // Once the dead epoch is taken over (dead cleared) nothing of it is left to wait for.
  const orphanOf =
    stream.ownership === "opened" && owner.dead !== undefined ? { node: owner.id, nodeEpoch: owner.dead.epoch } : stream.orphanOf;
  const { id, name, epoch, config } = stream;
  return orphanOf === undefined
    ? { id, name, owner: target, epoch, ownership: "placed", config }
    : { id, name, owner: target, epoch, ownership: "placed", config, orphanOf };
}

/** Whether the takeover of `nodeId`'s incarnation `nodeEpoch` is complete (everything it held is in manifests). */
export function isTakenOver(state: MetaState, nodeId: string, nodeEpoch: number): boolean {
  return (state.nodes.get(nodeId)?.takenOver ?? -1) >= nodeEpoch;
}

/**
 * Table CK — ClaimTakeover {nodeId, nodeEpoch E, by, ttlMs} at nowMs:
 * | row | condition                                        | result                                                 |
 * | CK1 | `by` fails table P                               | as table P                                             |
 * | CK2 | node not registered                              | not_found {nodeId}                                     |
 * | CK3 | E is taken over already                          | no-op: the record shows takenOver ≥ E (nothing to do)  |
 * | CK4 | the dead incarnation is a later one              | stale_epoch {deadEpoch: its epoch}: take that one over |
 * | CK5 | E is not declared dead                           | invalid {nodeId, nodeEpoch}                            |
 * | CK6 | claimed by another node and not expired          | held_by {owner, expiresAtMs}: wait for its result      |
 * | CK7 | otherwise (unclaimed, expired, or this node's)   | accepted: claimed by `by` until nowMs + ttlMs (invalid {ttlMs} if that is not a safe integer: no snapshot could hold it) |
 */
export function claimTakeover(state: MetaState, command: ClaimTakeover, nowMs: number): Outcome<ValueOf["ClaimTakeover"]> {
  const found = deadIncarnationOfCommand(state, command);
  if ("outcome" in found) return found.outcome;
  const { node } = found;
  const claim = node.dead?.claim;
  if (claim !== undefined && claim.by !== command.by.nodeId && nowMs < claim.expiresAtMs) {
    return rejected(state, "held_by", "another node is taking this incarnation over", { owner: claim.by, expiresAtMs: claim.expiresAtMs });
  }
  const expiresAtMs = nowMs + command.ttlMs;
  if (!Number.isSafeInteger(expiresAtMs)) return rejected(state, "invalid", "the claim would expire too late", { ttlMs: command.ttlMs });
  const claimed: NodeRecord = { ...node, dead: { epoch: command.nodeEpoch, claim: { by: command.by.nodeId, expiresAtMs } } };
  return accepted(withNode(state, claimed), { node: claimed });
}

/**
 * Table CO — CompleteTakeover {nodeId, nodeEpoch E, by}:
 * | row | condition                              | result                                                        |
 * | CO1 | `by` fails table P                     | as table P                                                    |
 * | CO2 | node not registered                    | not_found {nodeId}                                            |
 * | CO3 | E is taken over already                | no-op (a retried completion)                                  |
 * | CO4 | E is not the dead incarnation          | as CK4 and CK5                                                |
 * | CO5 | not claimed by `by`                    | held_by {owner}: only the claimer completes                   |
 * | CO6 | otherwise                              | accepted: dead cleared, takenOver = E (its orphans may open)  |
 */
export function completeTakeover(state: MetaState, command: CompleteTakeover): Outcome<ValueOf["CompleteTakeover"]> {
  const found = deadIncarnationOfCommand(state, command);
  if ("outcome" in found) return found.outcome;
  const { node } = found;
  const claim = node.dead?.claim;
  if (claim?.by !== command.by.nodeId) {
    return rejected(state, "held_by", "claim the takeover before completing it", { owner: claim?.by ?? null });
  }
  const { dead: _dead, ...rest } = node;
  const done: NodeRecord = { ...rest, takenOver: command.nodeEpoch };
  return accepted(withNode(state, done), { node: done });
}

/**
 * Rows 1-4 of tables CK and CO: the proposer passes table P, the node is registered, its incarnation is not
 * taken over already (a no-op) and is the dead one. Either the node, or the outcome those rows decide.
 */
function deadIncarnationOfCommand(
  state: MetaState,
  command: ClaimTakeover | CompleteTakeover,
): { readonly node: NodeRecord } | { readonly outcome: Outcome<{ readonly node: NodeRecord }> } {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return { outcome: rejectedWith(state, proposerError) };
  const node = state.nodes.get(command.nodeId);
  if (node === undefined) return { outcome: rejected(state, "not_found", "node is not registered", { nodeId: command.nodeId }) };
  if (isTakenOver(state, node.id, command.nodeEpoch)) return { outcome: unchanged(state, { node }) };
  const deadError = checkDeadIncarnation(node, command.nodeEpoch);
  if (deadError !== null) return { outcome: rejectedWith(state, deadError) };
  return { node };
}

/** CK4, CK5: `nodeEpoch` must be the node's dead incarnation. */
function checkDeadIncarnation(node: NodeRecord, nodeEpoch: number): DomainError | null {
  if (node.dead !== undefined && node.dead.epoch > nodeEpoch) {
    return domainError("stale_epoch", "a later incarnation of this node was declared dead", { nodeId: node.id, deadEpoch: node.dead.epoch });
  }
  if (node.dead?.epoch !== nodeEpoch) {
    return domainError("invalid", "this incarnation is not declared dead", { nodeId: node.id, nodeEpoch });
  }
  return null;
}

/**
 * The open gate of table OS (row OS3b): a stream a dead incarnation may still hold data of opens only once
 * that incarnation is taken over. Null: it may open. The incarnation is the stream's orphanOf, or, for a
 * stream still placed on or opened by its owner, the owner's own dead incarnation (a node back from the
 * dead opens its old streams only after its old chain is in manifests).
 */
export function takeoverGate(state: MetaState, stream: StreamRecord): DomainError | null {
  // Both are checked (the orphan's dead incarnation first): the owner's own dead past cannot hold data of
  // an orphan it never opened, but an owner that is still being taken over opens nothing meanwhile.
  const candidates = [
    stream.orphanOf,
    stream.owner !== null && stream.ownership !== "closed" ? deadIncarnationOf(state, stream.owner) : undefined,
  ];
  for (const dead of candidates) {
    if (dead === undefined || isTakenOver(state, dead.node, dead.nodeEpoch)) continue;
    return domainError("unavailable", "the stream's last owner is being taken over; retry", {
      streamId: stream.id,
      deadNode: dead.node,
      deadEpoch: dead.nodeEpoch,
    });
  }
  return null;
}

function deadIncarnationOf(state: MetaState, nodeId: string): { node: string; nodeEpoch: number } | undefined {
  const dead = state.nodes.get(nodeId)?.dead;
  return dead === undefined ? undefined : { node: nodeId, nodeEpoch: dead.epoch };
}
