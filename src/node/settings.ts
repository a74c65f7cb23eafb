// The node's settings, read once per incarnation from the Worker's vars (wrangler.toml [vars]; locally
// `--var`). Bad values fall back to the defaults with a warning rather than stopping the node.

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
  /** A node silent this long is dead, and the coordinator lease lasts this long: LEASE_TTL_MS (seed 002's lease_ttl). */
  readonly leaseTtlMs: number;
  /** How often the lease holder runs the coordinator's tick: COORDINATOR_TICK_MS (seed 002's coordinator_tick). */
  readonly coordinatorTickMs: number;
  /** Streams of dead nodes one tick re-leads at most (the rest follow on the next ticks). */
  readonly maxReassignPerTick: number;
  /** Compact once this many WAL objects were written since the checkpoint (bounds restart replay). */
  readonly compactAfterWalObjects: number;
  /** ... or this many WAL bytes (bounds the tail cache: compacted data leaves memory). */
  readonly compactAfterWalBytes: number;
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
};

export interface SettingsVars {
  LONG_POLL_TIMEOUT_MS?: string;
  MAX_BODY_BYTES?: string;
  COMPACT_AFTER_WAL_OBJECTS?: string;
  COMPACT_AFTER_WAL_BYTES?: string;
  LEASE_TTL_MS?: string;
  HEARTBEAT_MS?: string;
  COORDINATOR_TICK_MS?: string;
}

export function nodeSettings(vars: SettingsVars): NodeSettings {
  return {
    ...DEFAULT_SETTINGS,
    longPollTimeoutMs: positiveInt(vars.LONG_POLL_TIMEOUT_MS, "LONG_POLL_TIMEOUT_MS", DEFAULT_SETTINGS.longPollTimeoutMs),
    maxBodyBytes: positiveInt(vars.MAX_BODY_BYTES, "MAX_BODY_BYTES", DEFAULT_SETTINGS.maxBodyBytes),
    compactAfterWalObjects: positiveInt(vars.COMPACT_AFTER_WAL_OBJECTS, "COMPACT_AFTER_WAL_OBJECTS", DEFAULT_SETTINGS.compactAfterWalObjects),
    compactAfterWalBytes: positiveInt(vars.COMPACT_AFTER_WAL_BYTES, "COMPACT_AFTER_WAL_BYTES", DEFAULT_SETTINGS.compactAfterWalBytes),
    heartbeatMs: positiveInt(vars.HEARTBEAT_MS, "HEARTBEAT_MS", DEFAULT_SETTINGS.heartbeatMs),
    leaseTtlMs: leaseTtlMs(vars),
    coordinatorTickMs: positiveInt(vars.COORDINATOR_TICK_MS, "COORDINATOR_TICK_MS", DEFAULT_SETTINGS.coordinatorTickMs),
  };
}

/** LEASE_TTL_MS: the MetaLog measures liveness with it, the nodes ask for leases and claims of that length. */
export function leaseTtlMs(vars: Pick<SettingsVars, "LEASE_TTL_MS">): number {
  return positiveInt(vars.LEASE_TTL_MS, "LEASE_TTL_MS", DEFAULT_SETTINGS.leaseTtlMs);
}

function positiveInt(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (Number.isSafeInteger(value) && value > 0) return value;
  console.warn(`${name}=${raw} is not a positive integer; using ${fallback}`);
  return fallback;
}
