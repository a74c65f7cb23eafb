// The metadata log over the tables that keep it, wherever they are: the state as stored-state.ts keeps
// it (stream records in rows, read as they are needed), each accepted entry journaled with the records it
// changed in one transaction before it is visible, and the older entries pruned once enough followed (but
// for a tail that watchers a little behind still read as a delta). The MetaLog Durable Object implements
// the port over SQLite (meta-log-store.ts, meta-stream-rows.ts).
import { metaBytesOf, type LogEntry, type Touched } from "../core/meta/index.ts";
import { MetaLogService } from "./meta-log-service.ts";
import { restoreState } from "./meta-log-restore.ts";
import { StoredState, type StateTables } from "./stored-state.ts";
import { snapshotDue, type MetaLogTuning } from "./meta-log-tuning.ts";

/** Where the log and the state are kept. Every call is synchronous. */
export interface MetaLogTables extends StateTables {
  entriesAfter(version: number): Iterable<LogEntry>;
  append(entry: LogEntry, touched: Touched): void;
  /** What the entries after `since` up to `upTo` touched, or null when they are no longer retained. */
  touchedBetween(since: number, upTo: number): Touched[] | null;
  /** Drops the entries at or below `index`. */
  pruneThrough(index: number): void;
  /** Runs `write` as one transaction: all of its writes land, or none. */
  transact<T>(write: () => T): T;
}

/** The log as the tables hold it, journaling each entry and its state changes to them. */
export function openMetaLog(tables: MetaLogTables, tuning: MetaLogTuning, now: () => number): MetaLogService {
  // A log kept the old way (a snapshot of the whole state, then entries) is replayed once and stored.
  const restore = () => restoreState(tables.readSnapshot(), (version) => tables.entriesAfter(version)).state;
  const { stored, state, metaBytes } = tables.transact(() => StoredState.open(tables, restore, metaBytesOf));
  let prunedAt = state.version;
  const journal = {
    append: (entry: LogEntry, touched: Touched, next: Parameters<StoredState["commit"]>[0], bytes: number) =>
      tables.transact(() => {
        tables.append(entry, touched);
        const kept = stored.commit(next, bytes, touched.streams ?? []);
        if (snapshotDue(entry.index, prunedAt, tuning)) {
          tables.pruneThrough(entry.index - tuning.watchRetainEntries);
          prunedAt = entry.index;
        }
        return kept;
      }),
    touchedBetween: (since: number, upTo: number) => tables.touchedBetween(since, upTo),
  };
  return new MetaLogService(state, journal, { now, timings: tuning, admission: tuning, metaBytes });
}
