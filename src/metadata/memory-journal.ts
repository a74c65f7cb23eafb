// A metadata log journal kept in memory: the entries and what each touched, for the node test tier and
// the simulation (and anything else that runs a MetaLogService without SQLite). `entries` is the log
// itself, so a test can replay it into a new service (a MetaLog restart).
import type { LogEntry, MetaState, Touched } from "../core/meta/index.ts";
import type { MetaLogJournal } from "./meta-log-service.ts";

export class MemoryJournal implements MetaLogJournal {
  readonly entries: LogEntry[] = [];
  private readonly touched: Touched[] = [];

  append(entry: LogEntry, touched: Touched, next: MetaState): MetaState {
    const expected = (this.entries.at(-1)?.index ?? 0) + 1;
    if (this.entries.length > 0 && entry.index !== expected) throw new Error(`journal gap: entry ${entry.index} after ${expected - 1}`);
    this.entries.push(entry);
    this.touched.push(touched);
    return next;
  }

  touchedBetween(since: number, upTo: number): Touched[] | null {
    const first = this.entries[0]?.index;
    if (first === undefined || since + 1 < first) return null;
    return this.touched.slice(since + 1 - first, upTo + 1 - first);
  }
}
