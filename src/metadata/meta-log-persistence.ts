// The metadata log over the tables that keep it, wherever they are: opened from the latest snapshot and the
// entries after it, each accepted entry journaled before it is visible, and a snapshot taken once enough
// entries followed the last (the older entries then pruned, but for a tail that watchers a little behind
// still read as a delta). The MetaLog Durable Object implements the port over SQLite (meta-log-store.ts).
import { encodeSnapshot, type LogEntry, type MetaState, type Touched } from "../core/meta/index.ts";
import { workerLog } from "../log/logger.ts";
import { MetaLogService } from "./meta-log-service.ts";
import { restoreState } from "./meta-log-restore.ts";
import { snapshotDue, type MetaLogTuning } from "./meta-log-tuning.ts";

/** Where the log and its snapshot are kept. Every call is synchronous; each write is atomic. */
export interface MetaLogTables {
  readSnapshot(): { readonly version: number; readonly text: string } | null;
  entriesAfter(version: number): Iterable<LogEntry>;
  append(entry: LogEntry, touched: Touched): void;
  /** What the entries after `since` up to `upTo` touched, or null when they are no longer retained. */
  touchedBetween(since: number, upTo: number): Touched[] | null;
  /** The snapshot at `version` replaces the last one, and the entries through `pruneThrough` go. */
  replaceSnapshot(version: number, text: string, pruneThrough: number): void;
}

/** The log as the tables hold it (snapshot, then replay), journaling to them and snapshotting on cadence. */
export function openMetaLog(tables: MetaLogTables, tuning: MetaLogTuning, now: () => number): MetaLogService {
  const { state, snapshotVersion } = restoreState(tables.readSnapshot(), (version) => tables.entriesAfter(version));
  let snapshotAt = snapshotVersion;
  const journal = {
    append: (entry: LogEntry, touched: Touched) => tables.append(entry, touched),
    touchedBetween: (since: number, upTo: number) => tables.touchedBetween(since, upTo),
    afterAppend: (next: MetaState) => {
      if (snapshotDue(next.version, snapshotAt, tuning) && snapshot(tables, next, tuning)) snapshotAt = next.version;
    },
  };
  return new MetaLogService(state, journal, { now, timings: tuning, admission: tuning });
}

/** Writes a snapshot of `state`; false when it failed (the log keeps every entry, the next change retries). */
function snapshot(tables: MetaLogTables, state: MetaState, tuning: MetaLogTuning): boolean {
  const { version } = state;
  // The entry that triggered this is already durable: a failed snapshot must not fail the proposal. The
  // write is atomic, so it leaves the previous snapshot and the whole log in place.
  try {
    tables.replaceSnapshot(version, encodeSnapshot(state), version - tuning.watchRetainEntries);
    return true;
  } catch (error) {
    // The log keeps every entry: nothing is lost, it only grows until a snapshot lands.
    workerLog.log("meta_log.error", { during: "snapshot", version }, error);
    return false;
  }
}
