// Where a bucket's applied tablet is kept on its leader (docs/tables.md): the port the table paths use.
// The StreamNode Durable Object keeps tablets in its SQLite database (durable-objects/sqlite-tablet-storage.ts);
// the node test tier and the simulation keep them in memory (test/support/memory-tablet-storage.ts). Only acknowledged
// records reach a tablet, so whatever it holds is a prefix of the bucket's stream, up to its mark.
import type { Row } from "../core/tables/changelog.ts";

/** How far a tablet has applied its bucket's stream: records (the core's offsets) and stream bytes. */
export interface TabletMark {
  readonly appliedOffset: number;
  readonly appliedPosition: number;
}

export interface TabletChanges {
  readonly set: readonly (readonly [key: string, row: Row])[];
  readonly remove: readonly string[];
}

export interface BucketTablet {
  /** What is applied; null when nothing was ever stored for this bucket here. */
  mark(): TabletMark | null;
  get(key: string): Row | undefined;
  /** The changes and the new mark, in one transaction. */
  apply(changes: TabletChanges, mark: TabletMark): void;
  /** Rows whose key starts with `prefix` and is greater than `after` (code-unit order), in key order, at most `limit`. */
  scan(prefix: string, after: string | null, limit: number): { key: string; row: Row }[];
  count(): number;
  /** Every row in key order (a snapshot reads this). */
  entries(): Iterable<readonly [key: string, row: Row]>;
  /** Everything replaced by `rows` and `mark` (a restored snapshot), in one transaction. */
  replace(rows: Iterable<readonly [key: string, row: Row]>, mark: TabletMark): void;
  /** The tablet removed for good (its bucket left this node, or its table was dropped). */
  drop(): void;
}

export interface TabletStorage {
  /** The tablet of one bucket stream; empty (mark null) when none is stored. */
  open(streamId: string): BucketTablet;
  /** The bucket streams that have a stored tablet here. */
  streamIds(): string[];
}

/** Keys `entries()` reads per page; between pages it holds only the last key, never the whole bucket. */
const ENTRIES_PAGE_KEYS = 512;

/** Every row of a tablet in key order, read a page at a time through its `scan` (both storages' `entries()`). */
export function* pagedEntries(scan: BucketTablet["scan"]): Generator<readonly [key: string, row: Row]> {
  let after: string | null = null;
  for (;;) {
    const page = scan("", after, ENTRIES_PAGE_KEYS);
    for (const { key, row } of page) yield [key, row];
    if (page.length < ENTRIES_PAGE_KEYS) return;
    after = page[page.length - 1]!.key;
  }
}

/** Tablet keys are printable ASCII (src/core/tables/key-encoding.ts); the storages' range scans rely on it. */
const PRINTABLE_KEY = /^[!-~]*$/;

export function checkedKey(key: string): string {
  if (!PRINTABLE_KEY.test(key)) throw new RangeError("a tablet key is printable ASCII");
  return key;
}
