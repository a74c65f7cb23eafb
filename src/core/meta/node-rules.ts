// Node rules: who may propose, RegisterNode, SetSlots, SetDraining. Each table is one function; the rows
// are tested by name in test/core/meta/node-rules.test.ts. The same tables are in docs/metadata-log.md.
import { domainError, type DomainError } from "../errors.ts";
import type { Proposer, RegisterNode, SetDraining, SetSlots, ValueOf } from "./commands.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { withNode, type MetaState, type NodeRecord } from "./state.ts";

const DEFAULT_SLOTS = 1;

/**
 * Table P — a command a node proposes carries its node id and epoch:
 * | row | condition                             | result                                         |
 * | P1  | no proposer (admin API)               | passes                                         |
 * | P2  | node not registered                   | not_found {nodeId}                             |
 * | P3  | epoch lower than recorded             | stale_epoch {currentEpoch}                     |
 * | P4  | epoch higher than recorded            | invalid {currentEpoch}: register that epoch first |
 * | P5  | epoch equal to recorded               | passes                                         |
 */
export function checkProposer(state: MetaState, proposer: Proposer | undefined): DomainError | null {
  if (proposer === undefined) return null;
  const node = state.nodes.get(proposer.nodeId);
  if (node === undefined) return domainError("not_found", "node is not registered", { nodeId: proposer.nodeId });
  if (proposer.nodeEpoch < node.epoch) {
    return domainError("stale_epoch", "node epoch is stale", { nodeId: node.id, currentEpoch: node.epoch });
  }
  if (proposer.nodeEpoch > node.epoch) {
    return domainError("invalid", "node epoch is not registered yet: register it first", {
      nodeId: node.id,
      currentEpoch: node.epoch,
    });
  }
  return null;
}

/**
 * Table RN — RegisterNode {nodeId, nodeEpoch, addr, slots?}:
 * | row | condition                                   | result                                                        |
 * | RN1 | node not registered                         | accepted: recorded; slots default 1, not draining             |
 * | RN2 | epoch lower than recorded                   | stale_epoch {currentEpoch}: a replaced instance cannot return |
 * | RN3 | epoch higher than recorded                  | accepted: the later epoch wins; addr replaced; slots given or kept; draining kept |
 * | RN4 | epoch equal, same addr and slots (or none)  | no-op (a retried registration)                                |
 * | RN5 | epoch equal, different addr or slots        | conflict {currentEpoch, addr}: two instances with one epoch   |
 */
export function registerNode(state: MetaState, command: RegisterNode): Outcome<ValueOf["RegisterNode"]> {
  const existing = state.nodes.get(command.nodeId);
  if (existing === undefined) {
    const node: NodeRecord = {
      id: command.nodeId,
      epoch: command.nodeEpoch,
      addr: command.addr,
      slots: command.slots ?? DEFAULT_SLOTS,
      draining: false,
    };
    return accepted(withNode(state, node), { node });
  }
  if (command.nodeEpoch < existing.epoch) {
    return rejected(state, "stale_epoch", "a later epoch of this node is registered", {
      nodeId: existing.id,
      currentEpoch: existing.epoch,
    });
  }
  if (command.nodeEpoch === existing.epoch) {
    const sameSlots = command.slots === undefined || command.slots === existing.slots;
    if (command.addr === existing.addr && sameSlots) return unchanged(state, { node: existing });
    return rejected(state, "conflict", "this epoch is registered with another address or slot count", {
      nodeId: existing.id,
      currentEpoch: existing.epoch,
      addr: existing.addr,
    });
  }
  const node: NodeRecord = {
    ...existing,
    epoch: command.nodeEpoch,
    addr: command.addr,
    slots: command.slots ?? existing.slots,
  };
  return accepted(withNode(state, node), { node });
}

/**
 * Table SS — SetSlots {nodeId, slots}:
 * | row | condition              | result                                                           |
 * | SS1 | proposer fails table P | as table P                                                       |
 * | SS2 | node not registered    | not_found {nodeId}                                               |
 * | SS3 | same slot count        | no-op                                                            |
 * | SS4 | otherwise              | accepted: future placements follow the new weight; nothing moves |
 */
export function setSlots(state: MetaState, command: SetSlots): Outcome<ValueOf["SetSlots"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const existing = state.nodes.get(command.nodeId);
  if (existing === undefined) return rejected(state, "not_found", "node is not registered", { nodeId: command.nodeId });
  if (existing.slots === command.slots) return unchanged(state, { node: existing });
  const node: NodeRecord = { ...existing, slots: command.slots };
  return accepted(withNode(state, node), { node });
}

/**
 * Table SD — SetDraining {nodeId, draining}:
 * | row | condition              | result                                                             |
 * | SD1 | proposer fails table P | as table P                                                         |
 * | SD2 | node not registered    | not_found {nodeId}                                                 |
 * | SD3 | same flag              | no-op                                                              |
 * | SD4 | otherwise              | accepted: a draining node takes no new placements; nothing moves   |
 */
export function setDraining(state: MetaState, command: SetDraining): Outcome<ValueOf["SetDraining"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const existing = state.nodes.get(command.nodeId);
  if (existing === undefined) return rejected(state, "not_found", "node is not registered", { nodeId: command.nodeId });
  if (existing.draining === command.draining) return unchanged(state, { node: existing });
  const node: NodeRecord = { ...existing, draining: command.draining };
  return accepted(withNode(state, node), { node });
}
