// The stream records of the metadata state behind the reads the rules make and the one write they make, so
// the records can live in a persistent in-memory map (the simulation, the node tier, snapshots: here) or in
// the MetaLog's SQLite tables (src/metadata/stored-stream-table.ts) without the rules knowing which. A table
// is a value: `with` returns a new table and leaves this one as it was.
import { ChunkedMap } from "./chunked-map.ts";
import type { StreamRecord } from "./stream-record.ts";

export interface StreamTable {
  readonly size: number;
  get(id: string): StreamRecord | undefined;
  idByName(name: string): string | undefined;
  /** Every record: a full scan (snapshots, rebalance plans, tests), never on a request's path. */
  values(): Iterable<StreamRecord>;
  /** The records whose owner is `nodeId`, in any ownership (drains, failover plans, a node's start). */
  ownedBy(nodeId: string): Iterable<StreamRecord>;
  /** Whether some record's configuration forks from the stream `sourceId` (table GC). */
  forksFrom(sourceId: string): boolean;
  /** Every name >= `from`, in code-unit order (the listing, table LS). */
  namesFrom(from: string): Iterable<string>;
  /** The table with the record `id` replaced by `next`, or removed when `next` is null. */
  with(id: string, next: StreamRecord | null): StreamTable;
}

/** The source a stream's configuration names (`fork.sourceStreamId`), if it is a fork. */
export function forkSourceOf(config: unknown): string | null {
  if (typeof config !== "object" || config === null) return null;
  const fork = (config as { fork?: unknown }).fork;
  if (typeof fork !== "object" || fork === null) return null;
  const source = (fork as { sourceStreamId?: unknown }).sourceStreamId;
  return typeof source === "string" ? source : null;
}

/** The in-memory table: two persistent maps (records by id, ids by name); scans walk every record. */
export class MemoryStreamTable implements StreamTable {
  /** The names in code-unit order, sorted at the first listing of this (immutable) table. */
  private sortedNames: string[] | null = null;

  private constructor(
    private readonly byId: ChunkedMap<StreamRecord>,
    private readonly idsByName: ChunkedMap<string>,
  ) {}

  static empty(): MemoryStreamTable {
    return new MemoryStreamTable(ChunkedMap.empty(), ChunkedMap.empty());
  }

  /** Built in one pass (snapshot decode); null when two records share an id or a name. */
  static of(records: readonly StreamRecord[]): MemoryStreamTable | null {
    const byId = ChunkedMap.fromEntries(records.map((record) => [record.id, record] as const));
    const idsByName = ChunkedMap.fromEntries(records.map((record) => [record.name, record.id] as const));
    if (byId.size !== records.length || idsByName.size !== records.length) return null;
    return new MemoryStreamTable(byId, idsByName);
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): StreamRecord | undefined {
    return this.byId.get(id);
  }

  idByName(name: string): string | undefined {
    return this.idsByName.get(name);
  }

  values(): Iterable<StreamRecord> {
    return this.byId.values();
  }

  *ownedBy(nodeId: string): Iterable<StreamRecord> {
    for (const record of this.byId.values()) if (record.owner === nodeId) yield record;
  }

  forksFrom(sourceId: string): boolean {
    for (const record of this.byId.values()) if (forkSourceOf(record.config) === sourceId) return true;
    return false;
  }

  *namesFrom(from: string): Iterable<string> {
    // The default sort compares strings by UTF-16 code unit, which is the listing's order.
    this.sortedNames ??= [...this.idsByName.entries()].map(([name]) => name).sort();
    const sorted = this.sortedNames;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    for (let at = lo; at < sorted.length; at++) yield sorted[at]!;
  }

  with(id: string, next: StreamRecord | null): MemoryStreamTable {
    const previous = this.byId.get(id);
    let { idsByName } = this;
    if (previous !== undefined && (next === null || next.name !== previous.name)) idsByName = idsByName.delete(previous.name);
    if (next !== null && (previous === undefined || next.name !== previous.name)) idsByName = idsByName.set(next.name, id);
    return new MemoryStreamTable(next === null ? this.byId.delete(id) : this.byId.set(id, next), idsByName);
  }
}
