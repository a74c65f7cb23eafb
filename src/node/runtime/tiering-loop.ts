// Tiering on a timer (docs/tiering.md): every TIERING_INTERVAL_MS the lease holder runs a tiering round of
// every table, one table after the other, in the background of its heartbeat. 0 (the default) leaves
// tiering to `POST /admin/tables/<name>/tier`. One pass at a time; a node that is not the lease holder
// skips the pass (a round would be refused as `fenced` anyway).
import type { TierTableAnswer } from "../../core/tiering/tier-report.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import type { CoordinatorRole } from "../coordinator/role.ts";
import type { TableContext } from "../tables/buckets.ts";

/** Rounds of one table in one pass at most: a backlog beyond them waits for the next pass. */
const MAX_ROUNDS_PER_TABLE = 64;

export class TieringLoop {
  private nextDueMs = 0;
  private running = false;
  /** Passes completed and rounds committed by this incarnation (tests and logs). */
  readonly stats = { passes: 0, committed: 0, failed: 0 };

  constructor(
    private readonly ctx: TableContext,
    private readonly meta: Pick<MetaLogClient, "listTables">,
    private readonly coordinator: CoordinatorRole,
    private readonly tier: (name: string) => Promise<TierTableAnswer>,
  ) {}

  /** Starts a pass in the background when one is due (called on every heartbeat). */
  startWhenDue(): void {
    const intervalMs = this.ctx.settings.tieringIntervalMs;
    if (intervalMs === 0 || this.running || this.coordinator.coordinatorEpoch === null || this.ctx.now() < this.nextDueMs) return;
    this.running = true;
    this.nextDueMs = this.ctx.now() + intervalMs;
    this.ctx.background(
      this.pass().finally(() => {
        this.running = false;
      }),
    );
  }

  private async pass(): Promise<void> {
    const { tables } = await this.meta.listTables();
    for (const { name } of tables) {
      // A backlog larger than a round's budget takes several rounds, each bounded in memory.
      for (let round = 0; round < MAX_ROUNDS_PER_TABLE; round++) {
        // The lease went away meanwhile: the next holder's pass tiers the rest.
        if (this.coordinator.coordinatorEpoch === null) return;
        if (!(await this.round(name))) break;
      }
    }
    this.stats.passes++;
  }

  /** One round of the table, logged; true when it committed and left more to tier. */
  private async round(name: string): Promise<boolean> {
    const answer = await this.tier(name).catch((error: unknown) => ({ ok: false as const, error: { code: "unavailable", message: String(error) } }));
    if (!answer.ok) {
      this.stats.failed++;
      this.ctx.log.log("table.tier_failed", { table: name, code: answer.error.code }, answer.error.message);
      return false;
    }
    const { report } = answer;
    if (report.committed) this.stats.committed++;
    this.ctx.log.log("table.tiered", { table: name, committed: report.committed, snapshotId: report.snapshotId, version: report.version, rows: report.rows, deletes: report.deletes, more: report.more });
    return report.committed && report.more;
  }
}
