// The metadata state's stream records kept in rows outside the JavaScript heap (the MetaLog's SQLite:
// durable-objects/meta-stream-rows.ts), behind the pure core's StreamTable. Rules read records through it
// and each `with` records a change in a small overlay over the rows, so `apply` stays a function of the
// state it was given; once the log accepted the entry, `persistStreams` writes the overlay into the rows
// (in the entry's transaction) and the state goes on with a table whose overlay is empty. Nothing per
// stream stays in memory: the rows' own cache (SQLite's pages) is the cache.
import { ChunkedMap, forkSourceOf, type StreamRecord, type StreamTable } from "../core/meta/index.ts";

/** The rows of stream records; every call is synchronous (DO SQLite), reads see every earlier write. */
export interface StreamRows {
  get(id: string): StreamRecord | undefined;
  idByName(name: string): string | undefined;
  all(): Iterable<StreamRecord>;
  ownedBy(nodeId: string): Iterable<StreamRecord>;
  /** Ids of the records whose configuration forks from `sourceId`. */
  forksOf(sourceId: string): Iterable<string>;
  /** Names >= `from` in UTF-16 code-unit order. */
  namesFrom(from: string): Iterable<string>;
  /** Inserts or replaces the record with this id; no other row holds its name (the caller made sure). */
  put(record: StreamRecord): void;
  remove(id: string): void;
}

export class StoredStreamTable implements StreamTable {
  /**
   * `rowCount` is how many records the rows hold (kept by the caller: counting rows is a scan);
   * `changes` the records changed since (null: removed), `names` the names changed since (null: freed).
   */
  constructor(
    private readonly rows: StreamRows,
    private readonly rowCount: number,
    private readonly changes: ChunkedMap<StreamRecord | null> = ChunkedMap.empty(),
    private readonly names: ChunkedMap<string | null> = ChunkedMap.empty(),
    private readonly sizeDelta = 0,
  ) {}

  get size(): number {
    return this.rowCount + this.sizeDelta;
  }

  get(id: string): StreamRecord | undefined {
    const changed = this.changes.get(id);
    if (changed !== undefined) return changed ?? undefined;
    return this.rows.get(id);
  }

  idByName(name: string): string | undefined {
    const changed = this.names.get(name);
    if (changed !== undefined) return changed ?? undefined;
    return this.rows.idByName(name);
  }

  *values(): Iterable<StreamRecord> {
    for (const record of this.rows.all()) if (!this.changes.has(record.id)) yield record;
    for (const record of this.changes.values()) if (record !== null) yield record;
  }

  *ownedBy(nodeId: string): Iterable<StreamRecord> {
    for (const record of this.rows.ownedBy(nodeId)) if (!this.changes.has(record.id)) yield record;
    for (const record of this.changes.values()) if (record !== null && record.owner === nodeId) yield record;
  }

  forksFrom(sourceId: string): boolean {
    for (const record of this.changes.values()) if (record !== null && forkSourceOf(record.config) === sourceId) return true;
    for (const id of this.rows.forksOf(sourceId)) if (!this.changes.has(id)) return true;
    return false;
  }

  *namesFrom(from: string): Iterable<string> {
    if (this.names.size === 0) {
      yield* this.rows.namesFrom(from);
      return;
    }
    const added = [...this.names.entries()].filter(([name, id]) => id !== null && name >= from).map(([name]) => name).sort();
    let next = 0;
    for (const name of this.rows.namesFrom(from)) {
      while (next < added.length && added[next]! < name) yield added[next++]!;
      if (added[next] === name) next++;
      if (this.names.get(name) === null) continue;
      yield name;
    }
    while (next < added.length) yield added[next++]!;
  }

  with(id: string, next: StreamRecord | null): StoredStreamTable {
    const previous = this.get(id);
    let { names } = this;
    if (previous !== undefined && (next === null || next.name !== previous.name)) names = names.set(previous.name, null);
    if (next !== null && (previous === undefined || next.name !== previous.name)) names = names.set(next.name, id);
    const sizeDelta = this.sizeDelta - (previous === undefined ? 0 : 1) + (next === null ? 0 : 1);
    return new StoredStreamTable(this.rows, this.rowCount, this.changes.set(id, next), names, sizeDelta);
  }

  /** Whether this table reads `rows` (a state built on other rows, or in memory, cannot be persisted here). */
  isOver(rows: StreamRows): boolean {
    return this.rows === rows;
  }

  /**
   * Writes the changes into the rows. Removals go first; a name the rows still give to another record
   * is one this overlay freed (that record was removed or renamed here, and is written again below with
   * its new name if it stays), so that record's row goes before the name is taken.
   */
  persist(): StoredStreamTable {
    if (this.changes.size === 0) return this;
    for (const [id, record] of this.changes.entries()) if (record === null) this.rows.remove(id);
    for (const record of this.changes.values()) {
      if (record === null) continue;
      const holder = this.rows.idByName(record.name);
      if (holder !== undefined && holder !== record.id) this.rows.remove(holder);
      this.rows.put(record);
    }
    return new StoredStreamTable(this.rows, this.size);
  }
}
