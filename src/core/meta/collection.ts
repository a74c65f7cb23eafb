// Which streams' objects the coordinator's collection loop may delete (docs/architecture.md, "collecting the
// objects of deleted streams"): a pure function of the state and the stream ids found in the object store.
import type { MetaState } from "./state.ts";

/** Stream ids are `s<n>`; the number orders them (a fork's source always has a lower one). */
function seqOf(streamId: string): number | null {
  const match = /^s(\d+)$/.exec(streamId);
  return match === null ? null : Number(match[1]);
}


export interface Collection {
  /** Deleted streams nothing in the log reads: their objects may go. */
  readonly collect: readonly string[];
  /**
   * Deleted streams a stream in the log forks from: kept. Their own sources (a chain of deleted sources)
   * are only in their manifests' sessions, so the caller keeps those too.
   */
  readonly keptSources: readonly string[];
}

/**
 * Table GC — a stream id found in the object store:
 * | row | condition                                              | result                             |
 * | GC1 | a stream of the log, or a bucket stream of a table     | kept                               |
 * | GC2 | not an id the log issued (`s<n>`, n < nextStreamSeq)   | kept (not ours, or a create under way) |
 * | GC3 | the fork source of a stream of the log                 | kept (keptSources)                 |
 * | GC4 | otherwise (deleted, nothing in the log reads it)       | collect                            |
 */
export function collectableStreams(state: MetaState, streamIds: readonly string[]): Collection {
  const bucketStreams = new Set<string>();
  for (const table of state.tables.values()) for (const bucket of table.buckets) bucketStreams.add(bucket.streamId);
  const collect: string[] = [];
  const keptSources: string[] = [];
  for (const id of new Set(streamIds)) {
    const seq = seqOf(id);
    if (state.streams.get(id) !== undefined || bucketStreams.has(id) || seq === null || seq >= state.nextStreamSeq) continue;
    if (state.streams.forksFrom(id)) keptSources.push(id);
    else collect.push(id);
  }
  return { collect, keptSources };
}
