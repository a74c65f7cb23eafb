// Bucket tablets in the StreamNode Durable Object's SQLite database; this module owns the two tables:
//   tablet_rows   every bucket's rows: stream id, encoded key, row as JSON text (keyed by both, no rowid)
//   tablet_marks  one row per stored tablet: its mark and its row count (kept here so count() reads one row)
// A tablet exists while its mark row does; rows and mark change together in transactionSync.
import type { Row } from "../src/core/tables/changelog.ts";
import { checkedKey, pagedEntries, type BucketTablet, type TabletChanges, type TabletMark, type TabletStorage } from "../src/ports/tablet-storage.ts";

/**
 * Rows one statement sets: 3 bound values each, within the 100 bound parameters a Durable Object's SQL
 * statement takes. A restore of a million rows is then some 31,000 upserts and counts, not a million of each.
 */
const ROWS_PER_STATEMENT = 32;

/** Above every printable-ASCII character: `k < prefix || KEY_CEILING` bounds a prefix scan's range. */
const KEY_CEILING = "\x7f";

/** The parts of a Durable Object's storage a tablet uses (`ctx.storage`). */
export type TabletSqlStorage = Pick<DurableObjectStorage, "sql" | "transactionSync">;

interface MarkRow extends Record<string, SqlStorageValue> {
  applied_offset: number;
  applied_position: number;
  row_count: number;
}

export class SqliteTabletStorage implements TabletStorage {
  constructor(private readonly storage: TabletSqlStorage) {
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS tablet_rows (
      stream_id TEXT NOT NULL,
      k TEXT NOT NULL,
      v TEXT NOT NULL,
      PRIMARY KEY (stream_id, k)
    ) WITHOUT ROWID`);
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS tablet_marks (
      stream_id TEXT PRIMARY KEY,
      applied_offset INTEGER NOT NULL,
      applied_position INTEGER NOT NULL,
      row_count INTEGER NOT NULL
    )`);
  }

  open(streamId: string): BucketTablet {
    return new SqliteBucketTablet(this.storage, streamId);
  }

  streamIds(): string[] {
    return this.storage.sql
      .exec<{ stream_id: string }>("SELECT stream_id FROM tablet_marks ORDER BY stream_id")
      .toArray()
      .map((row) => row.stream_id);
  }
}

class SqliteBucketTablet implements BucketTablet {
  private readonly sql: SqlStorage;

  constructor(
    private readonly storage: TabletSqlStorage,
    private readonly streamId: string,
  ) {
    this.sql = storage.sql;
  }

  mark(): TabletMark | null {
    const row = this.markRow();
    return row === null ? null : { appliedOffset: row.applied_offset, appliedPosition: row.applied_position };
  }

  get(key: string): Row | undefined {
    const rows = this.sql.exec<{ v: string }>("SELECT v FROM tablet_rows WHERE stream_id = ? AND k = ?", this.streamId, key).toArray();
    const text = rows[0]?.v;
    return text === undefined ? undefined : (JSON.parse(text) as Row);
  }

  /** `set` first, then `remove`: a key named in both ends removed. */
  apply(changes: TabletChanges, mark: TabletMark): void {
    this.storage.transactionSync(() => {
      let rowCount = this.markRow()?.row_count ?? 0;
      // The last value of a key named twice wins, as applying the changes one by one would have it.
      const latest = new Map<string, string>();
      for (const [key, row] of changes.set) latest.set(checkedKey(key), JSON.stringify(row));
      const entries = [...latest];
      for (let start = 0; start < entries.length; start += ROWS_PER_STATEMENT) {
        rowCount += this.upsertRows(entries.slice(start, start + ROWS_PER_STATEMENT));
      }
      for (const key of changes.remove) {
        if (this.deleteRow(checkedKey(key))) rowCount--;
      }
      this.writeMark(mark, rowCount);
    });
  }

  scan(prefix: string, after: string | null, limit: number): { key: string; row: Row }[] {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError("a scan limit is a non-negative integer");
    // A negative LIMIT means no limit to SQLite: the check above keeps that out.
    const fromAfter = after !== null && after >= prefix;
    const query = `SELECT k, v FROM tablet_rows WHERE stream_id = ? AND k ${fromAfter ? ">" : ">="} ? AND k < ? ORDER BY k LIMIT ?`;
    return this.sql
      .exec<{ k: string; v: string }>(query, this.streamId, fromAfter ? after : prefix, prefix + KEY_CEILING, limit)
      .toArray()
      .map((row) => ({ key: row.k, row: JSON.parse(row.v) as Row }));
  }

  count(): number {
    return this.markRow()?.row_count ?? 0;
  }

  entries(): Iterable<readonly [key: string, row: Row]> {
    return pagedEntries((prefix, after, limit) => this.scan(prefix, after, limit));
  }

  replace(rows: Iterable<readonly [key: string, row: Row]>, mark: TabletMark): void {
    this.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM tablet_rows WHERE stream_id = ?", this.streamId);
      let chunk = new Map<string, string>();
      for (const [key, row] of rows) {
        chunk.set(checkedKey(key), JSON.stringify(row));
        if (chunk.size === ROWS_PER_STATEMENT) {
          this.upsertRows([...chunk]);
          chunk = new Map();
        }
      }
      if (chunk.size > 0) this.upsertRows([...chunk]);
      // Once per restore, so counting here is cheaper than checking each key for a duplicate.
      const rowCount = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tablet_rows WHERE stream_id = ?", this.streamId).one().n;
      this.writeMark(mark, rowCount);
    });
  }

  drop(): void {
    this.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM tablet_rows WHERE stream_id = ?", this.streamId);
      this.sql.exec("DELETE FROM tablet_marks WHERE stream_id = ?", this.streamId);
    });
  }

  private markRow(): MarkRow | null {
    const rows = this.sql
      .exec<MarkRow>("SELECT applied_offset, applied_position, row_count FROM tablet_marks WHERE stream_id = ?", this.streamId)
      .toArray();
    return rows[0] ?? null;
  }

  private writeMark(mark: TabletMark, rowCount: number): void {
    this.sql.exec(
      `INSERT INTO tablet_marks (stream_id, applied_offset, applied_position, row_count) VALUES (?, ?, ?, ?)
       ON CONFLICT (stream_id) DO UPDATE SET
         applied_offset = excluded.applied_offset, applied_position = excluded.applied_position, row_count = excluded.row_count`,
      this.streamId,
      mark.appliedOffset,
      mark.appliedPosition,
      rowCount,
    );
  }

  /** Sets up to ROWS_PER_STATEMENT rows of distinct keys in two statements; answers how many keys were new. */
  private upsertRows(rows: readonly (readonly [key: string, text: string])[]): number {
    const keys = rows.map(([key]) => key);
    const existing = this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM tablet_rows WHERE stream_id = ? AND k IN (${keys.map(() => "?").join(", ")})`, this.streamId, ...keys)
      .one().n;
    this.sql.exec(
      `INSERT INTO tablet_rows (stream_id, k, v) VALUES ${rows.map(() => "(?, ?, ?)").join(", ")} ON CONFLICT (stream_id, k) DO UPDATE SET v = excluded.v`,
      ...rows.flatMap(([key, text]) => [this.streamId, key, text]),
    );
    return rows.length - existing;
  }

  /** True when the key was there. */
  private deleteRow(key: string): boolean {
    return this.sql.exec("DELETE FROM tablet_rows WHERE stream_id = ? AND k = ? RETURNING k", this.streamId, key).toArray().length > 0;
  }
}

