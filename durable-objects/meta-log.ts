// MetaLog: the metadata log Durable Object. A thin shell over src/core/meta: it loads the latest snapshot
// and the log after it from SQLite, applies proposals with the pure `apply`, appends each accepted change to
// the log in the same synchronous step that makes it visible, snapshots to bound the log, and answers
// views, lookups and long-poll watches. Node heartbeats are soft state here, never log entries.
// The API is documented in docs/metadata-log.md.
import { DurableObject } from "cloudflare:workers";
import {
  apply,
  changesSince,
  checkHeartbeat,
  decodeSnapshot,
  DEFAULT_LEASE_TTL_MS,
  concernsNode,
  drainProgress,
  handedToNode,
  isHandedTo,
  pendingTransfers,
  planDrain,
  transferDuties,
  type DrainProgress,
  type StreamView,
  emptyState,
  encodeSnapshot,
  fullChanges,
  fullView,
  liveNodes,
  lookupStream,
  replay,
  seedLiveness,
  touchedBy,
  type Command,
  type CommandType,
  type MetaState,
  type MetaView,
  type NodeRecord,
  type ResultOf,
  type StreamLookup,
  type StreamQuery,
  type ViewChanges,
} from "../src/core/meta/index.ts";
import type { DomainError } from "../src/core/errors.ts";
import type {
  AckReply,
  AckRequest,
  ClaimGrant,
  StreamTail,
  SubscriptionConfig,
  SubscriptionView,
  WakeRef,
} from "../src/core/subscriptions/index.ts";
import type { Env } from "../src/env.ts";
import { appendWakeEventByFetch, performSubscriptionEffects, type PreparedEffect } from "../src/subscriptions/effects.ts";
import type { WebhookJwks } from "../src/subscriptions/webhook-signing.ts";
import { DEFAULT_SNAPSHOT_CHUNK_BYTES, MetaLogStore, type LogStats, type SnapshotInfo } from "./meta-log-store.ts";
import { MetaLogSubscriptions, type PutOutcome, type SubscriptionAnswer, type SubscriptionSet } from "./meta-log-subscriptions.ts";

/** The one MetaLog of a deployment: `env.META_LOG.getByName(META_LOG_NAME)`. */
export const META_LOG_NAME = "meta";

export interface MetaLogTuning {
  /** Snapshot once this many entries were appended since the last snapshot. */
  snapshotEveryEntries: number;
  /** Entries kept after a snapshot so watchers a little behind get a delta instead of a full view. */
  watchRetainEntries: number;
  snapshotChunkBytes: number;
  /** A node is live while its last heartbeat is younger than this (DESIGN.md `lease_ttl`). */
  leaseTtlMs: number;
  /** Upper bound of one watch long-poll. */
  maxWatchMs: number;
}

export const DEFAULT_TUNING: MetaLogTuning = {
  snapshotEveryEntries: 1000,
  watchRetainEntries: 1000,
  snapshotChunkBytes: DEFAULT_SNAPSHOT_CHUNK_BYTES,
  leaseTtlMs: DEFAULT_LEASE_TTL_MS,
  maxWatchMs: 60_000,
};

/** A proposal's answer: the typed result and the log version after it. */
export type ProposeResult<T extends CommandType = CommandType> = ResultOf<T> & { readonly version: number };

/** What the metadata log asks of one node now (see `watchDuties`). */
export interface NodeDuties {
  readonly version: number;
  readonly transfers: readonly StreamView[];
  readonly handedTo: readonly StreamView[];
}

export type DrainAnswer =
  | { readonly ok: true; readonly begun: number; readonly unplaceable: number; readonly progress: DrainProgress | null }
  | { readonly ok: false; readonly error: DomainError };

export type HeartbeatResult = { readonly ok: true; readonly version: number } | { readonly ok: false; readonly error: DomainError };

export interface MetaLogStats {
  readonly version: number;
  readonly nodes: number;
  readonly streams: number;
  readonly pendingTransfers: number;
  readonly log: LogStats;
  readonly snapshot: SnapshotInfo | null;
}

export class MetaLog extends DurableObject<Env> {
  /**
   * Knobs, in memory (defaults on every start). Not reachable over RPC (only methods are); tests adjust
   * them through runInDurableObject. The chunk size is fixed at construction.
   */
  readonly tuning: MetaLogTuning = { ...DEFAULT_TUNING };
  private readonly store: MetaLogStore;
  private state: MetaState;
  private snapshotVersion: number;
  private readonly lastSeenMs: Map<string, number>;
  private readonly waiters = new Set<() => void>();
  private readonly subscriptions: MetaLogSubscriptions;
  /** The alarm this incarnation set for the earliest subscription lease deadline (null: none known). */
  private subscriptionAlarmAtMs: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new MetaLogStore(ctx.storage.sql, this.tuning.snapshotChunkBytes);
    // SQLite calls are synchronous: the whole load happens before any request is delivered.
    this.store.migrate();
    const snapshot = this.store.readSnapshot();
    const base = snapshot === null ? emptyState() : decodeSnapshot(snapshot.text);
    if (snapshot !== null && base.version !== snapshot.version) throw new Error("metadata snapshot version mismatch");
    this.snapshotVersion = base.version;
    this.state = replay(base, this.store.entriesAfter(base.version));
    this.lastSeenMs = seedLiveness(this.state, Date.now());
    this.subscriptions = new MetaLogSubscriptions(ctx.storage.sql, (deadlineMs) => this.scheduleSubscriptionAlarm(deadlineMs));
    this.scheduleSubscriptionAlarm(this.subscriptions.earliestDeadlineMs());
  }

  /**
   * Applies one command. An accepted change is appended to the log and becomes visible in one synchronous
   * step (no await in between, so proposals are applied one at a time in arrival order); a rejection or a
   * no-op writes nothing. Lease commands take their time from MetaLog's clock, recorded in the entry.
   */
  propose(command: Command): ProposeResult {
    const nowMs = Date.now();
    const { state, result } = apply(this.state, command, { nowMs });
    if (result.ok && result.changed) {
      const entry = { index: state.version, command, nowMs };
      this.ctx.storage.transactionSync(() => this.store.append(entry, touchedBy(command, result)));
      this.state = state;
      if (command.type === "RegisterNode") this.lastSeenMs.set(command.nodeId, nowMs);
      this.maybeSnapshot();
      this.wakeWatchers();
    }
    return { ...result, version: this.state.version };
  }

  view(): MetaView {
    return fullView(this.state);
  }

  lookupStream(query: StreamQuery): StreamLookup {
    return lookupStream(this.state, query);
  }

  /**
   * What changed after version `since`: the current records of the nodes and streams touched since then
   * (a delta), or the full view when `since` is older than the retained log or ahead of it. When nothing
   * changed yet, waits up to timeoutMs (bounded by maxWatchMs) for the next change, then answers.
   */
  async watch(since: number, timeoutMs: number): Promise<ViewChanges> {
    if (!Number.isSafeInteger(since) || since < 0) throw new RangeError("since must be a non-negative integer");
    const waitMs = Math.max(0, Math.min(Number.isFinite(timeoutMs) ? timeoutMs : 0, this.tuning.maxWatchMs));
    if (since === this.state.version && waitMs > 0) await this.nextChange(waitMs);
    return this.changesSince(since);
  }

  /**
   * The watcher loop of a node (seed 003): the pending transfers it is source or target of, and the streams
   * handed to it since `since` (to open at once). Waits like `watch` when nothing changed since `since`.
   * With `since` 0 (a node's start) or after a gap in the retained log, `handedTo` comes from a scan of
   * every stream, so a target that crashed between a completion and its open still opens at once.
   */
  async watchDuties(nodeId: string, since: number, timeoutMs: number): Promise<NodeDuties> {
    if (!Number.isSafeInteger(since) || since < 0) throw new RangeError("since must be a non-negative integer");
    const waitMs = Math.max(0, Math.min(Number.isFinite(timeoutMs) ? timeoutMs : 0, this.tuning.maxWatchMs));
    const deadlineMs = Date.now() + waitMs;
    for (;;) {
      const changes = since === 0 ? null : this.changesSince(since);
      const handedTo =
        changes === null || changes.full ? handedToNode(this.state, nodeId) : changes.streams.filter((stream) => isHandedTo(stream, nodeId));
      const transfers = transferDuties(this.state, nodeId);
      // Answer at once when a change since `since` concerns this node's transfers (or at the end of the wait,
      // with every pending one: the retry); other changes (the creates and opens of a busy log) do not wake
      // it, so a watcher costs about one call per `timeoutMs` unless it has work.
      const remainingMs = deadlineMs - Date.now();
      const relevant = changes === null || changes.full || changes.streams.some((stream) => concernsNode(stream, nodeId));
      if (relevant || remainingMs <= 0) return { version: this.state.version, transfers, handedTo };
      await this.nextChange(remainingMs);
    }
  }

  /** Every pending transfer (admin). */
  pendingTransfers(): { version: number; streams: StreamView[] } {
    return { version: this.state.version, streams: pendingTransfers(this.state) };
  }

  /**
   * Drain (seed 003, issue 5): marks the node draining (no new placements), then begins a transfer of each
   * stream assigned to it to the node placement chooses. One synchronous step, so no other proposal
   * interleaves with the plan. Idempotent: a second drain plans only what is not moving yet.
   */
  drain(nodeId: string): DrainAnswer {
    const marked = this.propose({ type: "SetDraining", nodeId, draining: true });
    if (!marked.ok) return { ok: false, error: marked.error };
    const { moves, unplaceable } = planDrain(this.state, nodeId);
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
    return drainProgress(this.state, nodeId);
  }

  /** Records a heartbeat (soft state: lost on restart, see seedLiveness). */
  heartbeat(nodeId: string, nodeEpoch: number): HeartbeatResult {
    const error = checkHeartbeat(this.state, nodeId, nodeEpoch);
    if (error !== null) return { ok: false, error };
    this.lastSeenMs.set(nodeId, Date.now());
    return { ok: true, version: this.state.version };
  }

  /** Registered nodes that heartbeated within leaseTtlMs of nowMs (default: now), by id. */
  liveNodes(nowMs?: number): NodeRecord[] {
    return liveNodes(this.state, this.lastSeenMs, nowMs ?? Date.now(), this.tuning.leaseTtlMs);
  }

  stats(): MetaLogStats {
    return {
      version: this.state.version,
      nodes: this.state.nodes.size,
      streams: this.state.streams.size,
      pendingTransfers: this.state.transfers.size,
      log: this.store.logStats(),
      snapshot: this.store.snapshotInfo(),
    };
  }

  // Subscriptions (docs/subscriptions.md): records and wake/lease state in their own tables
  // (meta-log-subscriptions.ts), not log entries. Each answer carries the effects the caller performs.

  putSubscription(id: string, config: SubscriptionConfig, origin: string): Promise<SubscriptionAnswer<PutOutcome>> {
    return this.subscriptions.put(id, config, origin);
  }

  getSubscription(id: string): Promise<SubscriptionAnswer<SubscriptionView>> {
    return this.subscriptions.get(id);
  }

  deleteSubscription(id: string): void {
    this.subscriptions.delete(id);
  }

  addStreams(id: string, paths: readonly string[]): SubscriptionAnswer<null> {
    return this.subscriptions.addStreams(id, paths);
  }

  removeStream(id: string, path: string): SubscriptionAnswer<null> {
    return this.subscriptions.removeStream(id, path);
  }

  webhookCallback(id: string, request: AckRequest, bearer: string | null): Promise<SubscriptionAnswer<AckReply>> {
    return this.subscriptions.callback(id, request, bearer);
  }

  claim(id: string, worker: string): Promise<SubscriptionAnswer<ClaimGrant>> {
    return this.subscriptions.claim(id, worker);
  }

  ack(id: string, request: AckRequest, bearer: string | null): Promise<SubscriptionAnswer<AckReply>> {
    return this.subscriptions.ack(id, request, bearer);
  }

  release(id: string, ref: WakeRef, bearer: string | null): Promise<SubscriptionAnswer<null>> {
    return this.subscriptions.release(id, ref, bearer);
  }

  jwks(): Promise<WebhookJwks> {
    return this.subscriptions.jwks();
  }

  /**
   * A node's acknowledged appends (a batch, in acknowledgement order) → the effects it must perform. The
   * tails are recorded before the first await, so a request that reaches the MetaLog after this call began
   * sees them. `subscriptions` is how many exist, so a node can stop reporting while there are none.
   */
  async onStreamAppended(tails: readonly StreamTail[]): Promise<{ effects: readonly PreparedEffect[]; subscriptions: number }> {
    const effects = await this.subscriptions.streamsAppended(tails);
    return { effects, subscriptions: this.subscriptions.size };
  }

  async onWebhookReply(id: string, ref: WakeRef, done: boolean): Promise<readonly PreparedEffect[]> {
    return (await this.subscriptions.webhookReplied(id, ref, done)).effects;
  }

  /** A node's long-poll on the set of subscriptions (it reports appends only while some exist). */
  watchSubscriptions(nodeId: string, since: number, timeoutMs: number): Promise<SubscriptionSet> {
    const waitMs = Math.max(0, Math.min(Number.isFinite(timeoutMs) ? timeoutMs : 0, this.tuning.maxWatchMs));
    return this.subscriptions.watch(nodeId, since, waitMs);
  }

  /** How many appends nodes reported (tests: a node stays quiet while no subscription exists). */
  subscriptionReports(): number {
    return this.subscriptions.reports;
  }

  /** Subscription lease deadlines: settle what lapsed and perform the next generations' effects. */
  override async alarm(): Promise<void> {
    this.subscriptionAlarmAtMs = null;
    const effects = await this.subscriptions.settleDue(Date.now());
    await performSubscriptionEffects(effects, {
      appendWakeEvent: (effect) => appendWakeEventByFetch(effect),
      webhookReplied: (id, ref, done) => this.onWebhookReply(id, ref, done),
    });
  }

  private scheduleSubscriptionAlarm(deadlineMs: number | null): void {
    if (deadlineMs === null) return;
    if (this.subscriptionAlarmAtMs !== null && this.subscriptionAlarmAtMs <= deadlineMs) return;
    this.subscriptionAlarmAtMs = deadlineMs;
    // A lapsed lease is also settled by the next step that touches its record; the alarm only adds retries.
    this.ctx.storage.setAlarm(deadlineMs).catch((error: unknown) => {
      this.subscriptionAlarmAtMs = null;
      console.error("MetaLog could not set its subscription alarm", error);
    });
  }

  private changesSince(since: number): ViewChanges {
    const { version } = this.state;
    if (since > version) return fullChanges(this.state, since);
    if (since === version) return changesSince(this.state, since, []);
    const touched = this.store.touchedBetween(since, version);
    return touched === null ? fullChanges(this.state, since) : changesSince(this.state, since, touched);
  }

  private maybeSnapshot(): void {
    const { version } = this.state;
    if (version - this.snapshotVersion < this.tuning.snapshotEveryEntries) return;
    // The entry that triggered this is already durable: a failed snapshot must not fail the proposal. The
    // transaction leaves the previous snapshot and the whole log in place, and the next change retries.
    try {
      const text = encodeSnapshot(this.state);
      this.ctx.storage.transactionSync(() => {
        this.store.writeSnapshot(version, text);
        this.store.pruneThrough(version - this.tuning.watchRetainEntries);
      });
      this.snapshotVersion = version;
    } catch (error) {
      console.error(`MetaLog snapshot at version ${version} failed; the log keeps every entry`, error);
    }
  }

  private nextChange(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  private wakeWatchers(): void {
    for (const wake of [...this.waiters]) wake();
  }
}

/**
 * The MetaLog's RPC methods as seen by a caller, with results typed per command. RPC stub types cannot
 * carry method generics, and mapping the recursive JSON config type through them is too deep for the
 * compiler, so callers use this view of the stub: `const meta = metaLogClient(env.META_LOG.getByName(META_LOG_NAME))`.
 */
export interface MetaLogClient {
  propose<C extends Command>(command: C): Promise<ProposeResult<C["type"]>>;
  view(): Promise<MetaView>;
  lookupStream(query: StreamQuery): Promise<StreamLookup>;
  watch(since: number, timeoutMs: number): Promise<ViewChanges>;
  watchDuties(nodeId: string, since: number, timeoutMs: number): Promise<NodeDuties>;
  pendingTransfers(): Promise<{ version: number; streams: StreamView[] }>;
  drain(nodeId: string): Promise<DrainAnswer>;
  undrain(nodeId: string): Promise<DrainAnswer>;
  drainProgress(nodeId: string): Promise<DrainProgress | null>;
  heartbeat(nodeId: string, nodeEpoch: number): Promise<HeartbeatResult>;
  liveNodes(nowMs?: number): Promise<NodeRecord[]>;
  stats(): Promise<MetaLogStats>;
  putSubscription(id: string, config: SubscriptionConfig, origin: string): Promise<SubscriptionAnswer<PutOutcome>>;
  getSubscription(id: string): Promise<SubscriptionAnswer<SubscriptionView>>;
  deleteSubscription(id: string): Promise<void>;
  addStreams(id: string, paths: readonly string[]): Promise<SubscriptionAnswer<null>>;
  removeStream(id: string, path: string): Promise<SubscriptionAnswer<null>>;
  webhookCallback(id: string, request: AckRequest, bearer: string | null): Promise<SubscriptionAnswer<AckReply>>;
  claim(id: string, worker: string): Promise<SubscriptionAnswer<ClaimGrant>>;
  ack(id: string, request: AckRequest, bearer: string | null): Promise<SubscriptionAnswer<AckReply>>;
  release(id: string, ref: WakeRef, bearer: string | null): Promise<SubscriptionAnswer<null>>;
  jwks(): Promise<WebhookJwks>;
  onStreamAppended(tails: readonly StreamTail[]): Promise<{ effects: readonly PreparedEffect[]; subscriptions: number }>;
  onWebhookReply(id: string, ref: WakeRef, done: boolean): Promise<readonly PreparedEffect[]>;
  watchSubscriptions(nodeId: string, since: number, timeoutMs: number): Promise<SubscriptionSet>;
  subscriptionReports(): Promise<number>;
}

/** Every client method exists on MetaLog with the same parameters (checked by the compiler). */
type SameMethods = { [K in keyof MetaLogClient]: (...args: Parameters<MetaLogClient[K]>) => unknown };
const _metaLogHasClientMethods = (log: MetaLog): SameMethods => log;
void _metaLogHasClientMethods;

export function metaLogClient(stub: DurableObjectStub<MetaLog>): MetaLogClient {
  return stub as unknown as MetaLogClient;
}
