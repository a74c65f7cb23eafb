// Bucket tablets in memory (the node test tier and the simulation): the same behaviour as the SQLite tablets
// of the StreamNode Durable Object. Rows are kept as JSON text, as SQLite keeps them, so a row read back is
// always a fresh copy; keys are kept in a chunked sorted list, so an insert, a remove and the start of a scan
// cost O(log n + chunk size) however large the bucket grows.
import type { Row } from "../../src/core/tables/changelog.ts";
import { checkedKey, pagedEntries, type BucketTablet, type TabletChanges, type TabletMark, type TabletStorage } from "../../src/ports/tablet-storage.ts";

/** A chunk of the sorted key list splits in two above this many keys. Inserting splices one chunk, which
 * costs more than the binary search over chunks: applying 500-key batches to a 1,000,000-key bucket was
 * fastest from 128 to 256 and clearly slower from 512 up. Tests pass a tiny value so chunks split and empty. */
const DEFAULT_CHUNK_MAX_KEYS = 256;

/** Sorted distinct strings in chunks of at most chunkMaxKeys, each chunk non-empty, in key order. */
class SortedKeys {
  private readonly chunks: string[][] = [];

  constructor(private readonly chunkMaxKeys: number) {}

  static from(sortedDistinct: readonly string[], chunkMaxKeys: number): SortedKeys {
    const keys = new SortedKeys(chunkMaxKeys);
    const chunkKeys = Math.max(1, chunkMaxKeys >> 1);
    for (let start = 0; start < sortedDistinct.length; start += chunkKeys) {
      keys.chunks.push(sortedDistinct.slice(start, start + chunkKeys));
    }
    return keys;
  }

  /** Adds a key known to be absent. */
  insert(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      return;
    }
    const chunkIndex = this.chunkFor(key);
    const chunk = this.chunks[chunkIndex]!;
    chunk.splice(lowerBound(chunk, key), 0, key);
    if (chunk.length > this.chunkMaxKeys) this.chunks.splice(chunkIndex + 1, 0, chunk.splice(chunk.length >> 1));
  }

  /** Removes a key known to be present. */
  remove(key: string): void {
    const chunkIndex = this.chunkFor(key);
    const chunk = this.chunks[chunkIndex]!;
    const index = lowerBound(chunk, key);
    if (chunk[index] !== key) throw new Error("sorted keys lost a key");
    chunk.splice(index, 1);
    if (chunk.length === 0) this.chunks.splice(chunkIndex, 1);
  }

  /** The keys from `start` on (after it when `exclusive`), in order. The list must not change meanwhile. */
  *from(start: string, exclusive: boolean): Generator<string> {
    if (this.chunks.length === 0) return;
    let chunkIndex = this.chunkFor(start);
    const first = this.chunks[chunkIndex]!;
    let index = exclusive ? upperBound(first, start) : lowerBound(first, start);
    for (; chunkIndex < this.chunks.length; chunkIndex++, index = 0) {
      const chunk = this.chunks[chunkIndex]!;
      for (; index < chunk.length; index++) yield chunk[index]!;
    }
  }

  /** The last chunk whose first key is at most `key` (the first chunk when none is). */
  private chunkFor(key: string): number {
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.chunks[middle]![0]! <= key) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}

/** The first index whose key is at least `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (keys[middle]! < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The first index whose key is greater than `key`. */
function upperBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (keys[middle]! <= key) low = middle + 1;
    else high = middle;
  }
  return low;
}

interface StoredTablet {
  readonly rows: Map<string, string>;
  readonly keys: SortedKeys;
  mark: TabletMark;
}

export interface MemoryTabletOptions {
  /** Keys per chunk of a tablet's sorted key list (default DEFAULT_CHUNK_MAX_KEYS); at least 2. */
  readonly chunkMaxKeys?: number;
}

export class MemoryTabletStorage implements TabletStorage {
  private readonly tablets = new Map<string, StoredTablet>();
  private readonly chunkMaxKeys: number;

  constructor(options: MemoryTabletOptions = {}) {
    this.chunkMaxKeys = options.chunkMaxKeys ?? DEFAULT_CHUNK_MAX_KEYS;
    if (!Number.isInteger(this.chunkMaxKeys) || this.chunkMaxKeys < 2) throw new RangeError("chunkMaxKeys is an integer of at least 2");
  }

  open(streamId: string): BucketTablet {
    return new MemoryBucketTablet(this.tablets, streamId, this.chunkMaxKeys);
  }

  streamIds(): string[] {
    return [...this.tablets.keys()].sort();
  }
}

/** A handle on one bucket: it looks its tablet up on every call, so handles of one bucket share it. */
class MemoryBucketTablet implements BucketTablet {
  constructor(
    private readonly tablets: Map<string, StoredTablet>,
    private readonly streamId: string,
    private readonly chunkMaxKeys: number,
  ) {}

  mark(): TabletMark | null {
    const mark = this.stored()?.mark;
    return mark === undefined ? null : { ...mark };
  }

  get(key: string): Row | undefined {
    const text = this.stored()?.rows.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as Row);
  }

  /** `set` first, then `remove`: a key named in both ends removed. */
  apply(changes: TabletChanges, mark: TabletMark): void {
    // Everything that can fail happens before the first change, so a failed apply changes nothing.
    const encoded = changes.set.map(([key, row]) => [checkedKey(key), JSON.stringify(row)] as const);
    for (const key of changes.remove) checkedKey(key);
    const tablet = this.stored() ?? this.create(mark);
    for (const [key, text] of encoded) {
      if (!tablet.rows.has(key)) tablet.keys.insert(key);
      tablet.rows.set(key, text);
    }
    for (const key of changes.remove) {
      if (tablet.rows.delete(key)) tablet.keys.remove(key);
    }
    tablet.mark = { appliedOffset: mark.appliedOffset, appliedPosition: mark.appliedPosition };
  }

  scan(prefix: string, after: string | null, limit: number): { key: string; row: Row }[] {
    checkedLimit(limit);
    const tablet = this.stored();
    const page: { key: string; row: Row }[] = [];
    if (tablet === undefined || limit === 0) return page;
    const fromAfter = after !== null && after >= prefix;
    for (const key of tablet.keys.from(fromAfter ? after : prefix, fromAfter)) {
      if (!key.startsWith(prefix)) break;
      page.push({ key, row: JSON.parse(tablet.rows.get(key)!) as Row });
      if (page.length === limit) break;
    }
    return page;
  }

  count(): number {
    return this.stored()?.rows.size ?? 0;
  }

  entries(): Iterable<readonly [key: string, row: Row]> {
    return pagedEntries((prefix, after, limit) => this.scan(prefix, after, limit));
  }

  replace(rows: Iterable<readonly [key: string, row: Row]>, mark: TabletMark): void {
    const texts = new Map<string, string>();
    for (const [key, row] of rows) texts.set(checkedKey(key), JSON.stringify(row));
    const sorted = [...texts.keys()].sort();
    this.tablets.set(this.streamId, {
      rows: texts,
      keys: SortedKeys.from(sorted, this.chunkMaxKeys),
      mark: { appliedOffset: mark.appliedOffset, appliedPosition: mark.appliedPosition },
    });
  }

  drop(): void {
    this.tablets.delete(this.streamId);
  }

  private stored(): StoredTablet | undefined {
    return this.tablets.get(this.streamId);
  }

  private create(mark: TabletMark): StoredTablet {
    const tablet: StoredTablet = { rows: new Map(), keys: new SortedKeys(this.chunkMaxKeys), mark };
    this.tablets.set(this.streamId, tablet);
    return tablet;
  }
}


function checkedLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError("a scan limit is a non-negative integer");
}
