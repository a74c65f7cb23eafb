// A node's counters for /metrics (docs/operations.md): object-store requests by kind, counted by a thin
// wrapper around the node's ObjectStore (every caller: WAL, replay, compaction, reads), and the appends and
// bytes the node acknowledged, counted at its WAL port. Per incarnation: a restart starts them at zero,
// which Prometheus counters allow (a reset). Failed requests count too: they cost a request all the same.
import type { WalRecord } from "../storage/record-codec.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { StoreRequestCounts } from "../ports/stream-node-client.ts";
import { decodeRecordMeta } from "./record-meta.ts";

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
    get: (key, range, options) => {
      counts.get++;
      return store.get(key, range, options);
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
export function countAcknowledged(counts: AppendCounts, records: readonly WalRecord[]): void {
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
