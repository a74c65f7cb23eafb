// A stored tablet seen as the read-only map the pure core's write step reads rows through (it reads what a
// key holds before an op). Only `get` and `has` are on the write path; iteration walks the stored rows in
// key order, for the rare caller that needs every row.
import type { Row } from "../../core/tables/changelog.ts";
import type { BucketTablet } from "../../ports/tablet-storage.ts";

export class TabletRowsView implements ReadonlyMap<string, Row> {
  constructor(private readonly tablet: BucketTablet) {}

  get size(): number {
    return this.tablet.count();
  }

  get(key: string): Row | undefined {
    return this.tablet.get(key);
  }

  has(key: string): boolean {
    return this.tablet.get(key) !== undefined;
  }

  forEach(callback: (value: Row, key: string, map: ReadonlyMap<string, Row>) => void): void {
    for (const [key, row] of this.tablet.entries()) callback(row, key, this);
  }

  *entries(): MapIterator<[string, Row]> {
    for (const [key, row] of this.tablet.entries()) yield [key, row];
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.tablet.entries()) yield key;
  }

  *values(): MapIterator<Row> {
    for (const [, row] of this.tablet.entries()) yield row;
  }

  [Symbol.iterator](): MapIterator<[string, Row]> {
    return this.entries();
  }
}
