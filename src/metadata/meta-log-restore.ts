// What a restarting MetaLog holds, and what it reports about itself, whatever keeps its log.
import { decodeSnapshot, emptyState, replay, type LogEntry, type MetaState } from "../core/meta/index.ts";
import type { LogStats, MetaLogStats, ProposalCounts, SnapshotInfo } from "../ports/meta-log-client.ts";
import type { MetaLogService } from "./meta-log-service.ts";

/**
 * The latest snapshot (or the empty state), then every entry after it through the strict `replay`.
 * `snapshotVersion` is the snapshot's version, from which the next snapshot is counted.
 */
export function restoreState(
  snapshot: { readonly version: number; readonly text: string } | null,
  entriesAfter: (version: number) => Iterable<LogEntry>,
): { readonly state: MetaState; readonly snapshotVersion: number } {
  const base = snapshot === null ? emptyState() : decodeSnapshot(snapshot.text);
  if (snapshot !== null && base.version !== snapshot.version) throw new Error("metadata snapshot version mismatch");
  return { state: replay(base, entriesAfter(base.version)), snapshotVersion: base.version };
}

/** `stats()`: the state's counts and the bytes the memory budgets count, with the storage's figures. */
export function metaLogStats(
  log: MetaLogService,
  held: { readonly subscriptionBytes: number; readonly log: LogStats; readonly snapshot: SnapshotInfo | null; readonly proposals: ProposalCounts },
): MetaLogStats {
  const { state } = log;
  return {
    version: state.version,
    nodes: state.nodes.size,
    streams: state.streams.size,
    pendingTransfers: state.transfers.size,
    coordinatorEpoch: state.lease?.coordinatorEpoch ?? 0,
    takeoversPending: [...state.nodes.values()].filter((node) => node.dead !== undefined).length,
    ...log.failoverCounts,
    metaBytes: log.metaBytesHeld,
    ...held,
  };
}
