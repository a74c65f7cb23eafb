// Operator-driven moves of streams between nodes (docs/transfers.md): a drain, its end, and one round of a
// rebalance. Each plans over the log's current state and begins its transfers in the same synchronous
// step, so no other proposal interleaves with the plan.
import { drainProgress, planDrain } from "../core/meta/index.ts";
import { planRebalance, type RebalanceMove } from "../core/meta/rebalance.ts";
import type { DrainAnswer, RebalanceAnswer, RebalanceOptions } from "../ports/meta-log-client.ts";
import type { ProposingLog } from "./proposing-log.ts";

/** The most transfers one drain round begins: what the log holds pending, and what one call proposes, stay bounded. */
export const MAX_DRAIN_BATCH = 1000;

/**
 * Drain: marks the node draining (no new placements), then begins a transfer of each stream assigned to it,
 * up to MAX_DRAIN_BATCH, to the node placement chooses. Idempotent: a second drain plans only what is not
 * moving yet, which is how the streams past a batch move (`mink drain` asks again once none is moving).
 */
export function drain(log: ProposingLog, nodeId: string): DrainAnswer {
  const marked = log.propose({ type: "SetDraining", nodeId, draining: true });
  if (!marked.ok) return { ok: false, error: marked.error };
  const { moves, unplaceable } = planDrain(log.state, nodeId, MAX_DRAIN_BATCH);
  let begun = 0;
  for (const move of moves) {
    const result = log.propose({ type: "BeginTransfer", streamId: move.streamId, target: move.target });
    if (result.ok) begun++;
  }
  return { ok: true, begun, unplaceable, progress: drainProgress(log.state, nodeId) };
}

/** Ends a drain: the node takes placements again (what moved stays where it is). */
export function undrain(log: ProposingLog, nodeId: string): DrainAnswer {
  const marked = log.propose({ type: "SetDraining", nodeId, draining: false });
  if (!marked.ok) return { ok: false, error: marked.error };
  return { ok: true, begun: 0, unplaceable: 0, progress: drainProgress(log.state, nodeId) };
}

/**
 * One round of a rebalance (`mink cluster rebalance`): planRebalance over the nodes live now (table RB),
 * then, unless a dry run, a BeginTransfer (as the admin: no proposer) of each of its transfers in plan order
 * while fewer than `maxConcurrent` transfers are pending in the cluster. Orphans are only reported: the
 * coordinator's tick declares their dead owners and re-leads them (ReassignStreams). The next round plans
 * from where the pending transfers will land (RB1b), so calling it until `done` spreads the load without
 * overshooting, at most `maxConcurrent` transfers at a time.
 */
export function rebalance(log: ProposingLog, options: RebalanceOptions): RebalanceAnswer {
  const { dryRun, maxConcurrent } = options;
  if (!Number.isSafeInteger(maxConcurrent) || maxConcurrent < 1) throw new RangeError("maxConcurrent must be a positive integer");
  const live = new Set(log.liveNodes().map((node) => node.id));
  const plan = planRebalance(log.state, live);
  const begun: RebalanceMove[] = [];
  for (const move of dryRun ? [] : plan.moves) {
    if (log.state.transfers.size >= maxConcurrent) break;
    // Refused only when the log changed under the plan's rules (BT8b, BT8c: a dead node, a takeover to wait
    // for): that stream stays for a later round.
    const result = log.propose({ type: "BeginTransfer", streamId: move.streamId, target: move.to });
    if (result.ok && result.changed) begun.push(move);
  }
  const pending = log.state.transfers.size;
  const left = plan.orphans.length + plan.unplaceable + plan.moves.length - begun.length;
  return { plan, begun, pending, done: left === 0 && pending === 0, version: log.state.version };
}
