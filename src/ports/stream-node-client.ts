// A stream node as the router and the admin API see it: the port they depend on, and the types that cross
// it. The StreamNode Durable Object implements it (checked by the compiler in
// durable-objects/stream-node.ts). Imports nothing but the core, so no caller depends on the Durable Object.

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
  /** WAL objects written (each is one flush of a batch). */
  readonly walFlushes: number;
  readonly walBytesWritten: number;
  /** Streams this node holds in memory (live and soft-deleted). */
  readonly openStreams: number;
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

/** The StreamNode's methods as seen by a caller. */
export interface StreamNodeClient {
  /** The node's protocol app: node-addressed requests (`/n/<id>/...` with the prefix removed). */
  fetch(request: Request): Promise<Response>;
  ping(): Promise<NodePing>;
  metrics(): Promise<NodeMetrics>;
  fault(): Promise<FaultState>;
  setFault(request: FaultRequest): Promise<FaultState>;
}

