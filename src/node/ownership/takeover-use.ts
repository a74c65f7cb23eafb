// Where a node meets a dead incarnation: an open refused by the takeover gate (row OS3b) names it, and the
// node takes it over (or finds it taken over, or waits for the node that claimed it) before opening.
import type { DomainError } from "../../core/errors.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import type { NodeContext } from "../context.ts";
import { KeyedLock } from "../state/keyed-lock.ts";
import { takeOver, type DeadIncarnationRef, type TakeoverDeps, type TakeoverReport } from "./takeover.ts";

/** The dead incarnation an open refusal names (the takeover gate's details), or null. */
export function deadIncarnationIn(error: DomainError): DeadIncarnationRef | null {
  const node = error.details?.["deadNode"];
  const nodeEpoch = error.details?.["deadEpoch"];
  if (error.code !== "unavailable" || typeof node !== "string" || typeof nodeEpoch !== "number") return null;
  return { nodeId: node, nodeEpoch };
}

/**
 * Takes `dead` over from this node (following a later dead incarnation when the log names one). True once
 * it is taken over; false while another node holds the claim or the log refuses (the caller answers 503).
 */
export async function takeOverFor(ctx: NodeContext, dead: DeadIncarnationRef): Promise<boolean> {
  let target = dead;
  for (let hops = 0; hops < 3; hops++) {
    const answer = await takeOver(
      {
        nodeId: ctx.nodeId,
        nodeEpoch: ctx.nodeEpoch,
        store: ctx.store,
        meta: ctx.meta,
        locks: ctx.locks,
        now: () => ctx.now(),
        claimTtlMs: ctx.settings.leaseTtlMs,
        log: ctx.log,
      },
      target,
    );
    switch (answer.kind) {
      case "done":
        if (answer.report !== undefined) recordTakeover(ctx, answer.report);
        return true;
      case "later":
        target = { nodeId: target.nodeId, nodeEpoch: answer.nodeEpoch };
        continue;
      case "wait":
        return false;
      case "refused":
        ctx.log.log("takeover.refused", { deadNode: target.nodeId, deadEpoch: target.nodeEpoch, code: answer.error.code }, answer.error.message);
        return false;
    }
  }
  return false;
}

function recordTakeover(ctx: NodeContext, report: TakeoverReport): void {
  const stats = ctx.meters.takeovers;
  stats.completed++;
  stats.streamsClosed += report.streamsClosed;
  stats.walObjectsReplayed += report.walObjectsReplayed;
  stats.walBytesReplayed += report.walBytesReplayed;
  stats.totalDurationMs += report.durationMs;
  stats.maxDurationMs = Math.max(stats.maxDurationMs, report.durationMs);
}

/** How often a node back from the dead looks again while another node takes its old incarnation over. */
const OWN_TAKEOVER_POLL_MS = 200;

/**
 * A node back from the dead, at its start: its old incarnation `dead` is taken over before it replays
 * anything, by this node or by the node that claimed it (waited for, up to two claim lifetimes). Throws
 * when that does not happen in time: the start fails and the shell tries again.
 */
export async function takeOverOwnPast(
  deps: Omit<TakeoverDeps, "locks" | "meta"> & { readonly meta: TakeoverDeps["meta"] & Pick<MetaLogClient, "heartbeat"> },
  dead: DeadIncarnationRef,
): Promise<void> {
  const deadlineMs = deps.now() + 2 * deps.claimTtlMs;
  const locks = new KeyedLock();
  let target = dead;
  for (let hops = 0; ; ) {
    const answer = await takeOver({ ...deps, locks }, target);
    if (answer.kind === "done") return;
    if (answer.kind === "later" && ++hops <= 3) {
      target = { nodeId: target.nodeId, nodeEpoch: answer.nodeEpoch };
      continue;
    }
    if (answer.kind !== "wait") throw new Error(`takeover of ${target.nodeId}@${target.nodeEpoch} refused: ${JSON.stringify(answer)}`);
    if (deps.now() >= deadlineMs) throw new Error(`${answer.by} did not finish taking over ${target.nodeId}@${target.nodeEpoch} in time`);
    // Still starting, but alive: without a heartbeat the coordinator would declare this incarnation dead too.
    const beat = await deps.meta.heartbeat(deps.nodeId, deps.nodeEpoch);
    if (!beat.ok) throw new Error(`the metadata log refuses this incarnation while it waits: ${beat.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, OWN_TAKEOVER_POLL_MS));
  }
}
