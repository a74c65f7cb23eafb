// The metadata log's behaviour, independent of where its log is kept: proposals applied with the pure
// `apply` and made visible in the same synchronous step that journals them, lookups, and node liveness
// (heartbeats: soft state, never journaled). Watches (meta-log-watches.ts), the coordinator's requests
// (meta-log-coordinator.ts), drains and rebalance rounds (meta-log-moves.ts) are files of their own that
// this service delegates to. The MetaLog Durable Object runs it over SQLite (durable-objects/meta-log.ts,
// meta-log-persistence.ts); the node test tier and the simulation run it over an in-memory journal (memory-journal.ts), so every tier applies the same rules.
import {
  admitCommand,
  admitGrowth,
  admitTables,
  apply,
  checkHeartbeat,
  DEFAULT_LEASE_TTL_MS,
  type Coordinator,
  drainProgress,
  fullView,
  liveNodes,
  lookupStream,
  metaBytesDelta,
  metaBytesOf,
  lookupTable,
  listStreams,
  nodesView,
  type NodesView,
  tablesOf,
  pendingTransfers,
  seedLiveness,
  touchedBy,
  type AdmissionLimits,
  type Command,
  type DrainProgress,
  type LogEntry,
  type MetaState,
  type MetaView,
  type NodeRecord,
  type StreamListing,
  type StreamListQuery,
  type StreamLookup,
  type TableListing,
  type TableLookup,
  type StreamQuery,
  type StreamView,
  type Touched,
  type ViewChanges,
} from "../core/meta/index.ts";
import type { CollectionAnswer, CoordinatorTickAnswer, DrainAnswer, HeartbeatResult, NodeDuties, NodeLiveness, ProposeResult } from "../ports/meta-log-client.ts";
import type { JsonObject, JsonValue } from "../core/meta/json.ts";
import { partitionCount } from "../core/meta/table-rules.ts";
import { DEFAULT_EDGE_LIMITS } from "../core/edge-limits.ts";
import type { RebalanceAnswer, RebalanceOptions } from "../ports/meta-log-client.ts";
import { addPartition, collectable, coordinatorTick, createTable } from "./meta-log-coordinator.ts";
import { drain, rebalance, undrain } from "./meta-log-moves.ts";
import { MetaLogWatches } from "./meta-log-watches.ts";

/** Where accepted entries go. Both calls are synchronous: an entry is durable before it is visible. */
export interface MetaLogJournal {
  /**
   * Journals an accepted entry and the state it made (`metaBytes`: that state's bytes, table AD), and
   * returns the state to go on with: `next` itself, or its stored equivalent (stored-state.ts).
   */
  append(entry: LogEntry, touched: Touched, next: MetaState, metaBytes: number): MetaState;
  /** What the entries after `since` up to `upTo` touched, or null when they are no longer retained. */
  touchedBetween(since: number, upTo: number): Touched[] | null;
}

/** Knobs read at each use, so a caller (tests) may change them on a running log. */
export interface MetaLogTimings {
  /** A node is live while its last heartbeat is younger than this (LEASE_TTL_MS). */
  leaseTtlMs: number;
  /** Upper bound of one watch long-poll. */
  maxWatchMs: number;
}

/** The most streams a full view (tests, diagnostics) holds. */
const VIEW_MAX_STREAMS = 10_000;

export const DEFAULT_TIMINGS: MetaLogTimings = { leaseTtlMs: DEFAULT_LEASE_TTL_MS, maxWatchMs: 60_000 };

/** Admission bounds (table AD); the default is the deployment's (DEFAULT_EDGE_LIMITS). */
export const DEFAULT_ADMISSION: AdmissionLimits = { maxStreams: DEFAULT_EDGE_LIMITS.maxStreams, maxMetaBytes: DEFAULT_EDGE_LIMITS.maxMetaBytes };

export interface MetaLogServiceOptions {
  /** The clock (ms): entries record it, liveness is measured with it. */
  readonly now: () => number;
  readonly timings?: MetaLogTimings;
  /** Bounds checked before apply, never on replay (table AD); read at each use. */
  readonly admission?: AdmissionLimits;
  /** The bytes of `state` (table AD) when the caller knows them; counted over every record otherwise. */
  readonly metaBytes?: number;
}

export class MetaLogService {
  readonly timings: MetaLogTimings;
  readonly admission: AdmissionLimits;
  private current: MetaState;
  private readonly lastSeenMs: Map<string, number>;
  /** Since this service started: DeclareDead and CompleteTakeover entries accepted (for /metrics). */
  readonly failoverCounts = { failovers: 0, takeovers: 0 };
  readonly now: () => number;
  private readonly watches: MetaLogWatches;
  /** UTF-8 bytes of the state's stream names, configurations and table definitions (MAX_META_BYTES, AD4). */
  private metaBytes: number;

  /** `state` is what the journal holds (loaded and replayed by the caller). */
  constructor(
    state: MetaState,
    private readonly journal: MetaLogJournal,
    options: MetaLogServiceOptions,
  ) {
    this.current = state;
    this.metaBytes = options.metaBytes ?? metaBytesOf(state);
    this.now = options.now;
    this.watches = new MetaLogWatches(this, (since, upTo) => this.journal.touchedBetween(since, upTo));
    this.timings = options.timings ?? { ...DEFAULT_TIMINGS };
    this.admission = options.admission ?? { ...DEFAULT_ADMISSION };
    // After a restart every registered node counts as seen now: a restart never declares everyone dead.
    this.lastSeenMs = seedLiveness(state, this.now());
  }

  get state(): MetaState {
    return this.current;
  }

  /**
   * Applies one command. An accepted change is journaled and becomes visible in one synchronous step (no
   * await in between, so proposals are applied one at a time in arrival order); a rejection or a no-op
   * writes nothing. A command refused at admission (table AD: a bound such as MAX_STREAMS) writes nothing
 * either, and never reaches apply, so replay never judges old entries by today's limits. Lease commands take their time from this clock, recorded in the entry.
   */
  propose(command: Command): ProposeResult {
    const refused = admitCommand(this.current, command, this.admission);
    if (refused !== null) return { ok: false, error: refused, version: this.current.version };
    const nowMs = this.now();
    const { state, result } = apply(this.current, command, { nowMs });
    if (result.ok && result.changed) {
      const touched = touchedBy(command, result);
      const delta = metaBytesDelta(this.current, state, touched);
      const tooMuch = admitGrowth(command, this.metaBytes + delta, delta, this.admission) ?? admitTables(command, this.current, state);
      if (tooMuch !== null) return { ok: false, error: tooMuch, version: this.current.version };
      this.current = this.journal.append({ index: state.version, command, nowMs }, touched, state, this.metaBytes + delta);
      this.metaBytes += delta;
      if (command.type === "RegisterNode") this.lastSeenMs.set(command.nodeId, nowMs);
      if (command.type === "DeclareDead") this.failoverCounts.failovers++;
      if (command.type === "CompleteTakeover") this.failoverCounts.takeovers++;
      this.watches.changed(touched);
    }
    return { ...result, version: this.current.version };
  }

  /**
   * Every record at once: for tests and diagnostics of a small log only (refused past VIEW_MAX_STREAMS),
   * since nothing on a request's path may need the whole state in memory or in one answer.
   */
  view(): MetaView {
    if (this.current.streams.size > VIEW_MAX_STREAMS) throw new RangeError(`a full view holds at most ${VIEW_MAX_STREAMS} streams; this log has ${this.current.streams.size}`);
    return fullView(this.current);
  }

  /** Every node, the lease and what each node owns (table NC): GET /admin/nodes. */
  nodesView(): NodesView {
    return nodesView(this.current);
  }

  /** UTF-8 bytes of stream names, configurations and table definitions held (for stats and tests). */
  get metaBytesHeld(): number {
    return this.metaBytes;
  }

  lookupStream(query: StreamQuery): StreamLookup {
    return lookupStream(this.current, query);
  }

  /** A table's definition and its buckets' streams and leaders (docs/tables.md). */
  lookupTable(name: string): TableLookup {
    return lookupTable(this.current, String(name));
  }

  /** Every table (at most MAX_TABLES), by name. */
  listTables(): TableListing {
    const state = this.current;
    return { version: state.version, tables: tablesOf(state).map((table) => ({ name: table.name, definition: table.definition, buckets: table.buckets.length, partitions: partitionCount(table), tiered: table.tiered ?? null })) };
  }

  /** One page of the streams by name (table LS in src/core/meta/stream-listing.ts). */
  listStreams(query: StreamListQuery): StreamListing {
    return listStreams(this.current, query);
  }

  /** The view's changes since a version, waiting for the next one (MetaLogWatches.watch). */
  watch(since: number, timeoutMs: number): Promise<ViewChanges> {
    if (this.current.streams.size > VIEW_MAX_STREAMS) throw new RangeError(`a view watch serves logs of at most ${VIEW_MAX_STREAMS} streams`);
    return this.watches.watch(since, timeoutMs);
  }

  /** A node's transfers and the streams handed to it (MetaLogWatches.watchDuties). */
  watchDuties(nodeId: string, since: number, timeoutMs: number, nodeEpoch?: number): Promise<NodeDuties> {
    return this.watches.watchDuties(nodeId, since, timeoutMs, nodeEpoch);
  }

  /** Every pending transfer (admin). */
  pendingTransfers(): { version: number; streams: StreamView[] } {
    return { version: this.current.version, streams: pendingTransfers(this.current) };
  }

  /** Drain (meta-log-moves.ts): no new placements, and a transfer of each stream away, in one step. */
  drain(nodeId: string): DrainAnswer {
    return drain(this, nodeId);
  }

  /** Ends a drain: the node takes placements again (what moved stays where it is). */
  undrain(nodeId: string): DrainAnswer {
    return undrain(this, nodeId);
  }

  drainProgress(nodeId: string): DrainProgress | null {
    return drainProgress(this.current, nodeId);
  }

  /** One coordinator tick (meta-log-coordinator.ts): dead nodes declared, their streams re-led. */
  coordinatorTick(coordinator: Coordinator, maxMoves: number): CoordinatorTickAnswer {
    return coordinatorTick(this, coordinator, maxMoves);
  }

  /** CreateTable for the coordinator, its leaders assigned over the live nodes (docs/tables.md, table A). */
  createTable(coordinator: Coordinator, name: string, definition: JsonValue, buckets: number, streamConfig: JsonObject): ProposeResult<"CreateTable"> {
    return createTable(this, coordinator, name, definition, buckets, streamConfig);
  }

  /** AddPartition at the coordinator's epoch, led as a new table's buckets are (table A). */
  addPartition(coordinator: Coordinator, table: string, value: string | number, streamConfig: JsonObject): ProposeResult<"AddPartition"> {
    return addPartition(this, coordinator, table, value, streamConfig);
  }

  /** Which of these stream ids found in the store may be collected (table GC), for the coordinator only. */
  collectable(coordinator: Coordinator, streamIds: readonly string[]): CollectionAnswer {
    return collectable(this, coordinator, streamIds);
  }

  /** Records a heartbeat (soft state: lost on restart, see seedLiveness). */
  heartbeat(nodeId: string, nodeEpoch: number): HeartbeatResult {
    const error = checkHeartbeat(this.current, nodeId, nodeEpoch);
    if (error !== null) return { ok: false, error };
    this.lastSeenMs.set(nodeId, this.now());
    return { ok: true, version: this.current.version };
  }

  /** Registered nodes that heartbeated within leaseTtlMs of nowMs (default: now), by id. */
  liveNodes(nowMs?: number): NodeRecord[] {
    return liveNodes(this.current, this.lastSeenMs, nowMs ?? this.now(), this.timings.leaseTtlMs);
  }

  /** Every registered node's last heartbeat age (null: none since this log started) and liveness. */
  liveness(): NodeLiveness[] {
    const nowMs = this.now();
    const live = new Set(this.liveNodes(nowMs).map((node) => node.id));
    return [...this.current.nodes.keys()].sort().map((nodeId) => {
      const seenMs = this.lastSeenMs.get(nodeId);
      return { nodeId, live: live.has(nodeId), lastHeartbeatAgoMs: seenMs === undefined ? null : nowMs - seenMs };
    });
  }

  /** A watch's wait: at least 0, at most maxWatchMs. */
  boundedWaitMs(timeoutMs: number): number {
    return Math.max(0, Math.min(Number.isFinite(timeoutMs) ? timeoutMs : 0, this.timings.maxWatchMs));
  }

  /** One round of a rebalance (meta-log-moves.ts), planned and begun in one synchronous step. */
  rebalance(options: RebalanceOptions): RebalanceAnswer {
    return rebalance(this, options);
  }
}
