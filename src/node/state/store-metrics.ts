// A node's counters and histograms for /metrics and GET /admin/series (docs/operations.md,
// docs/observability.md): object-store requests by kind, counted and timed by a thin wrapper around the
// node's ObjectStore (every caller: WAL, replay, compaction, reads); the appends and bytes the node
// acknowledged, counted at its WAL port; the ack latency of each append, from its arrival at the node to
// its acknowledgement (its WAL object durable), as a histogram and in the recent series. Per incarnation:
// a restart starts them at zero, which Prometheus counters and histograms allow (a reset). Failed store
// requests count too: they cost a request all the same. The clock is a parameter (performance.now-like ms).
import { newHistogram, observe, snapshotHistogram, type Histogram, type HistogramSnapshot } from "../../core/histogram.ts";
import { newSeriesRing, recordAck, recordAppends, type SeriesRing } from "../../core/series.ts";
import type { WalRecord } from "../../storage/record-codec.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { STORE_REQUEST_KINDS, type NodeMetrics, type StoreRequestCounts } from "../../ports/stream-node-client.ts";
import { decodeRecordMeta } from "./record-meta.ts";

type StoreRequestKind = keyof StoreRequestCounts;

function emptyStoreRequestCounts(): StoreRequestCounts {
  return { put: 0, get: 0, head: 0, list: 0, delete: 0 };
}

interface AppendCounts {
  /** Append records acknowledged (POSTs that appended data and/or closed). */
  appends: number;
  /** Stream data acknowledged: append and create bodies (not WAL framing, not compaction snapshots). */
  bytes: number;
}

/** Everything one incarnation meters, from its start on (recovery's store requests included). */
/** Takeovers this incarnation ran (ownership/takeover-use.ts counts them). */
interface TakeoverStats {
  completed: number;
  streamsClosed: number;
  walObjectsReplayed: number;
  walBytesReplayed: number;
  totalDurationMs: number;
  maxDurationMs: number;
}

export interface NodeMeters {
  readonly storeRequests: StoreRequestCounts;
  readonly storeLatency: Record<StoreRequestKind, Histogram>;
  readonly appendCounts: AppendCounts;
  readonly ack: Histogram;
  readonly series: SeriesRing;
  readonly takeovers: TakeoverStats;
  /**
   * Idle streams this incarnation evicted, and evicted streams it reloaded (streams/eviction.ts): of those, the
   * ones a hand-off reloaded, and orphans it adopted from the session their dead owner's eviction left.
   */
  readonly residency: { evicted: number; reloaded: number; handedOff: number; adoptedFromEviction: number };
  /** Monotonic ms (performance.now in workerd and Node; virtual time in the simulation). */
  readonly clockMs: () => number;
}

export function newNodeMeters(startedAtMs: number, clockMs: () => number): NodeMeters {
  const storeLatency = Object.fromEntries(STORE_REQUEST_KINDS.map((kind) => [kind, newHistogram()])) as Record<StoreRequestKind, Histogram>;
  return {
    storeRequests: emptyStoreRequestCounts(),
    storeLatency,
    appendCounts: { appends: 0, bytes: 0 },
    ack: newHistogram(),
    series: newSeriesRing(startedAtMs),
    takeovers: { completed: 0, streamsClosed: 0, walObjectsReplayed: 0, walBytesReplayed: 0, totalDurationMs: 0, maxDurationMs: 0 },
    residency: { evicted: 0, reloaded: 0, handedOff: 0, adoptedFromEviction: 0 },
    clockMs,
  };
}

/** Every store request kind's latency, cumulative (NodeMetrics.storeLatency). */
export function storeLatencySnapshots(meters: NodeMeters): Record<StoreRequestKind, HistogramSnapshot> {
  return Object.fromEntries(STORE_REQUEST_KINDS.map((kind) => [kind, snapshotHistogram(meters.storeLatency[kind])])) as Record<
    StoreRequestKind,
    HistogramSnapshot
  >;
}

/** What a node that has not started reports: nothing counted, no request, no ack, no series. */
export function idleNodeMetrics(nodeId: string, nodeEpoch: number): NodeMetrics {
  const meters = newNodeMeters(0, () => 0);
  return {
    nodeId,
    nodeEpoch,
    started: false,
    appendsAcknowledged: 0,
    bytesAppended: 0,
    storeRequests: meters.storeRequests,
    storeLatency: storeLatencySnapshots(meters),
    ackLatency: snapshotHistogram(meters.ack),
    series: [],
    walFlushes: 0,
    walBytesWritten: 0,
    walInFlight: 0,
    walRoundTripMs: 0,
    openStreams: 0,
    streamsEvicted: 0,
    streamsReloaded: 0,
    liveReaders: 0,
    transferSteps: { handOffs: 0, completions: 0, adoptions: 0, failures: 0 },
    coordinator: { coordinatorEpoch: null, ticks: 0, failovers: 0, reassigned: 0 },
    takeovers: { ...meters.takeovers },
  };
}

/** The store, counting each request into the meters as it is made and timing it until it settles. */
export function meteredStore(store: ObjectStore, meters: NodeMeters): ObjectStore {
  const timed = async <T>(kind: StoreRequestKind, request: () => Promise<T>): Promise<T> => {
    meters.storeRequests[kind]++;
    const startedMs = meters.clockMs();
    try {
      return await request();
    } finally {
      observe(meters.storeLatency[kind], meters.clockMs() - startedMs);
    }
  };
  return {
    put: (key, body, options) => timed("put", () => store.put(key, body, options)),
    get: (key, range, options) => timed("get", () => store.get(key, range, options)),
    head: (key) => timed("head", () => store.head(key)),
    list: (prefix, options) => timed("list", () => store.list(prefix, options)),
    delete: (key) => timed("delete", () => store.delete(key)),
  };
}

/**
 * Counts WAL records that just became durable, in the totals and in the series interval each was decided
 * in (the wall time its record carries: no clock read here). Never throws: the append is acknowledged
 * regardless.
 */
export function countAcknowledged(meters: NodeMeters, records: readonly WalRecord[]): void {
  for (const record of records) {
    let meta: ReturnType<typeof decodeRecordMeta>;
    try {
      meta = decodeRecordMeta(record.meta);
    } catch {
      continue; // only the node's own records pass here; an undecodable one is not worth failing an answer
    }
    if (meta.k !== "append" && meta.k !== "create") continue;
    const appends = meta.k === "append" ? 1 : 0;
    meters.appendCounts.appends += appends;
    meters.appendCounts.bytes += record.data.byteLength;
    recordAppends(meters.series, meta.at, appends, record.data.byteLength);
  }
}

/**
 * One append acknowledged: its latency from `arrivedMs` (clockMs at its arrival) goes into the histogram,
 * and into the series interval it was decided in (`decidedAtMs`, wall ms, as its appends are counted).
 */
export function observeAck(meters: NodeMeters, arrivedMs: number, decidedAtMs: number): void {
  const latencyMs = meters.clockMs() - arrivedMs;
  observe(meters.ack, latencyMs);
  recordAck(meters.series, decidedAtMs, latencyMs);
}
