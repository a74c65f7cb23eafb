// The tiering actor (docs/simulation.md, "Tiering"): on a table seed, while the table clients write, it asks
// the incarnation it believes holds the coordinator's lease to run a tiering round of the table
// (`runtime.tierTable`, as POST /admin/tables/<name>/tier does), at random moments. A `fenced` answer names
// the holder (the next round goes there); a round that does not answer within ROUND_TIMEOUT_MS is given up
// on, and the next may start elsewhere while it runs on: so the coordinator's faults (crashes, pauses,
// lease moves, nodes declared dead, zombies) hit rounds in progress, and rounds of two coordinator epochs
// overlap. Each round's outcome is counted when it comes, even after the actor gave up on it. In the final
// phase, once the final table reader is done, one more round (retried until every bucket was read) tiers
// what is left, so the check (tiering-checker.ts) compares a tiered table that reaches the changelog's end.
import type { TierTableAnswer } from "../../src/core/tiering/tier-report.ts";
import type { Incarnation, SimCluster } from "./cluster.ts";
import { guardCounter } from "./guards.ts";
import type { History } from "./history.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import { SIM_TABLE, type TableWorld } from "./table-clients.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

/** How long the actor waits for a round's answer (a round is a dozen store and metadata calls). */
const ROUND_TIMEOUT_MS = 2_000;
/** The pause between the starts of two rounds in the active phase. */
const ROUND_GAP_MS = { min: 50, max: 1_000 };
/** Rounds tried in the final phase before the actor gives up (the check then reads what was tiered). */
const FINAL_ATTEMPTS = 12;
/** Rounds the actor waits for at once in the active phase: two race for the same version now and then. */
const MAX_IN_FLIGHT = 2;

export interface TieringActorDeps {
  readonly cluster: SimCluster;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly history: History;
  readonly prng: Prng;
  readonly world: TableWorld;
  /** The final table reader finished (the final round comes after it). */
  readonly finalReadDone: () => boolean;
}

type RoundOutcome = "committed" | "unchanged" | "fenced" | "refused" | "threw";

export class TieringActor implements Actor {
  readonly name = "tiering";
  /** Rounds the actor waits for now. */
  private inFlight = 0;
  /** The lease holder a `fenced` answer named. */
  private holder: string | null = null;
  /** The incarnation whose last round threw or did not answer: the next goes elsewhere when it can. */
  private failedAt: Incarnation | null = null;
  private notBeforeMs = 0;
  private finalAttempts = 0;
  /** The final round is over (tiered to the end, or given up on): the final phase may end. */
  done = false;

  constructor(private readonly deps: TieringActorDeps) {}

  get idle(): boolean {
    return this.inFlight === 0;
  }

  choices(phase: Phase): readonly Choice[] {
    if (this.inFlight >= MAX_IN_FLIGHT || this.deps.clock.now() < this.notBeforeMs) return [];
    if (phase === "active" && this.deps.world.created && this.running().length > 0) {
      return [{ category: "tiering", label: `tiering round of ${SIM_TABLE}${this.inFlight > 0 ? " (another in flight)" : ""}`, run: () => this.start(false) }];
    }
    if (phase === "final" && this.inFlight === 0 && !this.done && this.deps.finalReadDone()) {
      return [{ category: "final", label: `final tiering round of ${SIM_TABLE}`, run: () => this.start(true) }];
    }
    return [];
  }

  private start(final: boolean): void {
    this.inFlight++;
    // The next round starts a while after this one did (it may overlap), or after the final round's end.
    const { min, max } = ROUND_GAP_MS;
    if (!final) this.notBeforeMs = this.deps.clock.now() + this.deps.prng.between(min, max);
    this.round(final)
      .catch((error: unknown) => this.deps.trace.write(`  tiering failed: ${String(error)}`))
      .finally(() => {
        this.inFlight--;
        if (final) this.notBeforeMs = this.deps.clock.now() + 200;
      });
  }

  private running(): Incarnation[] {
    const { cluster } = this.deps;
    return cluster.nodeIds.flatMap((id) => cluster.live(id)).filter((inc) => inc.state === "running" && inc.runtime !== null);
  }

  /**
   * The holder a refusal named, else an incarnation that believes it holds the lease, else any; not the one
   * whose last round threw or went unanswered, when there is another (a refusal there names the holder).
   */
  private target(): Incarnation | undefined {
    const all = this.running();
    const running = all.length > 1 ? all.filter((inc) => inc !== this.failedAt) : all;
    const holder = this.holder === null ? undefined : this.deps.cluster.newest(this.holder);
    if (holder !== undefined && running.includes(holder)) return holder;
    const coordinators = running.filter((inc) => inc.runtime?.coordinator.coordinatorEpoch != null);
    const among = coordinators.length > 0 ? coordinators : running;
    return among.length === 0 ? undefined : this.deps.prng.pick(among);
  }

  private async round(final: boolean): Promise<void> {
    const { clock, trace } = this.deps;
    if (final && ++this.finalAttempts > FINAL_ATTEMPTS) {
      this.done = true;
      return;
    }
    const inc = this.target();
    if (inc === undefined || inc.runtime === null) return;
    this.holder = null;
    trace.write(`  tiering ${final ? "final round" : "round"} at ${inc.label}`);
    const call = inc.runtime.tierTable(SIM_TABLE);
    // Counted when it comes, whether or not the actor still waits for it.
    const outcome = call.then(
      (answer) => this.record(inc, answer),
      (error: unknown) => this.recordThrow(inc, error),
    );
    let timer = 0;
    const timeout = new Promise<"timed out">((resolve) => (timer = clock.schedule(ROUND_TIMEOUT_MS, () => resolve("timed out"), null, "timeout tiering round")));
    const first = await Promise.race([outcome, timeout]).finally(() => clock.cancel(timer));
    this.failedAt = first === "timed out" || first === "threw" ? inc : null;
    if (first === "timed out") {
      this.deps.history.count("tiering round timed out");
      trace.write(`  tiering round at ${inc.label}: no answer`);
      return;
    }
    if (final && first === "done") this.done = true;
  }

  /** Counts the answer; "done" for a round that read every bucket to its end (or a table that is not there). */
  private record(inc: Incarnation, answer: TierTableAnswer): "done" | RoundOutcome {
    const { history, trace } = this.deps;
    if (answer.ok) {
      const { report } = answer;
      const unread = report.buckets.filter((bucket) => bucket.error !== null);
      history.count(report.committed ? "tiering round committed" : "tiering round unchanged");
      if (unread.length > 0) history.count("tiering round with a bucket unread");
      trace.write(
        `  tiering round at ${inc.label}: ${report.committed ? `committed v${report.version} (${report.rows} rows, ${report.deletes} deletes)` : `unchanged at v${report.version}`}` +
          (unread.length === 0 ? "" : `; unread ${unread.map((bucket) => `${bucket.partition ?? "-"}/${bucket.bucket} (${bucket.error})`).join(", ")}`),
      );
      // A bucket with more changelog than a round's share (`more`) needs another round too.
      const more = (report as { readonly more?: boolean }).more === true;
      return unread.length === 0 && !more ? "done" : report.committed ? "committed" : "unchanged";
    }
    const { code, details } = answer.error;
    const holder = details?.["holder"];
    if (typeof holder === "string") this.holder = holder;
    // TC4: the round's heartbeat passed, yet a newer coordinator epoch had written the table by the time it read it.
    const byVersion = code === "fenced" && holder === undefined && typeof details?.["coordinatorEpoch"] === "number";
    history.count(code === "fenced" ? "tiering round fenced" : "tiering round refused");
    if (byVersion) history.count(guardCounter("tiering fenced by a newer version"));
    trace.write(`  tiering round at ${inc.label}: refused ${code}${typeof holder === "string" ? ` (holder ${holder})` : ""}: ${answer.error.message}`);
    if (code === "not_found") return "done";
    return code === "fenced" ? "fenced" : "refused";
  }

  private recordThrow(inc: Incarnation, error: unknown): RoundOutcome {
    this.deps.history.count("tiering round threw");
    this.deps.trace.write(`  tiering round at ${inc.label} threw: ${error instanceof Error ? error.message : String(error)}`);
    return "threw";
  }
}
