// The metadata log as its callers see it: the port the stream nodes, the router and the admin API depend
// on, and every type that crosses it. The MetaLog Durable Object implements it (checked by the compiler in
// durable-objects/meta-log.ts); tests and the simulation implement it in memory over the same `apply`
// (test/cluster/). This module imports only the pure core, so no caller depends on the Durable Object.
import type {
  NodesView,
  Command,
  Coordinator,
  CommandType,
  DrainProgress,
  NodeRecord,
  ResultOf,
  StreamListing,
  StreamListQuery,
  StreamLookup,
  StreamQuery,
  StreamView,
  TableListing,
  TableLookup,
} from "../core/meta/index.ts";
import type { DomainError } from "../core/errors.ts";
import type { JsonObject, JsonValue } from "../core/meta/json.ts";
import type {
  AckReply,
  AckRequest,
  ClaimGrant,
  StreamTail,
  SubscriptionConfig,
  SubscriptionError,
  SubscriptionView,
  WakeRef,
} from "../core/subscriptions/index.ts";
import type { RebalanceMove, RebalancePlan } from "../core/meta/rebalance.ts";
import type { RegistryStep, RevokeStep, TokenRecord } from "../core/auth/token-registry.ts";

/** The one MetaLog of a deployment: `env.META_LOG.getByName(META_LOG_NAME)`. */
export const META_LOG_NAME = "meta";

/** A proposal's answer: the typed result and the log version after it. */
export type ProposeResult<T extends CommandType = CommandType> = ResultOf<T> & { readonly version: number };

/** What the metadata log asks of one node now (see `watchDuties`). */
export interface NodeDuties {
  readonly version: number;
  /** The asking incarnation is superseded (a later epoch registered, or it was declared dead): it must take no step. */
  readonly superseded?: true;
  readonly transfers: readonly StreamView[];
  readonly handedTo: readonly StreamView[];
}

export type DrainAnswer =
  | { readonly ok: true; readonly begun: number; readonly unplaceable: number; readonly progress: DrainProgress | null }
  | { readonly ok: false; readonly error: DomainError };

export type CoordinatorTickAnswer =
  | {
      readonly ok: true;
      /** Nodes declared dead by this tick. */
      readonly declared: readonly string[];
      /** Streams re-led by this tick. */
      readonly reassigned: number;
      /** Streams of dead nodes still waiting for a live node (the next tick goes on). */
      readonly orphansLeft: boolean;
      readonly version: number;
    }
  | { readonly ok: false; readonly error: DomainError };

export interface NodeLiveness {
  readonly nodeId: string;
  readonly live: boolean;
  /** Since the last heartbeat (null: none since the metadata log started). */
  readonly lastHeartbeatAgoMs: number | null;
}

/** The coordinator's collection decision for a page of stream ids (table GC); fenced like its tick. */
export type CollectionAnswer =
  | { readonly ok: true; readonly collect: readonly string[]; readonly keptSources: readonly string[] }
  | { readonly ok: false; readonly error: DomainError };

export type HeartbeatResult = { readonly ok: true; readonly version: number } | { readonly ok: false; readonly error: DomainError };

/** The MetaLog's group commit since it started (src/metadata/group-commit.ts). */
export interface ProposalCounts {
  /** Proposals applied at once, opening a window. */
  readonly immediate: number;
  /** Proposals applied at a window's end, with the others that waited. */
  readonly grouped: number;
  /** Window ends that applied at least one waiting proposal (one commit each). */
  readonly groups: number;
  /** Proposals refused because too many waited (answered `unavailable`). */
  readonly refused: number;
}

export interface MetaLogStats {
  readonly version: number;
  readonly nodes: number;
  readonly streams: number;
  readonly pendingTransfers: number;
  /** The coordinator epoch of the last lease granted (0: never). */
  readonly coordinatorEpoch: number;
  /** Nodes declared dead whose takeover has not completed. */
  readonly takeoversPending: number;
  /** Since this metadata log started: incarnations declared dead (failovers) and takeovers completed. */
  readonly failovers: number;
  readonly takeovers: number;
  /** What the memory budgets count (docs/limits.md): bytes of names, configurations and table definitions (MAX_META_BYTES), of subscription records (MAX_SUBSCRIPTION_BOOK_BYTES). */
  readonly metaBytes: number;
  readonly subscriptionBytes: number;
  readonly log: LogStats;
  readonly snapshot: SnapshotInfo | null;
  readonly proposals: ProposalCounts;
}

export interface SnapshotInfo {
  readonly version: number;
  readonly chunks: number;
  readonly bytes: number;
}

export interface LogStats {
  readonly entries: number;
  /** Lowest retained index, or null when the log is empty. */
  readonly oldest: number | null;
  readonly newest: number | null;
}

/** A subscription answer: the value or the rejection, plus the effects the caller must perform. */
export type SubscriptionAnswer<T> =
  | { readonly ok: true; readonly value: T; readonly effects: readonly PreparedEffect[] }
  | { readonly ok: false; readonly error: SubscriptionError; readonly effects: readonly PreparedEffect[] };

export interface PutOutcome {
  readonly created: boolean;
  readonly view: SubscriptionView;
}

/** What a node caches: the book's version and how many subscriptions exist (0: it need not report). */
export interface SubscriptionSet {
  readonly version: number;
  readonly subscriptions: number;
}

export type PreparedEffect =
  | {
      readonly kind: "send_webhook";
      readonly subscriptionId: string;
      readonly wakeId: string;
      readonly generation: number;
      readonly url: string;
      /** The exact body sent, the bytes the signature covers. */
      readonly rawBody: string;
      readonly signature: string;
    }
  | {
      readonly kind: "append_wake_event";
      /** The wake stream's path, e.g. `wake/pool-1`. */
      readonly stream: string;
      /** The public origin of the subscription (its PUT's), where the wake stream can be reached. */
      readonly origin: string;
      /** One JSON message (`WakeEvent`). */
      readonly rawBody: string;
      /** The `Authorization` the append carries in token mode (src/auth/internal-token.ts). */
      readonly authorization?: string;
    };

/** An Ed25519 public key as JWK, the way the JWKS document lists it. */
export interface WebhookPublicJwk {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  readonly x: string;
  readonly kid: string;
  readonly use: "sig";
  readonly alg: "EdDSA";
}

export interface WebhookJwks {
  readonly keys: readonly WebhookPublicJwk[];
}

/** The MetaLog's methods as seen by a caller, with results typed per command. */
export interface MetaLogClient {
  propose<C extends Command>(command: C): Promise<ProposeResult<C["type"]>>;
  /** Every node, the lease and what each node owns (GET /admin/nodes). */
  nodesView(): Promise<NodesView>;
  lookupStream(query: StreamQuery): Promise<StreamLookup>;
  /** A table and its buckets (each bucket a stream: owner = leader, epoch = leader epoch). */
  lookupTable(name: string): Promise<TableLookup>;
  listTables(): Promise<TableListing>;
  /** CreateTable at the coordinator's epoch, the leaders assigned by the log over the live nodes (table A). */
  createTable(coordinator: Coordinator, name: string, definition: JsonValue, buckets: number, streamConfig: JsonObject): Promise<ProposeResult<"CreateTable">>;
  /** AddPartition at the coordinator's epoch: the partition's buckets led as a new table's are (table A). */
  addPartition(coordinator: Coordinator, table: string, value: string | number, streamConfig: JsonObject): Promise<ProposeResult<"AddPartition">>;
  /** One page of the streams by name (table LS, src/core/meta/stream-listing.ts; GET /admin/streams). */
  listStreams(query: StreamListQuery): Promise<StreamListing>;
  watchDuties(nodeId: string, since: number, timeoutMs: number, nodeEpoch?: number): Promise<NodeDuties>;
  pendingTransfers(): Promise<{ version: number; streams: StreamView[] }>;
  drain(nodeId: string): Promise<DrainAnswer>;
  undrain(nodeId: string): Promise<DrainAnswer>;
  drainProgress(nodeId: string): Promise<DrainProgress | null>;
  heartbeat(nodeId: string, nodeEpoch: number): Promise<HeartbeatResult>;
  coordinatorTick(coordinator: Coordinator, maxMoves: number): Promise<CoordinatorTickAnswer>;
  collectable(coordinator: Coordinator, streamIds: readonly string[]): Promise<CollectionAnswer>;
  liveNodes(nowMs?: number): Promise<NodeRecord[]>;
  liveness(): Promise<NodeLiveness[]>;
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
  rebalance(options: RebalanceOptions): Promise<RebalanceAnswer>;
  /** Records a minted access token (table TK); the Worker signs it only once this answers ok. */
  mintToken(record: Omit<TokenRecord, "revoked">): Promise<RegistryStep>;
  revokeToken(id: string): Promise<RevokeStep>;
  /** The revoked ids of live tokens; `ids` is null when `knownVersion` is still current. */
  revocations(knownVersion: number | null): Promise<RevocationSet>;
  listTokens(after: string | null, limit: number): Promise<TokenRecord[]>;
}

/** The revocations of live access tokens as of `version` (bumped on every revocation). */
export interface RevocationSet {
  readonly version: number;
  readonly ids: readonly string[] | null;
}

/** One round of a rebalance (`rebalance`; `mink cluster rebalance`). */
export interface RebalanceOptions {
  /** Plan only: nothing is proposed. */
  readonly dryRun: boolean;
  /** Begin transfers only while fewer than this many are pending in the cluster (a positive integer). */
  readonly maxConcurrent: number;
}

export interface RebalanceAnswer {
  /** The plan of this round (planRebalance, table RB), over the nodes live now. */
  readonly plan: RebalancePlan;
  /** The plan's transfers this round began: its first ones, in plan order (none in a dry run). */
  readonly begun: readonly RebalanceMove[];
  /** Transfers pending in the cluster after this round, whoever began them. */
  readonly pending: number;
  /** Nothing left to move (no orphan, unplaceable or unbegun transfer in the plan) and no transfer pending. */
  readonly done: boolean;
  readonly version: number;
}
