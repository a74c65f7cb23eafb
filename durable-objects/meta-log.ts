// MetaLog: the metadata log Durable Object. A thin shell over src/metadata: the log (meta-log-service.ts,
// opened, journaled and snapshotted by meta-log-persistence.ts over the SQLite tables of meta-log-store.ts),
// the subscription book (src/metadata/subscriptions, over meta-log-subscription-tables.ts) and its alarm,
// and the token register (src/metadata/token-register.ts, over meta-log-tokens.ts). It wires SQLite, the
// clock and the vars, and performs effects.
// Node heartbeats are soft state, never log entries.
// The API is documented in docs/metadata-log.md.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env.ts";
import { workerLog } from "../src/log/logger.ts";
import { edgeLimits } from "../src/core/edge-limits.ts";
import type { JsonObject, JsonValue } from "../src/core/meta/json.ts";
import type { Command, Coordinator, DrainProgress, MetaView, NodesView, NodeRecord, StreamListing, StreamListQuery } from "../src/core/meta/index.ts";
import type { StreamLookup, StreamQuery, StreamView, TableListing, TableLookup, ViewChanges } from "../src/core/meta/index.ts";
import type { AckReply, AckRequest, ClaimGrant, StreamTail, SubscriptionConfig, SubscriptionView, WakeRef } from "../src/core/subscriptions/index.ts";
import type { RegistryStep, RevokeStep, TokenRecord } from "../src/core/auth/token-registry.ts";
import type { CollectionAnswer, CoordinatorTickAnswer, DrainAnswer, HeartbeatResult, MetaLogClient, MetaLogStats, NodeDuties } from "../src/ports/meta-log-client.ts";
import type { NodeLiveness, PreparedEffect, ProposeResult, PutOutcome, RebalanceAnswer, RebalanceOptions } from "../src/ports/meta-log-client.ts";
import type { RevocationSet, SubscriptionAnswer, SubscriptionSet, WebhookJwks } from "../src/ports/meta-log-client.ts";
import { wakeAppendAuthorization } from "../src/auth/internal-token.ts";
import { leaseTtlMs } from "../src/node/settings.ts";
import { appendWakeEventByFetch, performSubscriptionEffects } from "../src/subscriptions/effects.ts";
import type { MetaLogService } from "../src/metadata/meta-log-service.ts";
import { openMetaLog } from "../src/metadata/meta-log-persistence.ts";
import { metaLogTuning, type MetaLogTuning } from "../src/metadata/meta-log-tuning.ts";
import { metaLogStats } from "../src/metadata/meta-log-restore.ts";
import { checkedListQuery } from "../src/metadata/meta-log-arguments.ts";
import { TokenRegister } from "../src/metadata/token-register.ts";
import { SubscriptionService } from "../src/metadata/subscriptions/subscription-service.ts";
import { DeadlineAlarm } from "../src/metadata/subscriptions/deadline-alarm.ts";
import { GroupCommit } from "../src/metadata/group-commit.ts";
import { domainError } from "../src/core/errors.ts";
import { MetaLogStore } from "./meta-log-store.ts";
import { SqliteSubscriptionStorage } from "./meta-log-subscription-tables.ts";
import { SqliteTokenTable } from "./meta-log-tokens.ts";

/** The most commands one proposeBatch applies. */
const MAX_PROPOSE_BATCH = 1000;

export class MetaLog extends DurableObject<Env> {
  /**
   * Knobs, in memory (defaults on every start). Not reachable over RPC (only methods are); tests adjust
   * them through runInDurableObject. The chunk size is fixed at construction.
   */
  readonly tuning: MetaLogTuning;
  private readonly store: MetaLogStore;
  private readonly log: MetaLogService;
  /** Proposals that arrive while others are applied are applied together: one commit (group-commit.ts). */
  private readonly proposals: GroupCommit<Command, ProposeResult>;
  private readonly subscriptions: SubscriptionService;
  private readonly tokens: TokenRegister;
  /** WEBHOOK_MAX_REPLY_BYTES, for the webhooks the alarm sends. */
  private readonly webhookMaxReplyBytes: number;
  /** The alarm, at the earliest subscription lease deadline. */
  private readonly alarms = new DeadlineAlarm((atMs) => this.ctx.storage.setAlarm(atMs));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const { limits, warnings } = edgeLimits(env);
    for (const warning of warnings) workerLog.log("warning", { message: warning });
    // LEASE_TTL_MS and the bounds of docs/limits.md (MAX_STREAMS here) come from the Worker's vars, which every
    // Durable Object of the deployment is given too.
    this.webhookMaxReplyBytes = limits.webhookMaxReplyBytes;
    this.tuning = metaLogTuning(limits, leaseTtlMs(env));
    this.store = new MetaLogStore(ctx.storage.sql, this.tuning.snapshotChunkBytes, (write) => ctx.storage.transactionSync(write));
    // SQLite calls are synchronous: the whole load happens before any request is delivered.
    this.store.migrate();
    this.log = openMetaLog(this.store, this.tuning, () => Date.now());
    this.proposals = new GroupCommit((command: Command) => this.log.propose(command), {
      maxWaiting: this.tuning.maxWaitingProposals,
      later: (task) => void setTimeout(task, 0),
      whenFull: (waiting) => ({
        ok: false,
        error: domainError("unavailable", `the metadata log has ${waiting} proposals waiting; retry`),
        version: this.log.state.version,
      }),
    });
    this.tokens = new TokenRegister(new SqliteTokenTable(ctx.storage.sql), env.MAX_TOKENS, () => Date.now());
    this.subscriptions = new SubscriptionService(new SqliteSubscriptionStorage(ctx.storage.sql), {
      limits: this.tuning,
      onDeadline: (deadlineMs) => this.alarms.schedule(deadlineMs),
      wakeAuthorization: (stream) =>
        (env.AUTH_MODE ?? "token").trim() === "open" ? Promise.resolve(null) : wakeAppendAuthorization(env.TOKEN_SECRET, stream, Date.now()),
    });
    this.alarms.schedule(this.subscriptions.earliestDeadlineMs());
  }

  /**
   * Applies one command (MetaLogService.propose: journaled and visible in one synchronous step), at once
   * or, while a group commit's window is open, with the others that arrive in it (group-commit.ts).
   */
  propose(command: Command): ProposeResult | Promise<ProposeResult> {
    return this.proposals.submit(command);
  }

  /** Every record at once, for tests and diagnostics of a small log (not in MetaLogClient: refused past VIEW_MAX_STREAMS). */
  view(): MetaView {
    return this.log.view();
  }

  /**
   * Up to MAX_PROPOSE_BATCH commands applied in order, one answer each, as `propose` would give them one
   * by one: the bulk path of `bench:scale`'s MetaLog fill (not in MetaLogClient: nothing batches yet).
   */
  proposeBatch(commands: readonly Command[]): ProposeResult[] {
    if (!Array.isArray(commands) || commands.length > MAX_PROPOSE_BATCH) throw new RangeError(`a batch holds at most ${MAX_PROPOSE_BATCH} commands`);
    const results: ProposeResult[] = [];
    for (const command of commands as readonly Command[]) results.push(this.log.propose(command));
    return results;
  }

  nodesView(): NodesView {
    return this.log.nodesView();
  }

  lookupStream(query: StreamQuery): StreamLookup {
    return this.log.lookupStream(query);
  }

  lookupTable(name: string): TableLookup {
    return this.log.lookupTable(name);
  }

  listTables(): TableListing {
    return this.log.listTables();
  }

  createTable(coordinator: Coordinator, name: string, definition: JsonValue, buckets: number, streamConfig: JsonObject): ProposeResult<"CreateTable"> {
    // The command itself is checked by apply (validateCommand); the bucket count, here, by the number of leaders.
    return this.log.createTable(coordinator, name, definition, buckets, streamConfig);
  }

  addPartition(coordinator: Coordinator, table: string, value: string | number, streamConfig: JsonObject): ProposeResult<"AddPartition"> {
    // The command (its value among it) is checked by apply (validateCommand).
    return this.log.addPartition(coordinator, table, value, streamConfig);
  }

  /** One page of the streams by name (the query checked by checkedListQuery). */
  listStreams(query: StreamListQuery): StreamListing {
    return this.log.listStreams(checkedListQuery(query));
  }

  /** The view's changes since a version, for tests and diagnostics (a full view past the retained log: bounded like view()). */
  watch(since: number, timeoutMs: number): Promise<ViewChanges> {
    return this.log.watch(since, timeoutMs);
  }

  watchDuties(nodeId: string, since: number, timeoutMs: number, nodeEpoch?: number): Promise<NodeDuties> {
    return this.log.watchDuties(nodeId, since, timeoutMs, nodeEpoch);
  }

  pendingTransfers(): { version: number; streams: StreamView[] } {
    return this.log.pendingTransfers();
  }

  drain(nodeId: string): DrainAnswer {
    return this.log.drain(nodeId);
  }

  undrain(nodeId: string): DrainAnswer {
    return this.log.undrain(nodeId);
  }

  drainProgress(nodeId: string): DrainProgress | null {
    return this.log.drainProgress(nodeId);
  }

  heartbeat(nodeId: string, nodeEpoch: number): HeartbeatResult {
    return this.log.heartbeat(nodeId, nodeEpoch);
  }

  liveness(): NodeLiveness[] {
    return this.log.liveness();
  }

  collectable(coordinator: Coordinator, streamIds: readonly string[]): CollectionAnswer {
    return this.log.collectable(coordinator, streamIds);
  }

  coordinatorTick(coordinator: Coordinator, maxMoves: number): CoordinatorTickAnswer {
    return this.log.coordinatorTick(coordinator, maxMoves);
  }

  liveNodes(nowMs?: number): NodeRecord[] {
    return this.log.liveNodes(nowMs);
  }

  stats(): MetaLogStats {
    return metaLogStats(this.log, { subscriptionBytes: this.subscriptions.heldBytes, log: this.store.logStats(), snapshot: this.store.snapshotInfo(), proposals: this.proposals.stats });
  }

  // Subscriptions (docs/subscriptions.md): records and wake/lease state in their own tables
  // (src/metadata/subscriptions, over meta-log-subscription-tables.ts), not log entries. Each answer carries the effects the caller performs.

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
    return this.subscriptions.watch(nodeId, since, this.log.boundedWaitMs(timeoutMs));
  }

  /** How many appends nodes reported (tests: a node stays quiet while no subscription exists). */
  subscriptionReports(): number {
    return this.subscriptions.reports;
  }

  /** Subscription lease deadlines: settle what lapsed and perform the next generations' effects. */
  override async alarm(): Promise<void> {
    this.alarms.fired();
    const effects = await this.subscriptions.settleDue(Date.now());
    await performSubscriptionEffects(effects, {
      appendWakeEvent: (effect) => appendWakeEventByFetch(effect),
      webhookReplied: (id, ref, done) => this.onWebhookReply(id, ref, done),
      maxReplyBytes: this.webhookMaxReplyBytes,
    });
  }

  // Access tokens (table TK): src/metadata/token-register.ts over its table (meta-log-tokens.ts).

  mintToken(record: Omit<TokenRecord, "revoked">): RegistryStep {
    return this.tokens.mint(record);
  }

  revokeToken(id: string): RevokeStep {
    return this.tokens.revoke(id);
  }

  revocations(knownVersion: number | null): RevocationSet {
    return this.tokens.revocations(knownVersion);
  }

  listTokens(after: string | null, limit: number): TokenRecord[] {
    return this.tokens.list(after, limit);
  }

  /** One round of a rebalance (MetaLogService.rebalance: planned and begun in one synchronous step). */
  rebalance(options: RebalanceOptions): RebalanceAnswer {
    return this.log.rebalance(options);
  }
}

/** Every client method exists on MetaLog with the same parameters (checked by the compiler). */
type SameMethods = { [K in keyof MetaLogClient]: (...args: Parameters<MetaLogClient[K]>) => unknown };
const _metaLogHasClientMethods = (log: MetaLog): SameMethods => log;
void _metaLogHasClientMethods;
