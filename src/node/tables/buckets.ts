// The buckets this node leads, loaded (tables/load.ts loads them): each bucket's tablet (kept behind the
// TabletStorage port), the batches in flight (the core's BucketState), how far the tablet has applied the
// bucket's stream, and its snapshots. A bucket opened at a new stream epoch (a restart, a move back) is
// loaded again (docs/tables.md, "Tablets on the leader").
import type { TableDefinition } from "../../core/tables/definition.ts";
import type { BucketState } from "../../core/tables/tablet.ts";
import type { TableKind } from "../../core/tables/tablet-write.ts";
import { KeyedWaiters } from "../../waits/keyed-waiters.ts";
import type { NodeContext } from "../context.ts";
import type { StreamState } from "../state/stream-registry.ts";
import type { BucketTablet, TabletStorage } from "../../ports/tablet-storage.ts";
import type { SnapshotRef } from "./snapshot-store.ts";
import type { Result } from "../../core/result.ts";

/** What the metadata log says of a bucket, enough to load it. */
export interface BucketIdentity {
  readonly table: string;
  readonly bucket: number;
  readonly definition: TableDefinition;
  /** The snapshots the metadata log keeps for the bucket, oldest first. */
  readonly snapshots: readonly SnapshotRef[];
}

/** When the bucket was last snapshotted here, and a snapshot running now. */
interface SnapshotProgress {
  /** The stream position the newest committed snapshot covers (0: none). */
  position: number;
  atMs: number;
  running: Promise<Result<SnapshotRef>> | null;
}

export interface LoadedBucket extends BucketIdentity {
  readonly streamId: string;
  readonly kind: TableKind;
  readonly tablet: BucketTablet;
  /** The stream epoch it was loaded at: the leader epoch its answers name. */
  readonly epoch: number;
  /** The applied tablet (read through `tablet`) and the batches in flight. */
  state: BucketState;
  /** The stream position the tablet has applied up to: what `minOffset` waits for. */
  appliedPosition: number;
  readonly snapshot: SnapshotProgress;
}

/**
 * What the table code takes: the node's context and the buckets it leads. The stream paths never see
 * `tables`; only the table code and the runtime that builds both do.
 */
export type TableContext = NodeContext & {
  /** The table buckets this node leads, loaded. */
  readonly tables: TableBuckets;
};

export class TableBuckets {
  private readonly loaded = new Map<string, LoadedBucket>();
  /** Loads in progress, by `<stream id>@<epoch>`: one load per bucket and epoch, whoever asks (tables/leader.ts). */
  readonly loads = new Map<string, Promise<Result<LoadedBucket>>>();
  /** Readers waiting for a bucket to apply up to an offset, by stream id. */
  readonly appliedWaiters: KeyedWaiters;

  constructor(
    readonly storage: TabletStorage,
    maxWaiters: number,
  ) {
    this.appliedWaiters = new KeyedWaiters(maxWaiters);
  }

  /** The bucket of `stream` as loaded at the stream's current epoch, if it is. */
  current(stream: StreamState): LoadedBucket | undefined {
    const bucket = this.loaded.get(stream.id);
    return bucket !== undefined && bucket.epoch === stream.epoch ? bucket : undefined;
  }

  remember(bucket: LoadedBucket): void {
    this.loaded.set(bucket.streamId, bucket);
  }

  /** The bucket must be loaded again before its next request (a write of it failed: what reached the stream is unknown). */
  forget(streamId: string): void {
    this.loaded.delete(streamId);
    this.appliedWaiters.notify(streamId);
  }

  /** Buckets loaded now (for metrics and snapshots). */
  all(): LoadedBucket[] {
    return [...this.loaded.values()];
  }
}
