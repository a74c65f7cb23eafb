// The heartbeat and the coordinator lease (docs/failover.md). The shell calls `beat` every `heartbeatMs`
// (the Durable Object's alarm): tell the log this incarnation lives, which extends how long it may serve
// (`NodeContext.liveUntilMs`), then hold or ask for the coordinator lease and tick when due. Heartbeats go
// first and are cheap, so a busy node is not mistaken for a dead one.
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import type { NodeContext } from "../context.ts";
import type { NodeSettings } from "../settings.ts";
import type { CoordinatorRole } from "../coordinator/role.ts";

/**
 * A fault switched on for tests (POST /admin/faults): `zombie` stops heartbeats and lease renewals while
 * serving and WAL writes go on; `pause` stops them until `untilMs`. (`crash` is the shell's: it drops the
 * incarnation.)
 */
export type BeatFault = { readonly mode: "zombie" } | { readonly mode: "pause"; readonly untilMs: number };

/** What one heartbeat found: `replaced` means the log refuses this epoch (declared dead, or restarted). */
export type BeatOutcome = "ok" | "suppressed" | "replaced" | "failed";

export class Heartbeat {
  /** A test fault on the heartbeat (see BeatFault); null: none. */
  fault: BeatFault | null = null;

  constructor(
    private readonly ctx: NodeContext,
    private readonly meta: Pick<MetaLogClient, "heartbeat">,
    private readonly coordinator: CoordinatorRole,
  ) {}

  /**
   * One heartbeat, then the coordinator step. `replaced`: the log refuses this epoch (declared dead, or a
   * newer incarnation registered): the shell must drop this incarnation.
   */
  async beat(): Promise<BeatOutcome> {
    if (this.fault !== null && (this.fault.mode === "zombie" || this.ctx.now() < this.fault.untilMs)) return "suppressed";
    this.fault = null;
    const sentAtMs = this.ctx.now();
    const beat = await this.meta.heartbeat(this.ctx.nodeId, this.ctx.nodeEpoch);
    if (!beat.ok) {
      if (beat.error.code !== "stale_epoch") return "failed";
      this.ctx.log.log("node.superseded", { during: "heartbeat", code: beat.error.code }, beat.error.message);
      return "replaced";
    }
    this.ctx.liveUntilMs = Math.max(this.ctx.liveUntilMs, sentAtMs + selfLeaseMs(this.ctx.settings));
    await this.coordinatorStep();
    this.askForLeaseAtExpiry();
    return "ok";
  }

  /** Holds or asks for the coordinator lease, and ticks when due; a failure is logged, never thrown. */
  async coordinatorStep(): Promise<void> {
    try {
      await this.coordinator.step();
    } catch (error) {
      this.ctx.log.log("node.error", { during: "coordinator_step" }, error);
    }
  }

  /**
   * Another node's lease runs out before the next heartbeat: ask for it at that moment (a crashed
   * coordinator is replaced within the lease, not the lease plus a heartbeat).
   */
  private askForLeaseAtExpiry(): void {
    const { settings } = this.ctx;
    const inMs = this.coordinator.otherLeaseExpiresAtMs - this.ctx.now();
    if (this.coordinator.coordinatorEpoch !== null || inMs < 0 || inMs >= settings.heartbeatMs) return;
    const attempt = new Promise<void>((resolve) => setTimeout(resolve, inMs + 1)).then(async () => {
      if (this.ctx.stopped === null && this.fault === null) await this.coordinatorStep();
    });
    this.ctx.background(attempt);
  }
}

/** How long a node serves after a heartbeat was acknowledged (see NodeContext.liveUntilMs). */
export function selfLeaseMs(settings: NodeSettings): number {
  return Math.max(settings.leaseTtlMs - settings.heartbeatMs, settings.leaseTtlMs / 2);
}
