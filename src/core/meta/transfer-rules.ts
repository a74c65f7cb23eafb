// Transfer rules (docs/transfers.md): BeginTransfer records (source, target) for a stream; the source closes at E
// and proposes CompleteTransfer(E), which re-points the stream at the target and drops the record in one
// step. Rows are tested by name in test/core/meta/transfer-rules.test.ts.
import type { BeginTransfer, CompleteTransfer, ValueOf } from "./commands.ts";
import { isDeclaredDead, takeoverGate } from "./failover-rules.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { withStream, type MetaState, type PendingTransfer, type StreamRecord } from "./state.ts";

/**
 * Table BT — BeginTransfer {streamId, target}:
 * | row | condition                                  | result                                                 |
 * | BT1 | proposer fails table P                     | as table P                                             |
 * | BT2 | stream not found                           | not_found {streamId}                                   |
 * | BT3 | the same transfer is pending               | no-op                                                  |
 * | BT4 | a transfer to another target is pending    | transfer_pending {source, target}                      |
 * | BT5 | target not registered                      | not_found {target}                                     |
 * | BT6 | target has no slots or is draining         | invalid {target, slots, draining}                      |
 * | BT7 | stream `unplaced`                          | invalid {ownership}: nothing to hand off               |
 * | BT8 | the target already owns the stream         | invalid {owner}                                        |
 * | BT8b| the target or the owner is declared dead    | unavailable {node}: the coordinator re-leads a dead node's streams |
 * | BT8c| a dead incarnation it may hold data of is not taken over yet (takeoverGate) | unavailable {deadNode, deadEpoch} |
 * | BT9 | otherwise                                  | accepted: pending {source: owner, target}; routing goes to the target |
 */
export function beginTransfer(state: MetaState, command: BeginTransfer): Outcome<ValueOf["BeginTransfer"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const stream = state.streams.get(command.streamId);
  if (stream === undefined) return rejected(state, "not_found", "no such stream", { streamId: command.streamId });
  const pending = state.transfers.get(stream.id);
  if (pending !== undefined) {
    if (pending.target === command.target) return unchanged(state, { stream, transfer: pending });
    return rejected(state, "transfer_pending", "another transfer of this stream is pending", {
      streamId: stream.id,
      source: pending.source,
      target: pending.target,
    });
  }
  const target = state.nodes.get(command.target);
  if (target === undefined) return rejected(state, "not_found", "target node is not registered", { target: command.target });
  if (target.slots === 0 || target.draining) {
    return rejected(state, "invalid", "target node takes no streams", {
      target: target.id,
      slots: target.slots,
      draining: target.draining,
    });
  }
  if (stream.ownership === "unplaced" || stream.owner === null) {
    return rejected(state, "invalid", "the stream is not placed: nothing to transfer", {
      streamId: stream.id,
      ownership: stream.ownership,
    });
  }
  if (stream.owner === target.id) {
    return rejected(state, "invalid", "the target already owns the stream", { streamId: stream.id, owner: stream.owner });
  }
  const owner = state.nodes.get(stream.owner);
  for (const node of [target, owner]) {
    if (node !== undefined && isDeclaredDead(node)) {
      return rejected(state, "unavailable", "a node of this transfer is declared dead", { streamId: stream.id, node: node.id });
    }
  }
  const gateError = takeoverGate(state, stream);
  if (gateError !== null) return rejectedWith(state, gateError);
  const transfer: PendingTransfer = { source: stream.owner, target: target.id };
  return accepted({ ...state, transfers: state.transfers.set(stream.id, transfer) }, { stream, transfer });
}

/**
 * Table CT — CompleteTransfer {streamId, closedEpoch}:
 * | row | condition                                   | result                                                     |
 * | CT1 | proposer fails table P                      | as table P                                                 |
 * | CT2 | stream not found                            | not_found {streamId}                                       |
 * | CT3 | no transfer pending (e.g. a duplicate)      | not_found {streamId, owner, epoch, ownership}              |
 * | CT4 | stream not `closed`                         | conflict {ownership, currentEpoch}                         |
 * | CT5 | closed at a later epoch than `closedEpoch`  | stale_epoch {currentEpoch}: a stale completion changes nothing |
 * | CT6 | closed at an earlier epoch than `closedEpoch` | invalid {currentEpoch}                                   |
 * | CT7 | closed at exactly `closedEpoch`             | accepted: owner = target, `placed` at that epoch (the target opens at +1), record dropped |
 */
export function completeTransfer(state: MetaState, command: CompleteTransfer): Outcome<ValueOf["CompleteTransfer"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const stream = state.streams.get(command.streamId);
  if (stream === undefined) return rejected(state, "not_found", "no such stream", { streamId: command.streamId });
  const pending = state.transfers.get(stream.id);
  if (pending === undefined) {
    return rejected(state, "not_found", "no transfer of this stream is pending", {
      streamId: stream.id,
      owner: stream.owner,
      epoch: stream.epoch,
      ownership: stream.ownership,
    });
  }
  if (stream.ownership !== "closed") {
    return rejected(state, "conflict", "the source has not closed the stream yet", {
      streamId: stream.id,
      ownership: stream.ownership,
      currentEpoch: stream.epoch,
    });
  }
  if (command.closedEpoch !== stream.epoch) {
    const stale = command.closedEpoch < stream.epoch;
    return rejected(state, stale ? "stale_epoch" : "invalid", "the stream is closed at another epoch", {
      streamId: stream.id,
      currentEpoch: stream.epoch,
    });
  }
  const placed: StreamRecord = {
    id: stream.id,
    name: stream.name,
    owner: pending.target,
    epoch: stream.epoch,
    ownership: "placed",
    config: stream.config,
  };
  const next = withStream({ ...state, transfers: state.transfers.delete(stream.id) }, stream.id, placed);
  return accepted(next, { stream: placed });
}
