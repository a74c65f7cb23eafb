// The MetaLog's knobs: timings, admission bounds and subscription limits from the deployment's vars
// (docs/limits.md), and how often it snapshots. In memory, defaults on every start; tests adjust them on a
// running log.
import { DEFAULT_EDGE_LIMITS, type EdgeLimits } from "../core/edge-limits.ts";
import type { AdmissionLimits } from "../core/meta/index.ts";
import { DEFAULT_ADMISSION, DEFAULT_TIMINGS, type MetaLogTimings } from "./meta-log-service.ts";

/** The largest BLOB a snapshot chunk row holds (DO SQLite refuses values over about 2 MB). */
export const DEFAULT_SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

export interface MetaLogTuning extends MetaLogTimings, AdmissionLimits {
  /** MAX_STREAMS (table AD); tests lower it on a running log. */
  maxStreams: number;
  /** MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTION_STREAMS and MAX_SUBSCRIPTION_BOOK_BYTES (src/core/subscriptions/limits.ts). */
  maxSubscriptions: number;
  maxSubscriptionStreams: number;
  maxSubscriptionBookBytes: number;
  /** Snapshot once this many entries were appended since the last snapshot. */
  snapshotEveryEntries: number;
  /** Entries kept after a snapshot so watchers a little behind get a delta instead of a full view. */
  watchRetainEntries: number;
  snapshotChunkBytes: number;
  /** The most proposals waiting for a group commit's window to end (group-commit.ts). */
  maxWaitingProposals: number;
}

const DEFAULT_TUNING: MetaLogTuning = {
  ...DEFAULT_TIMINGS,
  ...DEFAULT_ADMISSION,
  maxSubscriptions: DEFAULT_EDGE_LIMITS.maxSubscriptions,
  maxSubscriptionStreams: DEFAULT_EDGE_LIMITS.maxSubscriptionStreams,
  maxSubscriptionBookBytes: DEFAULT_EDGE_LIMITS.maxSubscriptionBookBytes,
  snapshotEveryEntries: 1000,
  watchRetainEntries: 1000,
  snapshotChunkBytes: DEFAULT_SNAPSHOT_CHUNK_BYTES,
  // A window's waiting proposals are the ones in flight from every node at once, each holding a request
  // (a node takes at most MAX_BODY_BYTES_IN_FLIGHT of bodies): far under this, which only a runaway reaches.
  maxWaitingProposals: 10_000,
};

/** The defaults with LEASE_TTL_MS and the bounds of docs/limits.md the deployment's vars set. */
export function metaLogTuning(limits: EdgeLimits, leaseTtlMs: number): MetaLogTuning {
  return {
    ...DEFAULT_TUNING,
    leaseTtlMs,
    maxStreams: limits.maxStreams,
    maxMetaBytes: limits.maxMetaBytes,
    maxSubscriptions: limits.maxSubscriptions,
    maxSubscriptionStreams: limits.maxSubscriptionStreams,
    maxSubscriptionBookBytes: limits.maxSubscriptionBookBytes,
  };
}

/** Whether the log grew enough since the last snapshot to take another. */
export function snapshotDue(version: number, snapshotVersion: number, tuning: MetaLogTuning): boolean {
  return version - snapshotVersion >= tuning.snapshotEveryEntries;
}
