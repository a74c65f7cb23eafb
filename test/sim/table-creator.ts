// The table's creator: once some incarnation believes it holds the coordinator's lease, it asks it to create
// the table (as the router does: the coordinator assigns the leaders); a refusal that names the lease
// holder sends the next try there, an unanswered call (the incarnation crashed) times out, and each failed
// try waits a little before the next, until one is acknowledged (created, or already there).
import type { Incarnation, SimCluster } from "./cluster.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import { SIM_TABLE, type TableDeps } from "./table-clients.ts";

const CREATE_TIMEOUT_MS = 5_000;
/** How long the creator waits after a refused or unanswered create. */
const CREATE_BACKOFF_MS = { min: 50, max: 400 };

/** Creates the table at the coordinator (the lease holder), retrying while it is refused or unanswered. */
export class TableCreator implements Actor {
  readonly name = "table-creator";
  private busy = false;
  /** The lease holder a `fenced` answer named. */
  private holder: string | null = null;
  private notBeforeMs = 0;

  constructor(
    private readonly cluster: SimCluster,
    private readonly deps: TableDeps,
  ) {}

  get idle(): boolean {
    return !this.busy;
  }

  choices(phase: Phase): readonly Choice[] {
    if (phase !== "active" || this.busy || this.deps.world.created || this.deps.clock.now() < this.notBeforeMs) return [];
    if (this.running().every((inc) => inc.runtime?.coordinator.coordinatorEpoch == null)) return [];
    const run = (): void => {
      this.busy = true;
      this.create()
        .catch((error: unknown) => this.deps.trace.write(`  table create failed: ${String(error)}`))
        .finally(() => {
          this.busy = false;
          if (!this.deps.world.created) this.notBeforeMs = this.deps.clock.now() + this.deps.prng.between(CREATE_BACKOFF_MS.min, CREATE_BACKOFF_MS.max);
        });
    };
    return [{ category: "table", label: `create table ${SIM_TABLE}`, run }];
  }

  private running(): Incarnation[] {
    return this.cluster.nodeIds.flatMap((id) => this.cluster.live(id)).filter((inc) => inc.state === "running" && inc.runtime !== null);
  }

  /** The holder a refusal named, else an incarnation that believes it holds the lease, else any. */
  private target(): Incarnation | undefined {
    const running = this.running();
    const holder = this.holder === null ? undefined : this.cluster.newest(this.holder);
    if (holder !== undefined && running.includes(holder)) return holder;
    const coordinator = running.find((inc) => inc.runtime?.coordinator.coordinatorEpoch != null);
    return coordinator ?? (running.length === 0 ? undefined : this.deps.prng.pick(running));
  }

  private async create(): Promise<void> {
    const { world, trace, history, clock } = this.deps;
    const inc = this.target();
    if (inc === undefined || inc.runtime === null) return;
    const call = inc.runtime.createTable(SIM_TABLE, world.definitionJson, world.definition.buckets);
    let timer = 0;
    const timeout = new Promise<"timed out">((resolve) => (timer = clock.schedule(CREATE_TIMEOUT_MS, () => resolve("timed out"), null, "timeout table create")));
    const answer = await Promise.race([call, timeout]).finally(() => clock.cancel(timer));
    if (answer === "timed out") {
      trace.write(`  table create at ${inc.label}: no answer`);
      return;
    }
    if (answer.ok) {
      world.created = true;
      history.tables.createdStep = trace.currentStep;
      history.count("table created");
      trace.write(`  table create at ${inc.label}: ${answer.created ? "created" : "exists"}`);
      return;
    }
    const holder = answer.error.details?.["holder"];
    this.holder = typeof holder === "string" ? holder : null;
    trace.write(`  table create at ${inc.label}: refused ${answer.error.code}${this.holder === null ? "" : ` (holder ${this.holder})`}`);
  }
}
