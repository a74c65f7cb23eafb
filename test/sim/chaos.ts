// Node crashes and restarts, as scheduler moves: a crash can fall between any two steps, so between any
// two awaits of an incarnation; a restart brings a node that is down back at a newer epoch; a zombie
// restart starts a new incarnation while the old one still runs. The failover faults (docs/failover.md):
// - hold: a crash that stays down past the lease, so the coordinator declares the node dead and its
//   streams are taken over before it returns;
// - freeze: heartbeats stop while the incarnation serves and writes on (`zombie` until it is healed long
//   after the lease, or `pause` for a while); once healed, its next heartbeat learns whether it was
//   declared dead;
// - coordinator: the lease holder crashes and stays down, so another node takes the lease at a new
//   coordinator epoch.
// In the settle phase only restarts remain, and every held-down node may come back.
import type { SimCluster } from "./cluster.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";

export interface ChaosBudget {
  /** Crashes, zombie restarts and failover faults allowed in one run. */
  readonly crashes: number;
  /** The metadata log's lease: a node silent this long is dead. */
  readonly leaseTtlMs: number;
}

export class Chaos implements Actor {
  readonly name = "chaos";
  private used = 0;
  /** Nodes kept down until a virtual time (hold, coordinator). */
  private readonly heldUntilMs = new Map<string, number>();

  constructor(
    private readonly cluster: SimCluster,
    private readonly prng: Prng,
    private readonly budget: ChaosBudget,
    private readonly now: () => number,
  ) {}

  choices(phase: Phase): readonly Choice[] {
    const moves: Choice[] = [];
    for (const nodeId of this.cluster.downNodes()) {
      if (phase === "active" && this.now() < (this.heldUntilMs.get(nodeId) ?? 0)) continue;
      moves.push({ category: "restart", label: `restart ${nodeId}`, run: () => void this.cluster.start(nodeId) });
    }
    if (phase !== "active" || this.used >= this.budget.crashes) return moves;
    const live = this.cluster.nodeIds.flatMap((id) => this.cluster.live(id));
    if (live.length === 0) return moves;
    const spend = (run: () => void) => () => {
      this.used++;
      run();
    };
    moves.push(
      { category: "crash", label: "crash an incarnation", run: spend(() => this.cluster.end(this.prng.pick(live), "crashed")) },
      {
        category: "zombie",
        label: "restart a node while its old incarnation runs on",
        run: spend(() => void this.cluster.start(this.prng.pick(live).id.nodeId)),
      },
      { category: "hold", label: "crash a node and keep it down past the lease", run: spend(() => this.holdDown(this.prng.pick(live).id.nodeId)) },
      { category: "freeze", label: "stop an incarnation's heartbeats while it serves", run: spend(() => this.freeze()) },
    );
    const coordinator = live.find((inc) => inc.runtime?.coordinator.coordinatorEpoch != null);
    if (coordinator !== undefined) {
      moves.push({ category: "coordinator", label: "crash the coordinator", run: spend(() => this.holdDown(coordinator.id.nodeId)) });
    }
    return moves;
  }

  /** Crashes every incarnation of `nodeId` and keeps it down for one to three leases (also the residency scenario's hold). */
  holdDown(nodeId: string): void {
    for (const inc of this.cluster.live(nodeId)) this.cluster.end(inc, "crashed");
    this.heldUntilMs.set(nodeId, this.now() + this.budget.leaseTtlMs * this.prng.between(1, 3) + this.prng.between(0, 2_000));
  }

  /** A zombie (no heartbeat, no lease renewal, serving on) or a pause, lifted after a while. */
  private freeze(): void {
    const running = this.cluster.nodeIds.flatMap((id) => this.cluster.live(id)).filter((inc) => inc.runtime !== null);
    if (running.length === 0) return;
    const runtime = this.prng.pick(running).runtime!;
    const forMs = this.prng.between(this.budget.leaseTtlMs / 4, this.budget.leaseTtlMs * 3);
    runtime.fault = this.prng.chance(0.5) ? { mode: "pause", untilMs: this.now() + forMs } : { mode: "zombie" };
    if (runtime.fault.mode === "zombie") this.cluster.healLater(runtime, forMs);
  }
}
