// The MetaLog's stream records and the head of its state in SQLite; this module is their only owner.
//   meta_stream  one row per stream record: id, name (as its UTF-16 code units, big-endian, so SQLite's
//                byte order is the listing's code-unit order), owner, fork source, the record as JSON;
//                indexed by name (unique), by owner and by fork source
//   meta_transfer  the pending transfers: stream id, source, target
//   meta_head    one row: the state's version, next stream number, stream count, meta bytes, per-node
//                assigned and owned counts, and the version of the snapshot that holds the rest of the state
// Every method is synchronous and runs inside the caller's transaction (meta-log-persistence.ts).
import type { OwnedCounts, PendingTransfer, StreamRecord } from "../src/core/meta/index.ts";
import { forkSourceOf } from "../src/core/meta/index.ts";
import type { StateHead } from "../src/metadata/stored-state.ts";
import type { StreamRows } from "../src/metadata/stored-stream-table.ts";

/** Rows a scan reads at once. */
const PAGE_ROWS = 256;

export class MetaStreamRows implements StreamRows {
  constructor(private readonly sql: SqlStorage) {}

  migrate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta_stream (
      id TEXT PRIMARY KEY,
      name_key BLOB NOT NULL UNIQUE,
      owner TEXT,
      fork_source TEXT,
      record TEXT NOT NULL
    ) WITHOUT ROWID`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS meta_stream_owner ON meta_stream (owner) WHERE owner IS NOT NULL");
    this.sql.exec("CREATE INDEX IF NOT EXISTS meta_stream_fork ON meta_stream (fork_source) WHERE fork_source IS NOT NULL");
    this.sql.exec("CREATE TABLE IF NOT EXISTS meta_transfer (stream_id TEXT PRIMARY KEY, source TEXT NOT NULL, target TEXT NOT NULL) WITHOUT ROWID");
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta_head (
      one INTEGER PRIMARY KEY CHECK (one = 1),
      version INTEGER NOT NULL,
      next_stream_seq INTEGER NOT NULL,
      streams INTEGER NOT NULL,
      meta_bytes INTEGER NOT NULL,
      assigned TEXT NOT NULL,
      owned TEXT NOT NULL,
      rest_version INTEGER NOT NULL
    )`);
  }

  get(id: string): StreamRecord | undefined {
    const row = this.sql.exec<{ record: string }>("SELECT record FROM meta_stream WHERE id = ?", id).toArray()[0];
    return row === undefined ? undefined : (JSON.parse(row.record) as StreamRecord);
  }

  idByName(name: string): string | undefined {
    return this.sql.exec<{ id: string }>("SELECT id FROM meta_stream WHERE name_key = ?", nameKey(name)).toArray()[0]?.id;
  }

  all(): Iterable<StreamRecord> {
    return this.recordsPaged("", "SELECT id, record FROM meta_stream WHERE id > ? ORDER BY id LIMIT ?");
  }

  ownedBy(nodeId: string): Iterable<StreamRecord> {
    return this.recordsPaged(nodeId, "SELECT id, record FROM meta_stream WHERE owner = ? AND id > ? ORDER BY id LIMIT ?");
  }

  *forksOf(sourceId: string): Iterable<string> {
    for (const row of this.sql.exec<{ id: string }>("SELECT id FROM meta_stream WHERE fork_source = ?", sourceId)) yield row.id;
  }

  *namesFrom(from: string): Iterable<string> {
    // A page at a time: a listing reads its page and stops, whatever the number of names after it.
    let after: ArrayBuffer | null = null;
    for (;;) {
      const rows: { name_key: ArrayBuffer }[] =
        after === null
          ? this.sql.exec<{ name_key: ArrayBuffer }>("SELECT name_key FROM meta_stream WHERE name_key >= ? ORDER BY name_key LIMIT ?", nameKey(from), PAGE_ROWS).toArray()
          : this.sql.exec<{ name_key: ArrayBuffer }>("SELECT name_key FROM meta_stream WHERE name_key > ? ORDER BY name_key LIMIT ?", after, PAGE_ROWS).toArray();
      for (const row of rows) yield nameOf(row.name_key);
      if (rows.length < PAGE_ROWS) return;
      after = rows.at(-1)!.name_key;
    }
  }

  /** Records by id, a page at a time (a scan never holds more than one page in memory); `key` first if not "". */
  private *recordsPaged(key: string, query: string): Iterable<StreamRecord> {
    let after = "";
    for (;;) {
      const bindings = key === "" ? [after, PAGE_ROWS] : [key, after, PAGE_ROWS];
      const rows = this.sql.exec<{ id: string; record: string }>(query, ...bindings).toArray();
      for (const row of rows) yield JSON.parse(row.record) as StreamRecord;
      if (rows.length < PAGE_ROWS) return;
      after = rows.at(-1)!.id;
    }
  }

  put(record: StreamRecord): void {
    this.sql.exec(
      `INSERT INTO meta_stream (id, name_key, owner, fork_source, record) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET name_key = excluded.name_key, owner = excluded.owner,
         fork_source = excluded.fork_source, record = excluded.record`,
      record.id,
      nameKey(record.name),
      record.owner,
      forkSourceOf(record.config),
      JSON.stringify(record),
    );
  }

  remove(id: string): void {
    this.sql.exec("DELETE FROM meta_stream WHERE id = ?", id);
  }

  *readTransfers(): Iterable<readonly [string, PendingTransfer]> {
    const rows = this.sql.exec<{ stream_id: string; source: string; target: string }>("SELECT stream_id, source, target FROM meta_transfer");
    for (const row of rows) yield [row.stream_id, { source: row.source, target: row.target }];
  }

  writeTransfer(streamId: string, transfer: PendingTransfer | null): void {
    if (transfer === null) this.sql.exec("DELETE FROM meta_transfer WHERE stream_id = ?", streamId);
    else this.sql.exec("INSERT OR REPLACE INTO meta_transfer (stream_id, source, target) VALUES (?, ?, ?)", streamId, transfer.source, transfer.target);
  }

  readHead(): StateHead | null {
    const row = this.sql
      .exec<{ version: number; next_stream_seq: number; streams: number; meta_bytes: number; assigned: string; owned: string; rest_version: number }>(
        "SELECT version, next_stream_seq, streams, meta_bytes, assigned, owned, rest_version FROM meta_head",
      )
      .toArray()[0];
    if (row === undefined) return null;
    const assigned = JSON.parse(row.assigned) as [string, number][];
    const owned = JSON.parse(row.owned) as [string, OwnedCounts][];
    return { version: row.version, nextStreamSeq: row.next_stream_seq, streams: row.streams, metaBytes: row.meta_bytes, assigned, owned, restVersion: row.rest_version };
  }

  writeHead(head: StateHead): void {
    this.sql.exec(
      `INSERT INTO meta_head (one, version, next_stream_seq, streams, meta_bytes, assigned, owned, rest_version) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (one) DO UPDATE SET version = excluded.version, next_stream_seq = excluded.next_stream_seq, streams = excluded.streams,
         meta_bytes = excluded.meta_bytes, assigned = excluded.assigned, owned = excluded.owned, rest_version = excluded.rest_version`,
      head.version,
      head.nextStreamSeq,
      head.streams,
      head.metaBytes,
      JSON.stringify(head.assigned),
      JSON.stringify(head.owned),
      head.restVersion,
    );
  }
}

/** A name as its UTF-16 code units, big-endian: byte order is code-unit order (the listing's, table LS). */
function nameKey(name: string): ArrayBuffer {
  const bytes = new Uint8Array(name.length * 2);
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    bytes[2 * i] = unit >>> 8;
    bytes[2 * i + 1] = unit & 0xff;
  }
  return bytes.buffer;
}

function nameOf(key: ArrayBuffer): string {
  const bytes = new Uint8Array(key);
  let name = "";
  for (let i = 0; i + 1 < bytes.length; i += 2) name += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
  return name;
}
