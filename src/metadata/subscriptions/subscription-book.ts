// The subscription records in memory, each with the origin of its PUT and the bytes it counts toward
// MAX_SUBSCRIPTION_BOOK_BYTES, written through to the storage port on every change. A change that would
// pass the row bound or the book's byte budget changes nothing and is answered as the caller's error.
import {
  checkBookBytes,
  checkRecordGrowth,
  checkRecordSize,
  recordBytes,
  type SubscriptionError,
  type SubscriptionRecord,
} from "../../core/subscriptions/index.ts";
import type { SubscriptionStorage } from "./subscription-storage.ts";

export interface BookEntry {
  record: SubscriptionRecord;
  readonly origin: string;
  /** recordBytes of the record's row: what it counts toward MAX_SUBSCRIPTION_BOOK_BYTES. */
  bytes: number;
}

export class SubscriptionBook {
  private readonly entries = new Map<string, BookEntry>();
  /** The sum of the entries' bytes (MAX_SUBSCRIPTION_BOOK_BYTES). */
  private bookBytes = 0;

  constructor(
    private readonly storage: SubscriptionStorage,
    /** MAX_SUBSCRIPTION_BOOK_BYTES, read at each use. */
    private readonly maxBookBytes: () => number,
  ) {
    for (const row of storage.rows()) {
      const bytes = recordBytes(row.record);
      this.entries.set(row.id, { record: JSON.parse(row.record) as SubscriptionRecord, origin: row.origin, bytes });
      this.bookBytes += bytes;
    }
  }

  get heldBytes(): number {
    return this.bookBytes;
  }

  get size(): number {
    return this.entries.size;
  }

  get(id: string): BookEntry | undefined {
    return this.entries.get(id);
  }

  all(): IterableIterator<BookEntry> {
    return this.entries.values();
  }

  /** Adds a new record, unless its row or the book would pass their bounds. */
  add(record: SubscriptionRecord, origin: string): BookEntry | SubscriptionError {
    const text = JSON.stringify(record);
    const bytes = recordBytes(text);
    const tooLarge = checkRecordSize(text.length) ?? checkBookBytes(this.bookBytes, 0, bytes, this.maxBookBytes());
    if (tooLarge !== null) return tooLarge;
    const entry = { record, origin, bytes };
    this.entries.set(record.id, entry);
    this.bookBytes += bytes;
    this.storage.write({ id: record.id, record: text, origin });
    return entry;
  }

  /** Removes a record; false when there was none. */
  remove(id: string): boolean {
    const entry = this.entries.get(id);
    if (entry === undefined) return false;
    this.entries.delete(id);
    this.bookBytes -= entry.bytes;
    this.storage.remove(id);
    return true;
  }

  /**
   * Makes `record` the entry's state and writes its row, unless it is the same state, or its JSON grows past
   * the row bound (too_large) or would grow the book past MAX_SUBSCRIPTION_BOOK_BYTES (limit_reached): then
   * nothing changes and the caller answers the error.
   */
  commit(entry: BookEntry, record: SubscriptionRecord): SubscriptionError | null {
    if (record === entry.record) return null;
    const text = JSON.stringify(record);
    const bytes = recordBytes(text);
    const tooLarge = checkRecordGrowth(entry.bytes, bytes, text.length);
    if (tooLarge !== null) return tooLarge;
    const full = checkBookBytes(this.bookBytes, entry.bytes, bytes, this.maxBookBytes());
    if (full !== null) return full;
    this.bookBytes += bytes - entry.bytes;
    entry.bytes = bytes;
    entry.record = record;
    this.storage.write({ id: record.id, record: text, origin: entry.origin });
    return null;
  }
}
