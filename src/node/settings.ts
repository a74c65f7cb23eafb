// The node's settings, read once per incarnation from the Worker's vars (wrangler.toml [vars]; locally
// `--var`). Bad values fall back to the defaults with a warning rather than stopping the node.
import { workerLog } from "../log/logger.ts";
import { defaultReaderShare } from "../core/protocol/reader-share.ts";
import { WAL_IN_FLIGHT_CAP } from "../storage/wal-format.ts";

export interface NodeSettings {
  /** How long a long-poll waits at the tail, and the SSE keep-alive interval (LONG_POLL_TIMEOUT_MS). */
  readonly longPollTimeoutMs: number;
  /** Largest accepted request body (MAX_BODY_BYTES); larger bodies get 413. */
  readonly maxBodyBytes: number;
  /** An SSE response is ended after this long so clients reconnect (and proxies never time out). */
  readonly sseMaxDurationMs: number;
  /** Largest catch-up page (bytes of stored data). */
  readonly maxReadBytes: number;
  /** Heartbeat interval towards the metadata log (and how often compaction is considered): HEARTBEAT_MS. */
  readonly heartbeatMs: number;
  /** A node silent this long is dead, and the coordinator lease lasts this long: LEASE_TTL_MS (docs/failover.md). */
  readonly leaseTtlMs: number;
  /** How often the lease holder runs the coordinator's tick: COORDINATOR_TICK_MS (docs/failover.md). */
  readonly coordinatorTickMs: number;
  /** Streams of dead nodes one tick re-leads at most (the rest follow on the next ticks). */
  readonly maxReassignPerTick: number;
  /** Compact once this many WAL objects were written since the checkpoint (bounds restart replay). */
  readonly compactAfterWalObjects: number;
  /** ... or this many WAL bytes (bounds the tail cache: compacted data leaves memory). */
  readonly compactAfterWalBytes: number;
  /** A stream untouched this long leaves memory, staying owned here (STREAM_IDLE_EVICT_MS; docs/node.md, "Idle streams"). */
  readonly streamIdleEvictMs: number;
  /** Streams one node holds in memory (MAX_RESIDENT_STREAMS); past it the least recently used leave first. */
  readonly maxResidentStreams: number;
  // Bounds: what one client can make a node hold or do (docs/limits.md, "Stream nodes").
  /** Long-poll and SSE readers one node serves at once (MAX_LIVE_READERS); over it: 429 at once. */
  readonly maxLiveReaders: number;
  /** Of those, the most one token holds on this node (MAX_LIVE_READERS_PER_TOKEN); over it: 429 at once. */
  readonly maxLiveReadersPerToken: number;
  /** Producer ids one stream keeps (MAX_PRODUCERS_PER_STREAM); a new one over it: 429, unless idle ones are pruned. */
  readonly maxProducersPerStream: number;
  /** A producer silent this long may be pruned to make room for a new one (PRODUCER_IDLE_MS). */
  readonly producerIdleMs: number;
  /** Longest protocol header value a request may carry (MAX_HEADER_VALUE_BYTES); longer: 400. */
  readonly maxHeaderValueBytes: number;
  /** How far one request may raise a producer's epoch (MAX_PRODUCER_EPOCH_STEP); further: 400. */
  readonly maxProducerEpochStep: number;
  /** Longest fork chain (MAX_FORK_DEPTH): a fork of a stream this deep is refused with 400. */
  readonly maxForkDepth: number;
  /** Bytes of appends waiting for their WAL object (MAX_WAL_QUEUE_BYTES); over it: 503 with Retry-After. */
  readonly maxWalQueueBytes: number;
  /** Bytes of create, append and table-write bodies one node holds until answered (MAX_BODY_BYTES_IN_FLIGHT); over it: 503. */
  readonly maxBodyBytesInFlight: number;
  /** Messages one JSON create or append may hold (MAX_JSON_MESSAGES); more: 413. */
  readonly maxJsonMessages: number;
  /** Bytes of every producer table of the node together (MAX_NODE_PRODUCER_BYTES); a new id past it: 429. */
  readonly maxNodeProducerBytes: number;
  /** How long one WAL object may take to land, retries included (WAL_BATCH_DEADLINE_MS); then its appends get 503. */
  readonly walBatchDeadlineMs: number;
  /** WAL objects one node has in flight at once (WAL_MAX_IN_FLIGHT), 1 to WAL_IN_FLIGHT_CAP (16). */
  readonly walMaxInFlight: number;
  /** How much of a webhook receiver's reply a webhook sent from this node reads (WEBHOOK_MAX_REPLY_BYTES). */
  readonly webhookMaxReplyBytes: number;
  /** A primary-key bucket is snapshotted once this many changelog bytes came since its last snapshot (TABLE_SNAPSHOT_BYTES)... */
  readonly tableSnapshotBytes: number;
  /** ... or once this long passed with any change since it (TABLE_SNAPSHOT_INTERVAL_MS). */
  readonly tableSnapshotIntervalMs: number;
  /** Changelog bytes one tiering round reads over all its buckets (TIERING_MAX_ROUND_BYTES); the rest waits for the next round. */
  readonly tieringMaxRoundBytes: number;
  /** How often the lease holder tiers every table (TIERING_INTERVAL_MS); 0: only on demand. */
  readonly tieringIntervalMs: number;
}

const DEFAULT_SETTINGS: NodeSettings = {
  longPollTimeoutMs: 30_000,
  maxBodyBytes: 8 * 1024 * 1024,
  sseMaxDurationMs: 60_000,
  maxReadBytes: 4 * 1024 * 1024,
  heartbeatMs: 5_000,
  leaseTtlMs: 30_000,
  coordinatorTickMs: 5_000,
  maxReassignPerTick: 5_000,
  compactAfterWalObjects: 256,
  compactAfterWalBytes: 32 * 1024 * 1024,
  streamIdleEvictMs: 300_000,
  maxResidentStreams: 20_000,
  maxLiveReaders: 10_000,
  maxLiveReadersPerToken: 2_500,
  maxProducersPerStream: 1_000,
  producerIdleMs: 86_400_000,
  maxHeaderValueBytes: 1_024,
  maxProducerEpochStep: 1_000_000,
  maxForkDepth: 16,
  maxWalQueueBytes: 64 * 1024 * 1024,
  // One MAX_BODY_BYTES body, or several smaller ones: each held byte costs up to ~5 copies (docs/limits.md).
  maxBodyBytesInFlight: 8 * 1024 * 1024,
  maxJsonMessages: 100_000,
  // About 3,500 producers of 1 KiB ids, or 25,000 of 8-byte ids (producerBytes).
  maxNodeProducerBytes: 4 * 1024 * 1024,
  walBatchDeadlineMs: 10_000,
  walMaxInFlight: 8,
  webhookMaxReplyBytes: 65_536,
  tableSnapshotBytes: 16 * 1024 * 1024,
  tableSnapshotIntervalMs: 60_000,
  tieringMaxRoundBytes: 16 * 1024 * 1024,
  tieringIntervalMs: 0,
};

export interface SettingsVars {
  /** How long a long-poll waits at the tail (ms; default 30000). */
  LONG_POLL_TIMEOUT_MS?: string;
  /** Largest request body in bytes (default 8 MiB); larger gets 413. */
  MAX_BODY_BYTES?: string;
  /** A node compacts its WAL after this many WAL objects (default 256)... */
  COMPACT_AFTER_WAL_OBJECTS?: string;
  /** ... or this many WAL bytes (default 32 MiB). */
  COMPACT_AFTER_WAL_BYTES?: string;
  /** A stream untouched this long leaves the node's memory and is reloaded on its next request (ms; default 300000). */
  STREAM_IDLE_EVICT_MS?: string;
  /** Streams a node holds in memory (default 20000); past it the least recently used leave first. */
  MAX_RESIDENT_STREAMS?: string;
  /** A node silent this long is dead; the coordinator lease lasts this long (default 30000). */
  LEASE_TTL_MS?: string;
  /** How often a node heartbeats (default 5000). */
  HEARTBEAT_MS?: string;
  /** How often the lease holder runs the coordinator's tick (default 5000). */
  COORDINATOR_TICK_MS?: string;
  // Bounds (docs/limits.md): node
  /** Long-poll and SSE readers per node (default 10000); over it a live read gets 429 with Retry-After. */
  MAX_LIVE_READERS?: string;
  /** Live readers one token holds per node (default: a quarter of MAX_LIVE_READERS); over it: 429 with Retry-After. */
  MAX_LIVE_READERS_PER_TOKEN?: string;
  /** Producer ids per stream (default 1000); a new one over it gets 429 unless idle ones can be pruned. */
  MAX_PRODUCERS_PER_STREAM?: string;
  /** A producer idle this long (ms; default 86400000, one day) may be pruned for a new one. */
  PRODUCER_IDLE_MS?: string;
  /** Longest protocol header value (bytes; default 1024); longer gets 400. */
  MAX_HEADER_VALUE_BYTES?: string;
  /** Largest Producer-Epoch raise per request (default 1000000; also the largest first epoch); more gets 400. */
  MAX_PRODUCER_EPOCH_STEP?: string;
  /** Longest fork chain (default 16); a fork of a stream that deep gets 400. */
  MAX_FORK_DEPTH?: string;
  /** Append bytes waiting for the WAL per node (default 64 MiB); more gets 503 with Retry-After. */
  MAX_WAL_QUEUE_BYTES?: string;
  /** How long one WAL object may take to land, retries included (ms; default 10000); then 503. */
  WAL_BATCH_DEADLINE_MS?: string;
  /** WAL objects in flight per node (default 8, at most 16). */
  WAL_MAX_IN_FLIGHT?: string;
  /** Bytes of request bodies one node holds until answered (default 8 MiB); more gets 503 with Retry-After. */
  MAX_BODY_BYTES_IN_FLIGHT?: string;
  /** Messages in one JSON create or append (default 100000); more gets 413. */
  MAX_JSON_MESSAGES?: string;
  /** Bytes of every producer table of a node together (default 4 MiB); a new producer id beyond it gets 429. */
  MAX_NODE_PRODUCER_BYTES?: string;
  /** How much of a webhook reply is read (bytes; default 65536); the rest is dropped. */
  WEBHOOK_MAX_REPLY_BYTES?: string;
  /** Changelog bytes after which a primary-key bucket is snapshotted (default 16 MiB). */
  TABLE_SNAPSHOT_BYTES?: string;
  /** Longest time a changed primary-key bucket goes without a snapshot (ms; default 60000). */
  TABLE_SNAPSHOT_INTERVAL_MS?: string;
  /** Changelog bytes one tiering round reads over all its buckets (default 16 MiB). */
  TIERING_MAX_ROUND_BYTES?: string;
  /** How often the lease holder tiers every table (ms; default 0: only on demand). */
  TIERING_INTERVAL_MS?: string;
}

export function nodeSettings(vars: SettingsVars): NodeSettings {
  return {
    ...DEFAULT_SETTINGS,
    longPollTimeoutMs: positiveInt(vars.LONG_POLL_TIMEOUT_MS, "LONG_POLL_TIMEOUT_MS", DEFAULT_SETTINGS.longPollTimeoutMs),
    maxBodyBytes: positiveInt(vars.MAX_BODY_BYTES, "MAX_BODY_BYTES", DEFAULT_SETTINGS.maxBodyBytes),
    compactAfterWalObjects: positiveInt(vars.COMPACT_AFTER_WAL_OBJECTS, "COMPACT_AFTER_WAL_OBJECTS", DEFAULT_SETTINGS.compactAfterWalObjects),
    compactAfterWalBytes: positiveInt(vars.COMPACT_AFTER_WAL_BYTES, "COMPACT_AFTER_WAL_BYTES", DEFAULT_SETTINGS.compactAfterWalBytes),
    streamIdleEvictMs: positiveInt(vars.STREAM_IDLE_EVICT_MS, "STREAM_IDLE_EVICT_MS", DEFAULT_SETTINGS.streamIdleEvictMs),
    maxResidentStreams: positiveInt(vars.MAX_RESIDENT_STREAMS, "MAX_RESIDENT_STREAMS", DEFAULT_SETTINGS.maxResidentStreams),
    heartbeatMs: positiveInt(vars.HEARTBEAT_MS, "HEARTBEAT_MS", DEFAULT_SETTINGS.heartbeatMs),
    leaseTtlMs: leaseTtlMs(vars),
    coordinatorTickMs: positiveInt(vars.COORDINATOR_TICK_MS, "COORDINATOR_TICK_MS", DEFAULT_SETTINGS.coordinatorTickMs),
    ...boundSettings(vars),
    webhookMaxReplyBytes: positiveInt(vars.WEBHOOK_MAX_REPLY_BYTES, "WEBHOOK_MAX_REPLY_BYTES", DEFAULT_SETTINGS.webhookMaxReplyBytes),
    tableSnapshotBytes: positiveInt(vars.TABLE_SNAPSHOT_BYTES, "TABLE_SNAPSHOT_BYTES", DEFAULT_SETTINGS.tableSnapshotBytes),
    tableSnapshotIntervalMs: positiveInt(vars.TABLE_SNAPSHOT_INTERVAL_MS, "TABLE_SNAPSHOT_INTERVAL_MS", DEFAULT_SETTINGS.tableSnapshotIntervalMs),
    tieringMaxRoundBytes: positiveInt(vars.TIERING_MAX_ROUND_BYTES, "TIERING_MAX_ROUND_BYTES", DEFAULT_SETTINGS.tieringMaxRoundBytes),
    tieringIntervalMs: nonNegativeInt(vars.TIERING_INTERVAL_MS, "TIERING_INTERVAL_MS", DEFAULT_SETTINGS.tieringIntervalMs),
  };
}

/** The bounds, each from its var (docs/limits.md). */
function boundSettings(vars: SettingsVars): Pick<
  NodeSettings,
  | "maxLiveReaders"
  | "maxLiveReadersPerToken"
  | "maxProducersPerStream"
  | "producerIdleMs"
  | "maxHeaderValueBytes"
  | "maxProducerEpochStep"
  | "maxForkDepth"
  | "maxWalQueueBytes"
  | "walBatchDeadlineMs"
  | "walMaxInFlight"
  | "maxBodyBytesInFlight"
  | "maxJsonMessages"
  | "maxNodeProducerBytes"
> {
  const d = DEFAULT_SETTINGS;
  const maxLiveReaders = positiveInt(vars.MAX_LIVE_READERS, "MAX_LIVE_READERS", d.maxLiveReaders);
  return {
    maxLiveReaders,
    maxLiveReadersPerToken: positiveInt(vars.MAX_LIVE_READERS_PER_TOKEN, "MAX_LIVE_READERS_PER_TOKEN", defaultReaderShare(maxLiveReaders)),
    maxProducersPerStream: positiveInt(vars.MAX_PRODUCERS_PER_STREAM, "MAX_PRODUCERS_PER_STREAM", d.maxProducersPerStream),
    producerIdleMs: positiveInt(vars.PRODUCER_IDLE_MS, "PRODUCER_IDLE_MS", d.producerIdleMs),
    maxHeaderValueBytes: positiveInt(vars.MAX_HEADER_VALUE_BYTES, "MAX_HEADER_VALUE_BYTES", d.maxHeaderValueBytes),
    maxProducerEpochStep: positiveInt(vars.MAX_PRODUCER_EPOCH_STEP, "MAX_PRODUCER_EPOCH_STEP", d.maxProducerEpochStep),
    maxForkDepth: positiveInt(vars.MAX_FORK_DEPTH, "MAX_FORK_DEPTH", d.maxForkDepth),
    maxWalQueueBytes: positiveInt(vars.MAX_WAL_QUEUE_BYTES, "MAX_WAL_QUEUE_BYTES", d.maxWalQueueBytes),
    walBatchDeadlineMs: positiveInt(vars.WAL_BATCH_DEADLINE_MS, "WAL_BATCH_DEADLINE_MS", d.walBatchDeadlineMs),
    walMaxInFlight: atMost(positiveInt(vars.WAL_MAX_IN_FLIGHT, "WAL_MAX_IN_FLIGHT", d.walMaxInFlight), WAL_IN_FLIGHT_CAP, "WAL_MAX_IN_FLIGHT"),
    maxBodyBytesInFlight: positiveInt(vars.MAX_BODY_BYTES_IN_FLIGHT, "MAX_BODY_BYTES_IN_FLIGHT", d.maxBodyBytesInFlight),
    maxJsonMessages: positiveInt(vars.MAX_JSON_MESSAGES, "MAX_JSON_MESSAGES", d.maxJsonMessages),
    maxNodeProducerBytes: positiveInt(vars.MAX_NODE_PRODUCER_BYTES, "MAX_NODE_PRODUCER_BYTES", d.maxNodeProducerBytes),
  };
}

/** LEASE_TTL_MS: the MetaLog measures liveness with it, the nodes ask for leases and claims of that length. */
export function leaseTtlMs(vars: Pick<SettingsVars, "LEASE_TTL_MS">): number {
  return positiveInt(vars.LEASE_TTL_MS, "LEASE_TTL_MS", DEFAULT_SETTINGS.leaseTtlMs);
}

/** `value`, or `cap` (logged) when it is above: a setting the format bounds. */
function atMost(value: number, cap: number, name: string): number {
  if (value <= cap) return value;
  workerLog.log("settings.invalid", { name, value, fallback: cap, reason: `above ${cap}` });
  return cap;
}

function positiveInt(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (Number.isSafeInteger(value) && value > 0) return value;
  workerLog.log("settings.invalid", { name, value: raw, fallback, reason: "not a positive integer" });
  return fallback;
}

/** A setting where 0 means "off" (TIERING_INTERVAL_MS); anything else as positiveInt. */
function nonNegativeInt(raw: string | undefined, name: string, fallback: number): number {
  return raw === "0" ? 0 : positiveInt(raw, name, fallback);
}
