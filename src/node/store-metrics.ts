// A node's counters for /metrics (docs/operations.md): object-store requests by kind, counted by a thin
// wrapper around the node's ObjectStore (every caller: WAL, replay, compaction, reads), and the appends and
// bytes the node acknowledged, counted at its WAL port. Per incarnation: a restart starts them at zero,
// which Prometheus counters allow (a reset). Failed requests count too: they cost a request all the same.
import type { StreamRecord } from "../storage/record-codec.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { decodeRecordMeta } from "./record-meta.ts";

export const STORE_REQUEST_KINDS = ["put", "get", "head", "list", "delete"] as const;
export type StoreRequestKind = (typeof STORE_REQUEST_KINDS)[number];
export type StoreRequestCounts = Record<StoreRequestKind, number>;

export function emptyStoreRequestCounts(): StoreRequestCounts {
  return { put: 0, get: 0, head: 0, list: 0, delete: 0 };
}

/** The store, counting each request into `counts` as it is made. */
export function countingStore(store: ObjectStore, counts: StoreRequestCounts): ObjectStore {
  return {
    put: (key, body, options) => {
      counts.put++;
      return store.put(key, body, options);
    },
    get: (key, range) => {
      counts.get++;
      return store.get(key, range);
    },
    head: (key) => {
      counts.head++;
      return store.head(key);
    },
    list: (prefix, options) => {
      counts.list++;
      return store.list(prefix, options);
    },
    delete: (key) => {
      counts.delete++;
      return store.delete(key);
    },
  };
}

export interface AppendCounts {
  /** Append records acknowledged (POSTs that appended data and/or closed). */
  appends: number;
  /** Stream data acknowledged: append and create bodies (not WAL framing, not compaction snapshots). */
  bytes: number;
}

/** Counts WAL records that just became durable. Never throws: the append is acknowledged regardless. */
export function countAcknowledged(counts: AppendCounts, records: readonly StreamRecord[]): void {
  for (const record of records) {
    let kind: string;
    try {
      kind = decodeRecordMeta(record.meta).k;
    } catch {
      continue; // only the node's own records pass here; an undecodable one is not worth failing an answer
    }
    if (kind === "append") counts.appends++;
    if (kind === "append" || kind === "create") counts.bytes += record.data.byteLength;
  }
}

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
