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
}

