// The coordinator lease (docs/failover.md): one holder at a time, a coordinator epoch that only grows and fences a
// stale holder, an expiry computed from the log entry's time. Rows tested in test/core/meta/lease-rules.test.ts.
import type { AcquireLease, ApplyContext, RenewLease, ValueOf } from "./commands.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import type { Lease, MetaState } from "./state.ts";

function leaseIsLive(lease: Lease | null, nowMs: number): lease is Lease {
  return lease !== null && nowMs < lease.expiresAtMs;
}

/**
 * Table AL — AcquireLease {nodeId, nodeEpoch, ttlMs} at nowMs:
 * | row | condition                                              | result                                              |
 * | AL1 | node fails table P                                     | as table P                                          |
 * | AL2 | held by another node and not expired                   | held_by {holder, coordinatorEpoch, expiresAtMs}     |
 * | AL3 | held by this node at this node epoch and not expired   | accepted: same coordinator epoch, expiry extended (no-op if unchanged) |
 * | AL4 | no lease, expired, or held by this node's older epoch  | accepted: coordinator epoch + 1, expires at nowMs + ttlMs |
 */
export function acquireLease(state: MetaState, command: AcquireLease, ctx: ApplyContext): Outcome<ValueOf["AcquireLease"]> {
  const nodeError = checkProposer(state, { nodeId: command.nodeId, nodeEpoch: command.nodeEpoch });
  if (nodeError !== null) return rejectedWith(state, nodeError);
  const current = state.lease;
  const expiresAtMs = ctx.nowMs + command.ttlMs;
  if (leaseIsLive(current, ctx.nowMs)) {
    if (current.holder !== command.nodeId) {
      return rejected(state, "held_by", "another node holds the coordinator lease", {
        holder: current.holder,
        coordinatorEpoch: current.coordinatorEpoch,
        expiresAtMs: current.expiresAtMs,
      });
    }
    if (current.holderEpoch === command.nodeEpoch) {
      if (expiresAtMs <= current.expiresAtMs) return unchanged(state, { lease: current });
      const lease: Lease = { ...current, expiresAtMs };
      return accepted({ ...state, lease }, { lease });
    }
  }
  const lease: Lease = {
    holder: command.nodeId,
    holderEpoch: command.nodeEpoch,
    coordinatorEpoch: (current?.coordinatorEpoch ?? 0) + 1,
    expiresAtMs,
  };
  return accepted({ ...state, lease }, { lease });
}

/**
 * Table RL — RenewLease {nodeId, nodeEpoch, coordinatorEpoch, ttlMs} at nowMs:
 * | row | condition                                                     | result                                         |
 * | RL1 | node fails table P                                            | as table P                                     |
 * | RL2 | no lease, another holder, another coordinator or node epoch   | fenced {holder, coordinatorEpoch}: stop coordinating |
 * | RL3 | expired                                                       | fenced {holder, coordinatorEpoch, expiresAtMs}: acquire again |
 * | RL4 | otherwise                                                     | accepted: expires at max(current, nowMs + ttlMs) (no-op if unchanged) |
 */
export function renewLease(state: MetaState, command: RenewLease, ctx: ApplyContext): Outcome<ValueOf["RenewLease"]> {
  const nodeError = checkProposer(state, { nodeId: command.nodeId, nodeEpoch: command.nodeEpoch });
  if (nodeError !== null) return rejectedWith(state, nodeError);
  const current = state.lease;
  if (
    current === null ||
    current.holder !== command.nodeId ||
    current.holderEpoch !== command.nodeEpoch ||
    current.coordinatorEpoch !== command.coordinatorEpoch
  ) {
    return rejected(state, "fenced", "this node does not hold the coordinator lease at that epoch", {
      holder: current?.holder ?? null,
      coordinatorEpoch: current?.coordinatorEpoch ?? 0,
    });
  }
  if (ctx.nowMs >= current.expiresAtMs) {
    return rejected(state, "fenced", "the coordinator lease expired: acquire it again", {
      holder: current.holder,
      coordinatorEpoch: current.coordinatorEpoch,
      expiresAtMs: current.expiresAtMs,
    });
  }
  const expiresAtMs = Math.max(current.expiresAtMs, ctx.nowMs + command.ttlMs);
  if (expiresAtMs === current.expiresAtMs) return unchanged(state, { lease: current });
  const lease: Lease = { ...current, expiresAtMs };
  return accepted({ ...state, lease }, { lease });
}
