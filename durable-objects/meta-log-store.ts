// The MetaLog's SQLite tables of its log; this module is their only owner (schema, reads, writes). The
// stream records and the state's head are meta-stream-rows.ts's.
//   meta_log             one row per accepted change: index, command (JSON), time, touched records (JSON)
//   meta_snapshot        the snapshot of the state but its streams: version, chunk count, byte size (one row)
//   meta_snapshot_chunk  the snapshot text as UTF-8 in BLOB rows of at most chunkBytes (DO SQLite refuses
//                        values over about 2 MB: SQLITE_TOOBIG)
// Every method is synchronous; the caller groups an entry's writes with `transact` (ctx.storage.transactionSync).
import type { Command, LogEntry, PendingTransfer, Touched } from "../src/core/meta/index.ts";
import type { MetaLogTables } from "../src/metadata/meta-log-persistence.ts";
import type { StateHead } from "../src/metadata/stored-state.ts";
import { MetaStreamRows } from "./meta-stream-rows.ts";

import type { LogStats, SnapshotInfo } from "../src/ports/meta-log-client.ts";
import { DEFAULT_SNAPSHOT_CHUNK_BYTES } from "../src/metadata/meta-log-tuning.ts";

export class MetaLogStore implements MetaLogTables {
  readonly streamRows: MetaStreamRows;

  constructor(
    private readonly sql: SqlStorage,
    private readonly chunkBytes: number = DEFAULT_SNAPSHOT_CHUNK_BYTES,
    readonly transact: <T>(write: () => T) => T = (write) => write(),
  ) {
    this.streamRows = new MetaStreamRows(sql);
  }

  migrate(): void {
    this.streamRows.migrate();
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta_log (
      idx INTEGER PRIMARY KEY,
      command TEXT NOT NULL,
      now_ms INTEGER NOT NULL,
      touched TEXT NOT NULL
    )`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta_snapshot (
      version INTEGER PRIMARY KEY,
      chunks INTEGER NOT NULL,
      bytes INTEGER NOT NULL
    )`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta_snapshot_chunk (
      version INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (version, seq)
    )`);
  }

  append(entry: LogEntry, touched: Touched): void {
    const row = [entry.index, JSON.stringify(entry.command), entry.nowMs, JSON.stringify(touched)];
    // One statement is atomic on its own: a transaction around it only cost a savepoint per entry.
    this.sql.exec("INSERT INTO meta_log (idx, command, now_ms, touched) VALUES (?, ?, ?, ?)", ...row);
  }

  /** Entries after `index`, in order. */
  *entriesAfter(index: number): IterableIterator<LogEntry> {
    const cursor = this.sql.exec<{ idx: number; command: string; now_ms: number }>(
      "SELECT idx, command, now_ms FROM meta_log WHERE idx > ? ORDER BY idx",
      index,
    );
    for (const row of cursor) {
      yield { index: row.idx, command: JSON.parse(row.command) as Command, nowMs: row.now_ms };
    }
  }

  /** The touched sets of entries (since, upTo], or null when some of them are no longer retained. */
  touchedBetween(since: number, upTo: number): Touched[] | null {
    const rows = this.sql
      .exec<{ touched: string }>("SELECT touched FROM meta_log WHERE idx > ? AND idx <= ? ORDER BY idx", since, upTo)
      .toArray();
    if (rows.length !== upTo - since) return null;
    return rows.map((row) => JSON.parse(row.touched) as Touched);
  }

  logStats(): LogStats {
    const row = this.sql
      .exec<{ entries: number; oldest: number | null; newest: number | null }>(
        "SELECT COUNT(*) AS entries, MIN(idx) AS oldest, MAX(idx) AS newest FROM meta_log",
      )
      .one();
    return { entries: row.entries, oldest: row.oldest, newest: row.newest };
  }

  /** Drops entries at or below `index` (they are covered by a snapshot and no longer needed by watchers). */
  pruneThrough(index: number): void {
    this.sql.exec("DELETE FROM meta_log WHERE idx <= ?", index);
  }

  snapshotInfo(): SnapshotInfo | null {
    const rows = this.sql
      .exec<{ version: number; chunks: number; bytes: number }>("SELECT version, chunks, bytes FROM meta_snapshot ORDER BY version DESC LIMIT 1")
      .toArray();
    return rows[0] ?? null;
  }

  readHead(): StateHead | null {
    return this.streamRows.readHead();
  }

  readTransfers(): Iterable<readonly [string, PendingTransfer]> {
    return this.streamRows.readTransfers();
  }

  writeTransfer(streamId: string, transfer: PendingTransfer | null): void {
    this.streamRows.writeTransfer(streamId, transfer);
  }

  writeHead(head: StateHead): void {
    this.streamRows.writeHead(head);
  }

  /** Replaces the snapshot with `text` at `version`, split into BLOB rows of at most chunkBytes. */
  writeSnapshot(version: number, text: string): SnapshotInfo {
    const bytes = new TextEncoder().encode(text);
    this.sql.exec("DELETE FROM meta_snapshot_chunk");
    this.sql.exec("DELETE FROM meta_snapshot");
    let chunks = 0;
    for (let offset = 0; offset < bytes.length || chunks === 0; offset += this.chunkBytes) {
      const chunk = bytes.slice(offset, offset + this.chunkBytes);
      this.sql.exec("INSERT INTO meta_snapshot_chunk (version, seq, data) VALUES (?, ?, ?)", version, chunks, chunk.buffer);
      chunks++;
    }
    this.sql.exec("INSERT INTO meta_snapshot (version, chunks, bytes) VALUES (?, ?, ?)", version, chunks, bytes.length);
    return { version, chunks, bytes: bytes.length };
  }

  /** The latest snapshot's text, reassembled and checked against its recorded size. */
  readSnapshot(): { version: number; text: string } | null {
    const info = this.snapshotInfo();
    if (info === null) return null;
    const rows = this.sql
      .exec<{ seq: number; data: ArrayBuffer }>("SELECT seq, data FROM meta_snapshot_chunk WHERE version = ? ORDER BY seq", info.version)
      .toArray();
    if (rows.length !== info.chunks) throw new Error(`metadata snapshot ${info.version}: ${rows.length} of ${info.chunks} chunks`);
    const bytes = new Uint8Array(info.bytes);
    let offset = 0;
    for (const row of rows) {
      const chunk = new Uint8Array(row.data);
      if (offset + chunk.length > bytes.length) throw new Error(`metadata snapshot ${info.version}: more bytes than recorded`);
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    if (offset !== info.bytes) throw new Error(`metadata snapshot ${info.version}: ${offset} of ${info.bytes} bytes`);
    return { version: info.version, text: new TextDecoder().decode(bytes) };
  }
}
