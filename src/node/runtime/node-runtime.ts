// One incarnation of a stream node, independent of where it runs: the StreamNode Durable Object is a thin
// shell over it, and the node test tier and the simulation run it in plain Node over the in-memory store
// and an in-memory metadata log. This class is what the shells call; each job is in its own file:
// start-up (wiring.ts), the heartbeat and the coordinator lease (heartbeat.ts), compaction and table
// snapshot scheduling (maintenance.ts), the table calls (table-admin.ts). Here: what one heartbeat does
// in order, TTL expiry, the stream tails and the metrics it reports, and stopping.
import { snapshotHistogram } from "../../core/histogram.ts";
import { seriesSamples } from "../../core/series.ts";
import type { JsonValue } from "../../core/meta/json.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";
import type { TierTableAnswer } from "../../core/tiering/tier-report.ts";
import { MAX_TAIL_IDS, type BucketInfo, type ChangelogPageAnswer, type CreateTableAnswer, type NodeMetrics, type StreamTailInfo } from "../../ports/stream-node-client.ts";
import type { WalWriter } from "../../storage/wal-writer.ts";
import { storeLatencySnapshots, type NodeMeters } from "../state/store-metrics.ts";
import { isGone } from "../state/stream-registry.ts";
import type { CompactionReport } from "../streams/compaction.ts";
import { expireIdle } from "../streams/lifecycle.ts";
import type { RecoveryResult } from "../streams/recovery.ts";
import type { TransferWatcher } from "../ownership/transfer-watcher.ts";
import type { TableContext } from "../tables/buckets.ts";
import type { CoordinatorRole } from "../coordinator/role.ts";
import { Heartbeat, type BeatFault, type BeatOutcome } from "./heartbeat.ts";
import { Maintenance } from "./maintenance.ts";
import { evictIdle } from "../streams/eviction.ts";
import { TableAdmin } from "./table-admin.ts";
import { TieringLoop } from "./tiering-loop.ts";
import { startIncarnation, type Incarnation, type NodeRuntimeDeps } from "./wiring.ts";

export class NodeRuntime {
  readonly ctx: TableContext;
  readonly recovery: RecoveryResult;
  readonly wal: WalWriter;
  readonly watcher: TransferWatcher;
  readonly coordinator: CoordinatorRole;
  /** Counters and histograms for /metrics, from the start on (recovery's store requests included). */
  private readonly meters: NodeMeters;
  private readonly heartbeat: Heartbeat;
  private readonly maintenance: Maintenance;
  private readonly tables: TableAdmin;
  private readonly tiering: TieringLoop;

  private constructor(parts: Incarnation, meta: NodeRuntimeDeps["meta"], tiering: NodeRuntimeDeps["tiering"]) {
    this.ctx = parts.ctx;
    this.recovery = parts.recovery;
    this.wal = parts.wal;
    this.watcher = parts.watcher;
    this.coordinator = parts.coordinator;
    this.meters = parts.meters;
    this.heartbeat = new Heartbeat(this.ctx, meta, this.coordinator);
    this.maintenance = new Maintenance(this.ctx, this.wal, this.recovery);
    this.tables = new TableAdmin(this.ctx, meta, this.coordinator, () => this.heartbeat.coordinatorStep(), tiering ?? null);
    this.tiering = new TieringLoop(this.ctx, meta, this.coordinator, (name) => this.tables.tierTable(name));
  }

  /** Registers, fences and replays, then serves. Throws when the metadata log refuses the registration. */
  static async start(deps: NodeRuntimeDeps): Promise<NodeRuntime> {
    return new NodeRuntime(await startIncarnation(deps), deps.meta, deps.tiering);
  }

  /** A test fault on the heartbeat (see BeatFault); null: none. */
  get fault(): BeatFault | null {
    return this.heartbeat.fault;
  }

  set fault(fault: BeatFault | null) {
    this.heartbeat.fault = fault;
  }

  /**
   * One heartbeat (the shell calls it every `heartbeatMs`: the Durable Object's alarm): tell the log this
   * incarnation lives, then hold or ask for the coordinator lease and tick when due (heartbeat.ts), then
   * expire idle streams and start the evictions and table snapshots due. `replaced`: the shell must drop this incarnation.
   */
  async beat(): Promise<BeatOutcome> {
    const outcome = await this.heartbeat.beat();
    if (outcome !== "ok") return outcome;
    try {
      await expireIdle(this.ctx);
    } catch (error) {
      this.ctx.log.log("node.error", { during: "expire_idle" }, error);
    }
    this.maintenance.evictInBackground();
    this.maintenance.snapshotInBackground();
    this.tiering.startWhenDue();
    return "ok";
  }

  /**
   * A crash (fault injection, tests): acknowledges nothing more, ends live readers, stops the background
   * loops. Unlike a stop of the WAL writer, the shell is not told (it stays down until healed).
   */
  halt(): void {
    if (this.ctx.stopped === null) this.ctx.stopped = { code: "unavailable", message: "the node crashed (fault injection)" };
    this.ctx.readers.shutdown();
    this.stop();
  }

  /** Stops the background loops (a crash or a replaced incarnation in tests and the shell). */
  stop(): void {
    this.watcher.stop();
  }

  /** Whether the WAL has grown past a compaction threshold since the last checkpoint. */
  compactionDue(): boolean {
    return this.maintenance.compactionDue();
  }

  /** One eviction round now (streams/eviction.ts): how many idle streams left memory. */
  evictIdle(): Promise<number> {
    return evictIdle(this.ctx);
  }

  /** Compacts the WAL (maintenance.ts); a call during a run waits for it. Null once the node stopped serving. */
  compact(): Promise<CompactionReport | null> {
    return this.maintenance.compact();
  }

  /**
   * The tails of the streams asked for, from the registry (every stream this incarnation replayed, created
   * or adopted is in memory: no store request, no open). Streams it does not hold, or holds only as deleted
   * or handed away, are left out; a soft-deleted stream (forks still read it) is reported.
   */
  tails(streamIds: readonly string[]): StreamTailInfo[] {
    if (streamIds.length > MAX_TAIL_IDS) throw new RangeError(`at most ${MAX_TAIL_IDS} stream ids per call (got ${streamIds.length})`);
    const tails: StreamTailInfo[] = [];
    for (const streamId of new Set(streamIds)) {
      const stream = typeof streamId === "string" ? this.ctx.registry.get(streamId) : undefined;
      if (stream === undefined || isGone(stream)) continue;
      tails.push({ streamId, offset: formatOffset(stream.tail), bytes: stream.tail, closed: stream.eof });
    }
    return tails;
  }

  /** The table buckets among these streams, from memory (no open, no load): tail and tablet size. */
  tableBuckets(streamIds: readonly string[]): BucketInfo[] {
    return this.tables.tableBuckets(this.tails(streamIds));
  }

  /** Snapshots the loaded buckets among these streams now (`mink table snapshot`): the refs committed. */
  snapshotBuckets(streamIds: readonly string[]): Promise<{ streamId: string; coveredOffset: string | null; error: string | null }[]> {
    return this.tables.snapshotBuckets(streamIds);
  }

  /** A dropped table's buckets led here, removed (table-admin.ts). */
  dropBuckets(streamIds: readonly string[]): Promise<number> {
    return this.tables.dropBuckets(streamIds);
  }

  /** CreateTable at this node's coordinator epoch (docs/tables.md): refused as `fenced` unless it holds the lease. */
  createTable(name: string, definition: JsonValue, buckets: number): Promise<CreateTableAnswer> {
    return this.tables.createTable(name, definition, buckets);
  }

  /** AddPartition at this node's coordinator epoch (docs/tables.md, table AP), as createTable. */
  addPartition(table: string, value: string | number): Promise<CreateTableAnswer> {
    return this.tables.addPartition(table, value);
  }

  /** A tiering round of the table as the coordinator (docs/tiering.md). */
  tierTable(name: string): Promise<TierTableAnswer> {
    return this.tables.tierTable(name);
  }

  /** A page of a bucket's changelog read here as its leader, for a tiering round. */
  readBucketChangelog(table: string, partition: string | number | null, bucket: number, fromPosition: number, maxBytes: number): Promise<ChangelogPageAnswer> {
    return this.tables.readBucketChangelog(table, partition, bucket, fromPosition, maxBytes);
  }

  /** This incarnation's counters and gauges. */
  metrics(): NodeMetrics {
    let openStreams = 0;
    for (const stream of this.ctx.registry.all()) if (!isGone(stream)) openStreams++;
    return {
      nodeId: this.ctx.nodeId,
      nodeEpoch: this.ctx.nodeEpoch,
      started: true,
      appendsAcknowledged: this.meters.appendCounts.appends,
      bytesAppended: this.meters.appendCounts.bytes,
      storeRequests: { ...this.meters.storeRequests },
      storeLatency: storeLatencySnapshots(this.meters),
      ackLatency: snapshotHistogram(this.meters.ack),
      series: seriesSamples(this.meters.series, this.ctx.now()),
      walFlushes: this.wal.stats.objectsWritten,
      walBytesWritten: this.wal.stats.bytesWritten,
      walInFlight: this.wal.objectsInFlight,
      walRoundTripMs: this.wal.observedRoundTripMs,
      openStreams,
      streamsEvicted: this.meters.residency.evicted,
      streamsReloaded: this.meters.residency.reloaded,
      liveReaders: this.ctx.readers.size,
      transferSteps: { ...this.watcher.stats },
      coordinator: {
        coordinatorEpoch: this.coordinator.coordinatorEpoch,
        ticks: this.coordinator.stats.ticks,
        failovers: this.coordinator.stats.failovers,
        reassigned: this.coordinator.stats.reassigned,
      },
      takeovers: { ...this.meters.takeovers },
    };
  }
}
