// The table's creator: once some incarnation believes it holds the coordinator's lease, it asks it to create
// the table (as the router does: the coordinator assigns the leaders); a refusal that names the lease
// holder sends the next try there, an unanswered call (the incarnation crashed) times out, and each failed
// try waits a little before the next, until one is acknowledged (created, or already there). A partitioned
// table is created without buckets; then each of its partitions is added the same way, one at a time, and
// the table clients start once the last is acknowledged.
import { encodePartition } from "../../src/core/tables/bucketing.ts";
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
  /** The create was acknowledged (the table clients wait for `world.created`: every partition too). */
  private tableCreated = false;
  /** The partition values whose add was acknowledged. */
  private readonly added = new Set<number>();

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
    const partition = this.nextPartition();
    return [{ category: "table", label: partition === null ? `create table ${SIM_TABLE}` : `add partition ${partition} to ${SIM_TABLE}`, run }];
  }

  /** The partition to add next; null while the table itself is still to be created. */
  private nextPartition(): number | null {
    if (!this.tableCreated) return null;
    return this.deps.world.partitions.find((value) => !this.added.has(value)) ?? null;
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
    const partition = this.nextPartition();
    const what = partition === null ? "table create" : `add partition ${partition}`;
    const call = partition === null ? inc.runtime.createTable(SIM_TABLE, world.definitionJson, world.createBuckets) : inc.runtime.addPartition(SIM_TABLE, partition);
    let timer = 0;
    const timeout = new Promise<"timed out">((resolve) => (timer = clock.schedule(CREATE_TIMEOUT_MS, () => resolve("timed out"), null, "timeout table create")));
    const answer = await Promise.race([call, timeout]).finally(() => clock.cancel(timer));
    if (answer === "timed out") {
      trace.write(`  ${what} at ${inc.label}: no answer`);
      return;
    }
    if (answer.ok) {
      if (partition === null) {
        this.tableCreated = true;
        history.tables.createdStep = trace.currentStep;
        history.count("table created");
      } else {
        this.added.add(partition);
        const key = encodePartition(partition);
        if (!history.tables.partitionsAdded.has(key)) history.tables.partitionsAdded.set(key, trace.currentStep);
        history.count("table partition added");
      }
      world.created = this.nextPartition() === null;
      trace.write(`  ${what} at ${inc.label}: ${answer.created ? "created" : "exists"}`);
      return;
    }
    const holder = answer.error.details?.["holder"];
    this.holder = typeof holder === "string" ? holder : null;
    trace.write(`  ${what} at ${inc.label}: refused ${answer.error.code}${this.holder === null ? "" : ` (holder ${this.holder})`}`);
  }
}
