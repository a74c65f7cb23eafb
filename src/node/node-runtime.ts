// One incarnation of a stream node, independent of where it runs: the StreamNode Durable Object is a thin
// shell over it, and the node test tier and the simulation run it in plain Node over the in-memory store
// and an in-memory metadata log. Start-up, before any request is served: register with the metadata log
// at this epoch, fence (seal) and replay the node's own WAL chain, open a WAL writer above the seal, attach
// forks to their sources, then start the transfer watcher and subscription delivery. If the WAL writer
// stops (fenced, or the store kept failing) the incarnation acknowledges nothing more and tells its shell,
// which replaces it with a new one.
import { LiveSlots } from "./live-slots.ts";
import type { DomainError } from "../core/errors.ts";
import type { MetaLogClient } from "../ports/meta-log-client.ts";
import { snapshotHistogram } from "../core/histogram.ts";
import { seriesSamples } from "../core/series.ts";
import { MAX_TAIL_IDS, type BucketInfo, type CreateTableAnswer, type NodeMetrics, type StreamTailInfo } from "../ports/stream-node-client.ts";
import type { JsonObject, JsonValue } from "../core/meta/json.ts";
import type { Coordinator } from "../core/meta/commands.ts";
import { bucketStreamConfig } from "../core/tables/bucket-stream.ts";
import { formatOffset } from "../core/protocol/offsets.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { WalFencedError, WalWriter } from "../storage/wal-writer.ts";
import { createLogger, type LogSink } from "../log/logger.ts";
import { attachMissingSources } from "./adopt.ts";
import { compactNode, type CompactionReport } from "./compaction.ts";
import { KeyedWaiters } from "../waits/keyed-waiters.ts";
import { type NodeContext, type ViewPort, type WalPort } from "./node-context.ts";
import { KeyedLock } from "./keyed-lock.ts";
import { TableBuckets } from "./table-buckets.ts";
import { snapshotBucket, snapshotDueBuckets } from "./table-snapshotter.ts";
import { leadBucket } from "./table-leader.ts";
import type { LoadedBucket } from "./table-buckets.ts";
import { parseBucketStreamName } from "../core/tables/bucketing.ts";
import type { TabletStorage } from "./tablet-storage.ts";
import { asDomainError } from "./replies.ts";
import { StreamObjectCache } from "./object-cache.ts";
import { recoverNode, type RecoveryResult } from "./recovery.ts";
import type { NodeSettings } from "./settings.ts";
import { countAcknowledged, meteredStore, newNodeMeters, storeLatencySnapshots, type NodeMeters } from "./store-metrics.ts";
import { isGone, StreamRegistry } from "./stream-registry.ts";
import { subscriptionDelivery } from "./subscription-delivery.ts";
import { expireIdle, removeStream } from "./stream-lifecycle.ts";
import { TransferWatcher } from "./transfer-watcher.ts";
import { takeOverOwnPast } from "./takeover-use.ts";
import { CoordinatorRole } from "./coordinator.ts";

/** The part of the metadata log a node uses. */
export type NodeMetaPort = Pick<
  MetaLogClient,
  | "propose"
  | "lookupStream"
  | "lookupTable"
  | "createTable"
  | "addPartition"
  | "watchDuties"
  | "heartbeat"
  | "coordinatorTick"
  | "collectable"
  | "onStreamAppended"
  | "onWebhookReply"
  | "watchSubscriptions"
>;

/**
 * A fault switched on for tests (POST /admin/faults): `zombie` stops heartbeats and lease renewals while
 * serving and WAL writes go on; `pause` stops them until `untilMs`. (`crash` is the shell's: it drops the
 * incarnation.)
 */
export type BeatFault = { readonly mode: "zombie" } | { readonly mode: "pause"; readonly untilMs: number };

/** What one heartbeat found: `replaced` means the log refuses this epoch (declared dead, or restarted). */
export type BeatOutcome = "ok" | "suppressed" | "replaced" | "failed";

export interface NodeRuntimeDeps {
  readonly nodeId: string;
  /** This incarnation's epoch: the wall clock at its start (docs/node.md), so every start is newer. */
  readonly nodeEpoch: number;
  /** The address the node advertises (`<origin>/n/<id>`). */
  readonly addr: string;
  readonly settings: NodeSettings;
  readonly store: ObjectStore;
  /** Where this node keeps the tablets of the table buckets it leads (SQLite in the Durable Object). */
  readonly tablets: TabletStorage;
  readonly meta: NodeMetaPort;
  /** Cached lookups of the metadata log (the shell decides how long they are trusted). */
  readonly view: ViewPort;
  readonly now: () => number;
  /** Monotonic ms for latencies (performance.now in workerd and Node; virtual time in the simulation). */
  readonly clockMs: () => number;
  readonly random: () => number;
  /** Where the node's structured log lines go (the console in workerd; tests capture them). */
  readonly logSink: LogSink;
  /** Keeps background work alive past the response (waitUntil in workerd). */
  readonly background: (work: Promise<unknown>) => void;
  /** Called once when the WAL writer stopped: the shell must replace this incarnation. */
  readonly onStopped: (error: DomainError) => void;
  /** How subscription effects reach webhooks and other nodes' wake streams (default: the global fetch; the simulation's network). */
  readonly effectsFetch?: typeof fetch;
}

export class NodeRuntime {
  private compacting: Promise<CompactionReport> | null = null;
  /** The WAL seq replay starts at (the checkpoint), as far as this incarnation knows. */
  private checkpointSeq: number;
  /** WAL bytes this incarnation had written when its last compaction began. */
  private bytesAtCheckpoint = 0;

  private constructor(
    readonly ctx: NodeContext,
    readonly recovery: RecoveryResult,
    readonly wal: WalWriter,
    readonly watcher: TransferWatcher,
    readonly coordinator: CoordinatorRole,
    private readonly meta: NodeMetaPort,
    /** Counters and histograms for /metrics, from the start on (recovery's store requests included). */
    private readonly meters: NodeMeters,
  ) {
    this.checkpointSeq = recovery.fromSeq;
  }

  /** Registers, fences and replays, then serves. Throws when the metadata log refuses the registration. */
  static async start(deps: NodeRuntimeDeps): Promise<NodeRuntime> {
    const { nodeId, nodeEpoch } = deps;
    const log = createLogger(deps.logSink, { node: nodeId, nodeEpoch }, deps.now);
    const registeredAtMs = deps.now();
    const startedMs = deps.clockMs();
    const meters = newNodeMeters(registeredAtMs, deps.clockMs);
    const store = meteredStore(deps.store, meters);
    const registered = await deps.meta.propose({ type: "RegisterNode", nodeId, nodeEpoch, addr: deps.addr });
    if (!registered.ok) throw new Error(`RegisterNode refused: ${registered.error.message}`);
    const registerMs = deps.clockMs() - startedMs;
    const takeovers = { completed: 0, streamsClosed: 0, walObjectsReplayed: 0, walBytesReplayed: 0, totalDurationMs: 0, maxDurationMs: 0 };
    const dead = registered.value.node.dead;
    // Back from the dead: its old incarnation's chain goes into manifests first (by this node, or by the
    // node that claimed it), so this start replays none of it and opens nothing it no longer owns.
    if (dead !== undefined) {
      const takeoverDeps = { nodeId, nodeEpoch, store, meta: deps.meta, now: deps.now, claimTtlMs: deps.settings.leaseTtlMs, log };
      await takeOverOwnPast(takeoverDeps, { nodeId, nodeEpoch: dead.epoch });
    }
    const objects = new StreamObjectCache(store);
    const registry = new StreamRegistry((key) => objects.get(key));
    const recoveringMs = deps.clockMs();
    const recovery = await recoverNode(store, registry, nodeId, nodeEpoch, deps.now());
    const recoverMs = deps.clockMs() - recoveringMs;
    const wal = new WalWriter(store, nodeId, nodeEpoch, recovery.sealSeq + 1, { batchDeadlineMs: deps.settings.walBatchDeadlineMs });
    const port: WalPort = {
      get queuedBytes() {
        return wal.queuedBytes;
      },
      append: async (records) => {
        let ack: { seq: number };
        try {
          ack = await wal.append(records);
        } catch (error) {
          stopServing(ctx, error, deps);
          throw error;
        }
        countAcknowledged(meters, records);
        return ack;
      },
    };
    const ctx: NodeContext = {
      nodeId,
      nodeEpoch,
      settings: deps.settings,
      registry,
      // Every waiter is an admitted live reader (read-path.ts, takeLiveSlot): the cap is never reached first.
      readers: new KeyedWaiters(deps.settings.maxLiveReaders),
      liveReaders: new LiveSlots(),
      bodies: { heldBytes: 0 },
      parked: new KeyedWaiters(),
      wal: port,
      store,
      meta: deps.meta,
      view: deps.view,
      locks: new KeyedLock(),
      tables: new TableBuckets(deps.tablets, deps.settings.maxLiveReaders),
      takeovers,
      log,
      meters,
      observers: new Set(),
      now: deps.now,
      random: deps.random,
      background: deps.background,
      stopped: null,
      // The registration counts as a heartbeat (the log records it as one).
      liveUntilMs: registeredAtMs + selfLeaseMs(deps.settings),
    };
    ctx.observers.add(subscriptionDelivery(ctx, deps.meta, deps.effectsFetch));
    await attachMissingSources(ctx);
    // Transfers this node takes part in, from now on and left over from before a crash (docs/transfers.md).
    const watcher = new TransferWatcher(ctx, deps.meta);
    deps.background(watcher.run());
    const { settings } = deps;
    const coordinator = new CoordinatorRole({
      nodeId,
      nodeEpoch,
      meta: deps.meta,
      store,
      now: deps.now,
      leaseTtlMs: settings.leaseTtlMs,
      tickMs: settings.coordinatorTickMs,
      maxMovesPerTick: settings.maxReassignPerTick,
      log,
    });
    log.log("node.start", {
      addr: deps.addr,
      registerMs: roundMs(registerMs),
      recoverMs: roundMs(recoverMs),
      totalMs: roundMs(deps.clockMs() - startedMs),
      tookOverOwnPast: dead === undefined ? null : dead.epoch,
      fromSeq: recovery.fromSeq,
      sealSeq: recovery.sealSeq,
      walObjects: recovery.objectsReplayed,
      walRecords: recovery.recordsReplayed,
      walBytes: recovery.bytesReplayed,
      streams: recovery.streams,
    });
    return new NodeRuntime(ctx, recovery, wal, watcher, coordinator, deps.meta, meters);
  }

  /** A test fault on the heartbeat (see BeatFault); null: none. */
  fault: BeatFault | null = null;

  /**
   * One heartbeat (the shell calls it every `heartbeatMs`: the Durable Object's alarm): tell the log this
   * incarnation lives, then hold or ask for the coordinator lease and tick when due. Heartbeats go first
   * and are cheap, so a busy node is not mistaken for a dead one. `replaced`: the log refuses this epoch
   * (declared dead, or a newer incarnation registered): the shell must drop this incarnation.
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
    try {
      await expireIdle(this.ctx);
    } catch (error) {
      this.ctx.log.log("node.error", { during: "expire_idle" }, error);
    }
    this.snapshotInBackground();
    return "ok";
  }

  private snapshotting: Promise<unknown> | null = null;

  /** The table buckets due a snapshot, one round at a time, beside the heartbeats (never holding one back). */
  private snapshotInBackground(): void {
    if (this.snapshotting !== null || this.ctx.stopped !== null) return;
    this.snapshotting = snapshotDueBuckets(this.ctx)
      .catch((error: unknown) => this.ctx.log.log("node.error", { during: "table_snapshot" }, error))
      .finally(() => {
        this.snapshotting = null;
      });
    this.ctx.background(this.snapshotting);
  }

  /** Snapshots the loaded buckets among these streams now (`mink table snapshot`): the refs committed. */
  async snapshotBuckets(streamIds: readonly string[]): Promise<{ streamId: string; coveredOffset: string | null; error: string | null }[]> {
    const results = [];
    for (const streamId of new Set(streamIds)) {
      const bucket = await this.bucketHere(streamId);
      if (typeof bucket === "string") {
        results.push({ streamId, coveredOffset: null, error: bucket });
        continue;
      }
      const ref = await snapshotBucket(this.ctx, bucket);
      results.push({ streamId, coveredOffset: "code" in ref ? null : formatOffset(ref.coveredPosition), error: "code" in ref ? ref.code : null });
    }
    return results;
  }

  /** The bucket of this stream, loaded here (as a request for it would), or why not. */
  private async bucketHere(streamId: string): Promise<LoadedBucket | string> {
    const stream = this.ctx.registry.get(streamId);
    const address = stream === undefined ? null : parseBucketStreamName(stream.name);
    if (stream === undefined || address === null) return "not_loaded";
    const led = await leadBucket(this.ctx, { ...address, pathAndQuery: "" });
    if ("kind" in led) return led.kind === "error" ? led.error.code : "not_leader";
    return led.bucket.kind === "primary-key" ? led.bucket : "log_table";
  }

  private async coordinatorStep(): Promise<void> {
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
    const { settings } = this.ctx;
    return (
      this.wal.nextSeq - this.checkpointSeq >= settings.compactAfterWalObjects ||
      this.wal.stats.bytesWritten - this.bytesAtCheckpoint >= settings.compactAfterWalBytes
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
    if (this.compacting === null) this.bytesAtCheckpoint = this.wal.stats.bytesWritten;
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
    return this.tails(streamIds).map(({ streamId, offset }) => {
      const stream = this.ctx.registry.get(streamId);
      const bucket = stream === undefined ? undefined : this.ctx.tables.current(stream);
      const rows = bucket === undefined ? null : bucket.kind === "log" ? bucket.state.tablet.appliedOffset : bucket.tablet.count();
      return { streamId, nextOffset: offset, rows };
    });
  }

  /**
   * A dropped table's buckets led here (DELETE /v1/table/<name> asks every leader before DropTable): each
   * bucket stream removed as a DELETE would (a WAL record, DeleteStream, memory) and its tablet dropped.
   */
  async dropBuckets(streamIds: readonly string[]): Promise<number> {
    let dropped = 0;
    for (const streamId of new Set(streamIds)) {
      const stream = this.ctx.registry.get(streamId);
      if (stream !== undefined && !isGone(stream)) {
        await this.ctx.locks.run(`name:${stream.name}`, () => removeStream(this.ctx, stream));
        dropped++;
      }
      this.ctx.tables.forget(streamId);
      this.ctx.tables.storage.open(streamId).drop();
    }
    return dropped;
  }

  /** CreateTable at this node's coordinator epoch (docs/tables.md): refused as `fenced` unless it holds the lease. */
  async createTable(name: string, definition: JsonValue, buckets: number): Promise<CreateTableAnswer> {
    const coordinator = await this.asCoordinator();
    const result = await this.meta.createTable(coordinator, name, definition, buckets, bucketStreamConfig() as unknown as JsonObject);
    return result.ok ? { ok: true, created: result.changed } : { ok: false, error: result.error };
  }

  /** AddPartition at this node's coordinator epoch (docs/tables.md, table AP), as createTable. */
  async addPartition(table: string, value: string | number): Promise<CreateTableAnswer> {
    const coordinator = await this.asCoordinator();
    const result = await this.meta.addPartition(coordinator, table, value, bucketStreamConfig() as unknown as JsonObject);
    return result.ok ? { ok: true, created: result.changed } : { ok: false, error: result.error };
  }

  private async asCoordinator(): Promise<Coordinator> {
    // Not the coordinator as far as this incarnation knows: ask for the lease now (a fresh deployment has
    // none until the first heartbeats), rather than refuse a create that the next heartbeat would take.
    if (this.coordinator.coordinatorEpoch === null) await this.coordinatorStep();
    return { nodeId: this.ctx.nodeId, nodeEpoch: this.ctx.nodeEpoch, coordinatorEpoch: this.coordinator.coordinatorEpoch ?? 0 };
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
      openStreams,
      liveReaders: this.ctx.readers.size,
      transferSteps: { ...this.watcher.stats },
      coordinator: {
        coordinatorEpoch: this.coordinator.coordinatorEpoch,
        ticks: this.coordinator.stats.ticks,
        failovers: this.coordinator.stats.failovers,
        reassigned: this.coordinator.stats.reassigned,
      },
      takeovers: { ...this.ctx.takeovers },
    };
  }
}

function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** How long a node serves after a heartbeat was acknowledged (see NodeContext.liveUntilMs). */
function selfLeaseMs(settings: NodeSettings): number {
  return Math.max(settings.leaseTtlMs - settings.heartbeatMs, settings.leaseTtlMs / 2);
}

/** The WAL writer stopped: acknowledge nothing more, end live readers, tell the shell (once). */
function stopServing(ctx: NodeContext, error: unknown, deps: NodeRuntimeDeps): void {
  if (ctx.stopped !== null) return;
  const stopped = asDomainError(error);
  ctx.stopped = stopped;
  if (error instanceof WalFencedError) ctx.log.log("node.fenced", { code: stopped.code }, error);
  else ctx.log.log("node.stopped", { code: stopped.code }, error);
  ctx.readers.shutdown();
  deps.onStopped(stopped);
}
