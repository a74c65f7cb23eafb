// The MetaLog's tables kept in memory (src/metadata/meta-log-persistence.ts's port), for running the stored
// log (stored-state.ts, stored-stream-table.ts) in the node test tier: entries, the state's head, the
// snapshot of the rest, and stream rows (memory-stream-rows.ts). `transact` only runs the write: nothing
// here fails halfway (SQLite's rollback is the workers tests' to show).
import type { LogEntry, PendingTransfer, Touched } from "../../src/core/meta/index.ts";
import type { MetaLogTables } from "../../src/metadata/meta-log-persistence.ts";
import type { StateHead } from "../../src/metadata/stored-state.ts";
import { MemoryStreamRows } from "./memory-stream-rows.ts";

export class MemoryMetaLogTables implements MetaLogTables {
  readonly streamRows = new MemoryStreamRows();
  readonly entries: { entry: LogEntry; touched: Touched }[] = [];
  private head: StateHead | null = null;
  private snapshot: { version: number; text: string } | null = null;
  private readonly transfers = new Map<string, PendingTransfer>();

  readHead(): StateHead | null {
    return this.head;
  }

  writeHead(head: StateHead): void {
    this.head = head;
  }

  readSnapshot(): { version: number; text: string } | null {
    return this.snapshot;
  }

  writeSnapshot(version: number, text: string): void {
    this.snapshot = { version, text };
  }

  readTransfers(): Iterable<readonly [string, PendingTransfer]> {
    return [...this.transfers];
  }

  writeTransfer(streamId: string, transfer: PendingTransfer | null): void {
    if (transfer === null) this.transfers.delete(streamId);
    else this.transfers.set(streamId, transfer);
  }

  entriesAfter(version: number): Iterable<LogEntry> {
    return this.entries.filter(({ entry }) => entry.index > version).map(({ entry }) => entry);
  }

  append(entry: LogEntry, touched: Touched): void {
    this.entries.push({ entry, touched });
  }

  touchedBetween(since: number, upTo: number): Touched[] | null {
    const kept = this.entries.filter(({ entry }) => entry.index > since && entry.index <= upTo);
    return kept.length === upTo - since ? kept.map(({ touched }) => touched) : null;
  }

  pruneThrough(index: number): void {
    this.entries.splice(0, this.entries.filter(({ entry }) => entry.index <= index).length);
  }

  transact<T>(write: () => T): T {
    return write();
  }
}
