// Placement: which node gets a stream that has no owner yet. A pure function of the state, so every node
// computes the same answer and two racing PlaceStream proposals are harmless (the second is a no-op).
import type { PlaceStream, ValueOf } from "./commands.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { isDeclaredDead, withStream, type MetaState, type NodeRecord, type StreamRecord } from "./state.ts";

/**
 * A node can take new streams when it has slots, is not draining and is not declared dead. Liveness itself
 * is not in the log (a silent node stays eligible until the coordinator declares it dead).
 */
export function isEligible(node: NodeRecord): boolean {
  return node.slots > 0 && !node.draining && !isDeclaredDead(node);
}

/**
 * The eligible node with the lowest ratio of assigned streams to slots; ties go to `prefer` when it is among
 * them, else to the lowest id (plain string order). Ratios compare by cross-multiplication, so no floating
 * point decides anything. `prefer` is the proposer of a placement (PS5): among equally loaded nodes the one
 * a create arrived at opens it, and the client is spared a 307 (with three balanced nodes, ties are two
 * placements in three).
 */
export function chooseNode(state: MetaState, assigned: ReadonlyMap<string, number> = state.assigned, prefer: string | null = null): NodeRecord | null {
  let best: NodeRecord | null = null;
  let bestAssigned = 0;
  for (const node of state.nodes.values()) {
    if (!isEligible(node)) continue;
    const count = assigned.get(node.id) ?? 0;
    if (best === null) {
      best = node;
      bestAssigned = count;
      continue;
    }
    const lhs = count * best.slots;
    const rhs = bestAssigned * node.slots;
    const winsTie = best.id !== prefer && (node.id === prefer || node.id < best.id);
    if (lhs < rhs || (lhs === rhs && winsTie)) {
      best = node;
      bestAssigned = count;
    }
  }
  return best;
}

/**
 * The eligible nodes PS5 would choose among right now: those with the lowest ratio of assigned streams to
 * slots (a tie of one or more), by id. A router sends a new name to one of them (routing table, R1): the
 * claim there then opens it where it arrived unless other creates changed the counts meanwhile.
 */
export function leastLoaded(state: MetaState, assigned: ReadonlyMap<string, number> = state.assigned): NodeRecord[] {
  const best = chooseNode(state, assigned);
  if (best === null) return [];
  const lowest = assigned.get(best.id) ?? 0;
  return [...state.nodes.values()]
    .filter((node) => isEligible(node) && (assigned.get(node.id) ?? 0) * best.slots === lowest * node.slots)
    .sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

/**
 * Table PS — PlaceStream {streamId}:
 * | row | condition                               | result                                                     |
 * | PS1 | proposer fails table P                  | as table P                                                 |
 * | PS2 | stream not found                        | not_found {streamId}                                       |
 * | PS3 | already `placed`, `opened` or `closed`  | no-op: the record as it is (the second of two racing places) |
 * | PS4 | `unplaced`, no eligible node            | unavailable {eligibleNodes: 0}                             |
 * | PS5 | `unplaced`                              | accepted: owner = chooseNode (lowest streams/slots; ties: the proposer, else lowest id), `placed` |
 */
export function placeStream(state: MetaState, command: PlaceStream): Outcome<ValueOf["PlaceStream"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const stream = state.streams.get(command.streamId);
  if (stream === undefined) return rejected(state, "not_found", "no such stream", { streamId: command.streamId });
  if (stream.ownership !== "unplaced") return unchanged(state, { stream });
  const node = chooseNode(state, state.assigned, command.by?.nodeId ?? null);
  if (node === null) {
    return rejected(state, "unavailable", "no registered node with slots that is not draining", {
      streamId: stream.id,
      eligibleNodes: 0,
    });
  }
  const placed: StreamRecord = { ...stream, owner: node.id, ownership: "placed" };
  return accepted(withStream(state, stream.id, placed), { stream: placed });
}
