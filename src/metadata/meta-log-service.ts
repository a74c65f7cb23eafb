// The metadata log's behaviour, independent of where its log is kept: proposals applied with the pure
// `apply` and made visible in the same synchronous step that journals them, lookups, long-poll watches of
// the view and of a node's duties, drain, and node liveness (heartbeats: soft state, never journaled).
// The MetaLog Durable Object runs it over SQLite (durable-objects/meta-log.ts); the node test tier and
// the simulation run it over an in-memory journal (memory-journal.ts), so every tier applies the same rules.
import {
  admitCommand,
  admitGrowth,
  apply,
  changesSince,
  checkHeartbeat,
  checkCoordinator,
  collectableStreams,
  concernsNode,
  deadToDeclare,
  DEFAULT_LEASE_TTL_MS,
  MAX_REASSIGN_BATCH,
  planReassignments,
  type Coordinator,
  drainProgress,
  fullChanges,
  fullView,
  handedToNode,
  insertName,
  isEligible,
  isHandedTo,
  listStreams,
  liveNodes,
  lookupStream,
  metaBytesDelta,
  metaBytesOf,
  lookupTable,
  tablesOf,
  pendingTransfers,
  planDrain,
  removeName,
  seedLiveness,
  sortedStreamNames,
  touchedBy,
  transferDuties,
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
import { KeyedWaiters } from "../waits/keyed-waiters.ts";
import { assignBuckets } from "../core/tables/assignment.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../core/meta/json.ts";
import { partitionCount } from "../core/meta/table-rules.ts";
import { DEFAULT_EDGE_LIMITS } from "../core/edge-limits.ts";
import { planRebalance, type RebalanceMove } from "../core/meta/rebalance.ts";
import type { RebalanceAnswer, RebalanceOptions } from "../ports/meta-log-client.ts";

/** The one key watchers wait on: the log's next change. */
const CHANGE = "change";

/** Where accepted entries go. Both calls are synchronous: an entry is durable before it is visible. */
export interface MetaLogJournal {
  append(entry: LogEntry, touched: Touched): void;
  /** What the entries after `since` up to `upTo` touched, or null when they are no longer retained. */
  touchedBetween(since: number, upTo: number): Touched[] | null;
  /** Called after each accepted entry with the new state (the SQLite journal snapshots from here). */
  afterAppend?(state: MetaState): void;
}

/** Knobs read at each use, so a caller (tests) may change them on a running log. */
export interface MetaLogTimings {
  /** A node is live while its last heartbeat is younger than this (LEASE_TTL_MS). */
  leaseTtlMs: number;
  /** Upper bound of one watch long-poll. */
  maxWatchMs: number;
}

export const DEFAULT_TIMINGS: MetaLogTimings = { leaseTtlMs: DEFAULT_LEASE_TTL_MS, maxWatchMs: 60_000 };

/** Admission bounds (table AD); the default is the deployment's (DEFAULT_EDGE_LIMITS). */
export const DEFAULT_ADMISSION: AdmissionLimits = { maxStreams: DEFAULT_EDGE_LIMITS.maxStreams, maxMetaBytes: DEFAULT_EDGE_LIMITS.maxMetaBytes };

export interface MetaLogServiceOptions {
  /** The clock (ms): entries record it, liveness is measured with it. */
  readonly now: () => number;
  readonly timings?: MetaLogTimings;
  /** Bounds checked before apply, never on replay (table AD); read at each use. */
  readonly admission?: AdmissionLimits;
}

export class MetaLogService {
  readonly timings: MetaLogTimings;
  readonly admission: AdmissionLimits;
  private current: MetaState;
  private readonly lastSeenMs: Map<string, number>;
  /** Since this service started: DeclareDead and CompleteTakeover entries accepted (for /metrics). */
  readonly failoverCounts = { failovers: 0, takeovers: 0 };
  /** Watchers waiting for the next change (one key). */
  private readonly waiters = new KeyedWaiters();
  private readonly now: () => number;
  /**
   * Every stream name in code-unit order, for the listing (GET /admin/streams): built at the first listing,
   * then kept up to date by each accepted change (names are created and deleted, never renamed), so a page
   * costs two binary searches. `of` is the name map it describes.
   */
  private names: { of: MetaState["streamIdsByName"]; sorted: string[] } | null = null;
  /** UTF-8 bytes of the state's stream names, configurations and table definitions (MAX_META_BYTES, AD4). */
  private metaBytes: number;

  /** `state` is what the journal holds (loaded and replayed by the caller). */
  constructor(
    state: MetaState,
    private readonly journal: MetaLogJournal,
    options: MetaLogServiceOptions,
  ) {
    this.current = state;
    this.metaBytes = metaBytesOf(state);
    this.now = options.now;
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
      const tooMuch = admitGrowth(command, this.metaBytes + delta, delta, this.admission);
      if (tooMuch !== null) return { ok: false, error: tooMuch, version: this.current.version };
      this.metaBytes += delta;
      this.journal.append({ index: state.version, command, nowMs }, touched);
      this.keepNamesSorted(this.current, state, touched.streams ?? []);
      this.current = state;
      if (command.type === "RegisterNode") this.lastSeenMs.set(command.nodeId, nowMs);
      if (command.type === "DeclareDead") this.failoverCounts.failovers++;
      if (command.type === "CompleteTakeover") this.failoverCounts.takeovers++;
      this.journal.afterAppend?.(state);
      this.waiters.notify(CHANGE);
    }
    return { ...result, version: this.current.version };
  }

  view(): MetaView {
    return fullView(this.current);
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
    return { version: state.version, tables: tablesOf(state).map((table) => ({ name: table.name, definition: table.definition, buckets: table.buckets.length, partitions: partitionCount(table) })) };
  }

  /** One page of the streams by name (table LS in src/core/meta/stream-listing.ts). */
  listStreams(query: StreamListQuery): StreamListing {
    const state = this.current;
    if (this.names === null || this.names.of !== state.streamIdsByName) {
      // The first listing (or a state the kept names do not describe): sort every name, O(n log n).
      this.names = { of: state.streamIdsByName, sorted: sortedStreamNames(state) };
    }
    return listStreams(state, this.names.sorted, query);
  }

  /** The sorted names follow an accepted change: the names of the streams it created or deleted. */
  private keepNamesSorted(before: MetaState, after: MetaState, streamIds: readonly string[]): void {
    const names = this.names;
    if (names === null || names.of !== before.streamIdsByName) return;
    if (after.streamIdsByName === before.streamIdsByName) return;
    const added: string[] = [];
    for (const id of streamIds) {
      const was = before.streams.get(id)?.name;
      const is = after.streams.get(id)?.name;
      if (was === is) continue;
      if (was !== undefined) removeName(names.sorted, was);
      if (is !== undefined) added.push(is);
    }
    for (const name of added) insertName(names.sorted, name);
    // A change whose touched set missed a name would leave the count wrong: sort again at the next listing.
    this.names = names.sorted.length === after.streamIdsByName.size ? { of: after.streamIdsByName, sorted: names.sorted } : null;
  }

  /**
   * What changed after version `since`: the current records of the nodes and streams touched since then
   * (a delta), or the full view when `since` is older than the retained log or ahead of it. When nothing
   * changed yet, waits up to timeoutMs (bounded by maxWatchMs) for the next change, then answers.
   */
  async watch(since: number, timeoutMs: number): Promise<ViewChanges> {
    if (!Number.isSafeInteger(since) || since < 0) throw new RangeError("since must be a non-negative integer");
    const waitMs = this.boundedWaitMs(timeoutMs);
    if (since === this.current.version && waitMs > 0) await this.nextChange(waitMs);
    return this.changesSince(since);
  }

  /**
   * The watcher loop of a node (docs/transfers.md): the pending transfers it is source or target of, and the streams
   * handed to it since `since` (to open at once). Waits like `watch` when nothing changed since `since`.
   * With `since` 0 (a node's start) or after a gap in the retained log, `handedTo` comes from a scan of
   * every stream, so a target that crashed between a completion and its open still opens at once.
   */
  async watchDuties(nodeId: string, since: number, timeoutMs: number, nodeEpoch?: number): Promise<NodeDuties> {
    if (!Number.isSafeInteger(since) || since < 0) throw new RangeError("since must be a non-negative integer");
    // Duties belong to an incarnation: a superseded one (a zombie) is told so and takes no step.
    const superseded = (): boolean => nodeEpoch !== undefined && checkHeartbeat(this.current, nodeId, nodeEpoch) !== null;
    if (superseded()) return { version: this.current.version, transfers: [], handedTo: [], superseded: true };
    const deadlineMs = this.now() + this.boundedWaitMs(timeoutMs);
    // A wait that ended without a change (its timeout, or the bound on waiters reached) answers at once.
    for (let woken = true; ; ) {
      const state = this.current;
      const changes = since === 0 ? null : this.changesSince(since);
      const handedTo =
        changes === null || changes.full ? handedToNode(state, nodeId) : changes.streams.filter((stream) => isHandedTo(stream, nodeId));
      // Answer at once when a change since `since` concerns this node's transfers (or at the end of the wait,
      // with every pending one: the retry); other changes (the creates and opens of a busy log) do not wake
      // it, so a watcher costs about one call per `timeoutMs` unless it has work.
      const remainingMs = deadlineMs - this.now();
      const relevant = changes === null || changes.full || changes.streams.some((stream) => concernsNode(stream, nodeId));
      if (superseded()) return { version: state.version, transfers: [], handedTo: [], superseded: true };
      if (relevant || remainingMs <= 0 || !woken) return { version: state.version, transfers: transferDuties(state, nodeId), handedTo };
      woken = (await this.waiters.wait(CHANGE, remainingMs)) === "changed";
    }
  }

  /** Every pending transfer (admin). */
  pendingTransfers(): { version: number; streams: StreamView[] } {
    return { version: this.current.version, streams: pendingTransfers(this.current) };
  }

  /**
   * Drain (docs/transfers.md): marks the node draining (no new placements), then begins a transfer of each stream
   * assigned to it to the node placement chooses. One synchronous step, so no other proposal interleaves
   * with the plan. Idempotent: a second drain plans only what is not moving yet.
   */
  drain(nodeId: string): DrainAnswer {
    const marked = this.propose({ type: "SetDraining", nodeId, draining: true });
    if (!marked.ok) return { ok: false, error: marked.error };
    const { moves, unplaceable } = planDrain(this.current, nodeId);
    let begun = 0;
    for (const move of moves) {
      const result = this.propose({ type: "BeginTransfer", streamId: move.streamId, target: move.target });
      if (result.ok) begun++;
    }
    return { ok: true, begun, unplaceable, progress: this.drainProgress(nodeId) };
  }

  /** Ends a drain: the node takes placements again (what moved stays where it is). */
  undrain(nodeId: string): DrainAnswer {
    const marked = this.propose({ type: "SetDraining", nodeId, draining: false });
    if (!marked.ok) return { ok: false, error: marked.error };
    return { ok: true, begun: 0, unplaceable: 0, progress: this.drainProgress(nodeId) };
  }

  drainProgress(nodeId: string): DrainProgress | null {
    return drainProgress(this.current, nodeId);
  }

  /**
   * One coordinator tick (docs/failover.md), decided here in one synchronous step so it never acts on a
   * stale view: every registered node that stopped heartbeating is declared dead at its epoch, then up to
   * `maxMoves` streams of declared-dead nodes are re-led to the least-loaded live nodes, in entries of at
   * most MAX_REASSIGN_BATCH moves (a dead node with 100,000 streams takes many ticks of small entries, and
   * no tick holds the log for long). Every command carries the coordinator's epoch: a stale coordinator's
   * tick is refused at its first command and changes nothing.
   */
  coordinatorTick(coordinator: Coordinator, maxMoves: number): CoordinatorTickAnswer {
    // Fenced before anything is decided: a stale coordinator learns it at once, even with nothing to do.
    const fenced = checkCoordinator(this.current, coordinator, this.now());
    if (fenced !== null) return { ok: false, error: fenced };
    const live = new Set(this.liveNodes().map((node) => node.id));
    const declared: string[] = [];
    for (const node of deadToDeclare(this.current, live, coordinator.nodeId)) {
      const result = this.propose({ type: "DeclareDead", nodeId: node.id, nodeEpoch: node.epoch, coordinator });
      if (!result.ok && result.error.code === "fenced") return { ok: false, error: result.error };
      if (result.ok && result.changed) declared.push(node.id);
    }
    const moves = planReassignments(this.current, live, Math.max(0, maxMoves));
    let reassigned = 0;
    for (let i = 0; i < moves.length; i += MAX_REASSIGN_BATCH) {
      const result = this.propose({ type: "ReassignStreams", moves: moves.slice(i, i + MAX_REASSIGN_BATCH), coordinator });
      if (!result.ok) return { ok: false, error: result.error };
      reassigned += (result as ProposeResult<"ReassignStreams"> & { ok: true }).value.streams.length;
    }
    const orphansLeft = planReassignments(this.current, live, 1).length > 0;
    return { ok: true, declared, reassigned, orphansLeft, version: this.current.version };
  }

  /**
   * CreateTable for the coordinator (docs/tables.md, table A): the buckets' leaders assigned over the
   * nodes live now that take placements, here where liveness is, then proposed at the coordinator's epoch.
   */
  createTable(coordinator: Coordinator, name: string, definition: JsonValue, buckets: number, streamConfig: JsonObject): ProposeResult<"CreateTable"> {
    const fenced = checkCoordinator(this.current, coordinator, this.now());
    if (fenced !== null) return { ok: false, error: fenced, version: this.current.version };
    const live = this.liveNodes().filter(isEligible).map((node) => node.id);
    const assigned = assignBuckets(buckets, live, this.now());
    if (!assigned.ok) return { ok: false, error: assigned.error, version: this.current.version };
    const command = { type: "CreateTable", name, definition, leaders: assigned.value.map((a) => a.node), streamConfig, coordinator } as const;
    return this.propose(command) as ProposeResult<"CreateTable">;
  }

  /**
   * AddPartition at the coordinator's epoch: the partition's buckets (the table's bucket count) led by the
   * live eligible nodes as a new table's are (table A). A repeat answers the existing partition.
   */
  addPartition(coordinator: Coordinator, table: string, value: string | number, streamConfig: JsonObject): ProposeResult<"AddPartition"> {
    const fenced = checkCoordinator(this.current, coordinator, this.now());
    if (fenced !== null) return { ok: false, error: fenced, version: this.current.version };
    const definition = this.current.tables.get(String(table))?.definition;
    const buckets = isJsonObject(definition) && typeof definition["buckets"] === "number" ? definition["buckets"] : 0;
    const live = this.liveNodes().filter(isEligible).map((node) => node.id);
    const assigned = assignBuckets(buckets, live, this.now());
    if (!assigned.ok) return { ok: false, error: assigned.error, version: this.current.version };
    const command = { type: "AddPartition", table, value, leaders: assigned.value.map((a) => a.node), streamConfig, coordinator } as const;
    return this.propose(command) as ProposeResult<"AddPartition">;
  }

  /** Which of these stream ids found in the store may be collected (table GC), for the coordinator only. */
  collectable(coordinator: Coordinator, streamIds: readonly string[]): CollectionAnswer {
    const fenced = checkCoordinator(this.current, coordinator, this.now());
    if (fenced !== null) return { ok: false, error: fenced };
    return { ok: true, ...collectableStreams(this.current, streamIds) };
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

  private changesSince(since: number): ViewChanges {
    const state = this.current;
    if (since > state.version) return fullChanges(state, since);
    if (since === state.version) return changesSince(state, since, []);
    const touched = this.journal.touchedBetween(since, state.version);
    return touched === null ? fullChanges(state, since) : changesSince(state, since, touched);
  }

  private async nextChange(timeoutMs: number): Promise<void> {
    await this.waiters.wait(CHANGE, timeoutMs);
  }

  /**
   * One round of a rebalance (`mink cluster rebalance`), in one synchronous step like drain(), so
   * no other proposal interleaves with the plan: planRebalance over the nodes live now (table RB), then,
   * unless a dry run, a BeginTransfer (as the admin: no proposer) of each of its transfers in plan order
   * while fewer than `maxConcurrent` transfers are pending in the cluster. Orphans are only reported: the
   * coordinator's tick declares their dead owners and re-leads them (ReassignStreams). The next round plans
   * from where the pending transfers will land (RB1b), so calling it until `done` spreads the load without
   * overshooting, at most `maxConcurrent` transfers at a time.
   */
  rebalance(options: RebalanceOptions): RebalanceAnswer {
    const { dryRun, maxConcurrent } = options;
    if (!Number.isSafeInteger(maxConcurrent) || maxConcurrent < 1) throw new RangeError("maxConcurrent must be a positive integer");
    const live = new Set(this.liveNodes().map((node) => node.id));
    const plan = planRebalance(this.current, live);
    const begun: RebalanceMove[] = [];
    for (const move of dryRun ? [] : plan.moves) {
      if (this.current.transfers.size >= maxConcurrent) break;
      // Refused only when the log changed under the plan's rules (BT8b, BT8c: a dead node, a takeover to wait
      // for): that stream stays for a later round.
      const result = this.propose({ type: "BeginTransfer", streamId: move.streamId, target: move.to });
      if (result.ok && result.changed) begun.push(move);
    }
    const pending = this.current.transfers.size;
    const left = plan.orphans.length + plan.unplaceable + plan.moves.length - begun.length;
    return { plan, begun, pending, done: left === 0 && pending === 0, version: this.current.version };
  }
}
