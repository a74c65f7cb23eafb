// Node crashes and restarts, as scheduler moves: a crash can fall between any two steps, so between any
// two awaits of an incarnation; a restart brings a node that is down back at a newer epoch; a zombie
// restart starts a new incarnation while the old one still runs. In the settle phase only restarts remain.
import type { SimCluster } from "./cluster.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";

export interface ChaosBudget {
  /** Crashes and zombie restarts allowed in one run. */
  readonly crashes: number;
}

export class Chaos implements Actor {
  readonly name = "chaos";
  private used = 0;

  constructor(
    private readonly cluster: SimCluster,
    private readonly prng: Prng,
    private readonly budget: ChaosBudget,
  ) {}

  choices(phase: Phase): readonly Choice[] {
    const moves: Choice[] = [];
    for (const nodeId of this.cluster.downNodes()) {
      moves.push({ category: "restart", label: `restart ${nodeId}`, run: () => void this.cluster.start(nodeId) });
    }
    if (phase !== "active" || this.used >= this.budget.crashes) return moves;
    const live = this.cluster.nodeIds.flatMap((id) => this.cluster.live(id));
    if (live.length > 0) {
      moves.push({
        category: "crash",
        label: "crash an incarnation",
        run: () => {
          this.used++;
          const victim = this.prng.pick(live);
          this.cluster.end(victim, "crashed");
        },
      });
      moves.push({
        category: "zombie",
        label: "restart a node while its old incarnation runs on",
        run: () => {
          this.used++;
          const nodeId = this.prng.pick(live).id.nodeId;
          this.cluster.start(nodeId);
        },
      });
    }
    return moves;
  }
}
