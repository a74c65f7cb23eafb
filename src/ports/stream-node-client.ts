// A stream node as the router and the admin API see it: the port they depend on, and the types that cross
// it. The StreamNode Durable Object implements it (checked by the compiler in
// durable-objects/stream-node.ts). Imports nothing but the core, so no caller depends on the Durable Object.
import type { DomainError } from "../core/errors.ts";
import type { HistogramSnapshot } from "../core/histogram.ts";
import type { JsonValue } from "../core/meta/json.ts";
import type { SeriesSample } from "../core/series.ts";
import type { TierTableAnswer } from "../core/tiering/tier-report.ts";

export const STORE_REQUEST_KINDS = ["put", "get", "head", "list", "delete"] as const;
type StoreRequestKind = (typeof STORE_REQUEST_KINDS)[number];
export type StoreRequestCounts = Record<StoreRequestKind, number>;

/** What StreamNode.metrics() answers over RPC: plain numbers, one node, this incarnation. */
export interface NodeMetrics {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  /** False while start-up has not finished (or failed): the counters are zero then. */
  readonly started: boolean;
  readonly appendsAcknowledged: number;
  readonly bytesAppended: number;
  readonly storeRequests: StoreRequestCounts;
  /** How long each object-store request took, by kind, until it settled (failures included). */
  readonly storeLatency: Readonly<Record<StoreRequestKind, HistogramSnapshot>>;
  /** Each acknowledged append's latency, from its arrival at the node to its WAL object being durable. */
  readonly ackLatency: HistogramSnapshot;
  /** The recent intervals for the status page (GET /admin/series): oldest first, the current one last. */
  readonly series: readonly SeriesSample[];
  /** WAL objects written (each is one flush of a batch). */
  readonly walFlushes: number;
  readonly walBytesWritten: number;
  /** WAL objects in flight now, and the PUT round trip the WAL's batching follows (ms; docs/storage-format.md). */
  readonly walInFlight: number;
  readonly walRoundTripMs: number;
  /** Streams this node holds in memory (live and soft-deleted). */
  readonly openStreams: number;
  /** Idle streams evicted from memory, and evicted streams reloaded, by this incarnation (docs/node.md, "Idle streams"). */
  readonly streamsEvicted: number;
  readonly streamsReloaded: number;
  /** Long-poll and SSE readers waiting at a tail. */
  readonly liveReaders: number;
  /** Transfer steps this incarnation's watcher took, by kind (docs/transfers.md, table T). */
  readonly transferSteps: { readonly handOffs: number; readonly completions: number; readonly adoptions: number; readonly failures: number };
  /** The coordinator role of this incarnation (docs/failover.md). */
  readonly coordinator: {
    /** The coordinator epoch it holds the lease at, or null. */
    readonly coordinatorEpoch: number | null;
    readonly ticks: number;
    /** Nodes it declared dead. */
    readonly failovers: number;
    readonly reassigned: number;
  };
  /** Takeovers of dead incarnations this incarnation completed, and what they cost. */
  readonly takeovers: {
    readonly completed: number;
    readonly streamsClosed: number;
    readonly walObjectsReplayed: number;
    readonly walBytesReplayed: number;
    readonly totalDurationMs: number;
    readonly maxDurationMs: number;
  };
}

/** A fault for tests (POST /admin/faults, only with FAULTS_ENABLED=1; docs/failover.md). */
type FaultMode = "crash" | "zombie" | "pause" | "heal";

export interface FaultRequest {
  readonly mode: FaultMode;
  /** For `pause`: how long heartbeats stop. */
  readonly ms?: number;
}

/** The fault a node is under now. */
export interface FaultState {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly mode: "none" | "crash" | "zombie" | "pause";
  /** For `pause`: when heartbeats resume (epoch ms). */
  readonly untilMs?: number;
}

/** What a node says of itself when woken (the router wakes every node with it). */
export interface NodePing {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly started: boolean;
}

/** The most stream ids one `tails` call may ask about (a listing page's bound). */
export const MAX_TAIL_IDS = 1000;

/** A stream's tail as the node holds it in memory (`tails`; GET /admin/streams). */
export interface StreamTailInfo {
  readonly streamId: string;
  /** The Stream-Next-Offset a HEAD would answer now. */
  readonly offset: string;
  /** The stream's size in bytes: its acknowledged tail position (a fork's inherited bytes included). */
  readonly bytes: number;
  /** Closed by its writer (eof). */
  readonly closed: boolean;
}

/** A table bucket as its leader holds it in memory (`tableBuckets`; GET /v1/table/<name>). */
export interface BucketInfo {
  readonly streamId: string;
  /** The bucket stream's tail: the offset a changelog reader reaches now. */
  readonly nextOffset: string;
  /** Rows in a primary-key bucket's tablet, records in a log bucket; null when the bucket is not loaded here. */
  readonly rows: number | null;
  /** Changelog records the leader has applied (the next record's offset); null when the bucket is not loaded here. */
  readonly records: number | null;
}

/** The answer of `createTable` at a node: the table's buckets, or why not (`fenced` names the lease holder). */
export type CreateTableAnswer =
  | { readonly ok: true; readonly created: boolean }
  | { readonly ok: false; readonly error: DomainError };

/** A page of a bucket's changelog read at its leader for tiering (docs/tiering.md): the records' JSON texts. */
export type ChangelogPageAnswer =
  | { readonly ok: true; readonly messages: readonly string[]; readonly endPosition: number; readonly atTail: boolean }
  | { readonly ok: false; readonly error: DomainError };

/** The StreamNode's methods as seen by a caller. */
export interface StreamNodeClient {
  /** The node's protocol app: node-addressed requests (`/n/<id>/...` with the prefix removed). */
  fetch(request: Request): Promise<Response>;
  ping(): Promise<NodePing>;
  metrics(): Promise<NodeMetrics>;
  /**
   * The tails of these streams (at most MAX_TAIL_IDS ids, else it throws) from memory: only streams this
   * incarnation holds and has not deleted or handed away; ids it does not hold are left out. Never opens
   * or loads a stream.
   */
  tails(streamIds: readonly string[]): Promise<StreamTailInfo[]>;
  fault(): Promise<FaultState>;
  setFault(request: FaultRequest): Promise<FaultState>;
  /** From memory (at most MAX_TAIL_IDS ids): the buckets of these streams this incarnation holds. */
  tableBuckets(streamIds: readonly string[]): Promise<BucketInfo[]>;
  /** Snapshots the primary-key buckets among these streams that this node has loaded, now. */
  snapshotBuckets(streamIds: readonly string[]): Promise<{ streamId: string; coveredOffset: string | null; error: string | null }[]>;
  /** Removes a dropped table's bucket streams led here and their tablets (DELETE /v1/table/<name>). */
  dropBuckets(streamIds: readonly string[]): Promise<number>;
  /** CreateTable as the coordinator: `fenced` with the lease holder when this node is not it. */
  createTable(name: string, definition: JsonValue, buckets: number): Promise<CreateTableAnswer>;
  /** AddPartition as the coordinator (a write to a new partition value): `fenced` with the lease holder when this node is not it. */
  addPartition(table: string, value: string | number): Promise<CreateTableAnswer>;
  /** A tiering round of the table now, as the coordinator: `fenced` with the lease holder when this node is not it. */
  tierTable(name: string): Promise<TierTableAnswer>;
  /** The bucket's changelog from a byte position, at most about `maxBytes`, read here as its leader (a tiering round asks). */
  readBucketChangelog(table: string, partition: string | number | null, bucket: number, fromPosition: number, maxBytes: number): Promise<ChangelogPageAnswer>;
}

