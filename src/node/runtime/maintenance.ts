// The node's background upkeep, started from the heartbeat: compaction of the WAL when it has grown past
// a threshold since the checkpoint (docs/node.md, "Compaction"), eviction of idle streams (docs/node.md,
// "Idle streams"), and snapshots of the table buckets due one (docs/tables.md, "Snapshots"). One run of
// each at a time; none holds a heartbeat back.
import type { WalWriter } from "../../storage/wal-writer.ts";
import { compactNode, type CompactionReport } from "../streams/compaction.ts";
import { evictIdle } from "../streams/eviction.ts";
import type { RecoveryResult } from "../streams/recovery.ts";
import type { TableContext } from "../tables/buckets.ts";
import { snapshotDueBuckets } from "../tables/snapshotter.ts";
import { roundMs } from "./wiring.ts";

/**
 * Evictions since the checkpoint that make a compaction due even without WAL growth (or fewer: as many as the
 * streams still in memory, when that halves the snapshot): its snapshot no longer lists the evicted streams,
 * so the next start replays only the streams in memory.
 */
const EVICTIONS_PER_COMPACTION = 1_000;

export class Maintenance {
  private compacting: Promise<CompactionReport> | null = null;
  /** The WAL seq replay starts at (the checkpoint), as far as this incarnation knows. */
  private checkpointSeq: number;
  /** WAL bytes this incarnation had written when its last compaction began. */
  private bytesAtCheckpoint = 0;
  /** Streams this incarnation had evicted when its last compaction began. */
  private evictedAtCheckpoint = 0;
  /** Background work running now, by what it is (one run of each at a time). */
  private readonly running = new Set<string>();

  constructor(
    private readonly ctx: TableContext,
    private readonly wal: WalWriter,
    private readonly recovery: RecoveryResult,
  ) {
    this.checkpointSeq = recovery.fromSeq;
  }

  /** Whether the WAL has grown past a compaction threshold since the last checkpoint, or many streams left memory. */
  compactionDue(): boolean {
    const { settings } = this.ctx;
    return (
      this.wal.nextSeq - this.checkpointSeq >= settings.compactAfterWalObjects ||
      this.wal.stats.bytesWritten - this.bytesAtCheckpoint >= settings.compactAfterWalBytes ||
      this.ctx.meters.residency.evicted - this.evictedAtCheckpoint >= Math.min(EVICTIONS_PER_COMPACTION, Math.max(1, this.ctx.registry.size))
    );
  }

  /**
   * Compacts the WAL into stream objects, moves the checkpoint and deletes the WAL below it (one run at
   * a time; a call during a run waits for it). Null once the node stopped serving.
   */
  compact(): Promise<CompactionReport | null> {
    if (this.ctx.stopped !== null) return Promise.resolve(null);
    // Out of touch with the metadata log: a takeover may be sealing this chain; no clean-up under its feet.
    if (this.compacting === null && this.ctx.now() >= this.ctx.liveUntilMs) return Promise.resolve(null);
    if (this.compacting === null) {
      this.bytesAtCheckpoint = this.wal.stats.bytesWritten;
      this.evictedAtCheckpoint = this.ctx.meters.residency.evicted;
    }
    const startedMs = this.ctx.meters.clockMs();
    this.compacting ??= compactNode(this.ctx, this.ctx.store, { fromSeq: this.recovery.fromSeq, seals: this.recovery.seals })
      .then(
        (report) => {
          this.checkpointSeq = report.snapshotSeq;
          this.ctx.log.log("compaction.done", { ...report, durationMs: roundMs(this.ctx.meters.clockMs() - startedMs) });
          return report;
        },
        (error: unknown) => {
          // Nothing is lost: the WAL stays until a compaction lands; the next heartbeat tries again.
          this.ctx.log.log("compaction.failed", { durationMs: roundMs(this.ctx.meters.clockMs() - startedMs) }, error);
          throw error;
        },
      )
      .finally(() => {
        this.compacting = null;
      });
    return this.compacting;
  }

  /** Idle streams out of memory (streams/eviction.ts), one round at a time, beside the heartbeats. */
  evictInBackground(): void {
    this.inBackground("evict_idle", () => evictIdle(this.ctx));
  }

  /** The table buckets due a snapshot, one round at a time, beside the heartbeats (never holding one back). */
  snapshotInBackground(): void {
    this.inBackground("table_snapshot", () => snapshotDueBuckets(this.ctx));
  }

  /** Starts `work` beside the heartbeats unless its last run is still going or the node stopped; a failure is logged as `during`. */
  private inBackground(during: string, work: () => Promise<unknown>): void {
    if (this.running.has(during) || this.ctx.stopped !== null) return;
    this.running.add(during);
    const run = work()
      .catch((error: unknown) => this.ctx.log.log("node.error", { during }, error))
      .finally(() => this.running.delete(during));
    this.ctx.background(run);
  }
}
