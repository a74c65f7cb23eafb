// Reads of the acknowledged bytes of a stream's view, wherever they are: the tail cache in memory, stream
// objects read back on demand, and, below a fork's base, its source's (a fork's inherited range stitched
// from the source it holds). The registry (stream-registry.ts) answers reads through this.
import type { RecordAtAnchor } from "../../core/protocol/fork.ts";
import { isJsonContentType } from "../../core/protocol/content-type.ts";
import type { CachedRecord, StreamState } from "./stream-state.ts";

/** Reads a stream object's records (cached by the caller). */
export type StreamObjectLoader = (key: string) => Promise<readonly { firstOffset: number; data: Uint8Array }[]>;

export class StreamReads {
  constructor(
    private readonly loadObject: StreamObjectLoader,
    /** The fork's source, by the id it recorded. */
    private readonly sourceOf: (stream: StreamState) => StreamState | undefined,
    /** Lists the stream objects a stream replayed at a start has not listed yet (StreamRegistry.loadObjectRuns). */
    private readonly listRuns: (stream: StreamState) => Promise<void>,
  ) {}

  /**
   * The acknowledged bytes [start, end) of the stream's view: the source's up to the fork point, then its
   * own. `end` must not pass the stream's acknowledged tail.
   */
  async readBytes(stream: StreamState, start: number, end: number): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    await this.collect(stream, start, end, parts);
    if (parts.length === 1) return parts[0]!;
    const out = new Uint8Array(end - start);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.byteLength;
    }
    if (at !== end - start) throw new Error(`read of ${stream.id} [${start}, ${end}) found ${at} bytes`);
    return out;
  }

  private async collect(stream: StreamState, start: number, end: number, parts: Uint8Array[]): Promise<void> {
    if (start >= end) return;
    if (start < stream.base) {
      const source = this.sourceOf(stream);
      if (source === undefined) throw new Error(`fork ${stream.id} lost its source`);
      await this.collect(source, start, Math.min(end, stream.base), parts);
      start = stream.base;
      if (start >= end) return;
    }
    if (stream.unlistedBelow !== null && start < stream.unlistedBelow) await this.listRuns(stream);
    // A snapshot of the list: a compaction may replace records while an object is being read.
    const records = [...stream.records];
    for (let i = recordIndexAt(records, start); i < records.length && start < end; i++) {
      const record = records[i]!;
      if (record.end <= start) continue;
      for (const piece of await this.pieces(record)) {
        const pieceEnd = piece.first + piece.data.byteLength;
        if (pieceEnd <= start || piece.first >= end) continue;
        parts.push(piece.data.subarray(start - piece.first, Math.min(pieceEnd, end) - piece.first));
        start = Math.min(pieceEnd, end);
      }
    }
  }

  /** A cached record as its stored records (one for memory, the object's records for an object). */
  private async pieces(record: CachedRecord): Promise<readonly { first: number; data: Uint8Array }[]> {
    if (record.data !== null) return [{ first: record.first, data: record.data }];
    const stored = await this.loadObject(record.objectKey);
    return stored.filter((r) => r.data.byteLength > 0).map((r) => ({ first: r.firstOffset, data: r.data }));
  }

  /**
   * The record that starts at, or contains, `position` in the stream's view (an inherited record cut at
   * the fork point), as fork sub-offsets count it; null at the tail.
   */
  async recordAt(stream: StreamState, position: number, limit = stream.tail): Promise<RecordAtAnchor> {
    if (position >= limit) return null;
    if (position < stream.base) {
      const source = this.sourceOf(stream);
      if (source === undefined) return null;
      return this.recordAt(source, position, Math.min(limit, stream.base));
    }
    if (stream.unlistedBelow !== null && position < stream.unlistedBelow) await this.listRuns(stream);
    const cached = stream.records[recordIndexAt(stream.records, position)];
    if (cached === undefined || cached.first > position) return null;
    const record = (await this.pieces(cached)).find((r) => r.first <= position && position < r.first + r.data.byteLength);
    if (record === undefined) return null;
    const end = Math.min(record.first + record.data.byteLength, limit);
    if (end <= position) return null;
    const rest = record.data.subarray(position - record.first, end - record.first);
    if (!isJsonContentType(stream.config.contentType)) return { kind: "bytes", lengthBytes: rest.byteLength };
    const lengths: number[] = [];
    let from = 0;
    for (let i = 0; i < rest.byteLength; i++) {
      if (rest[i] === 0x0a) {
        lengths.push(i + 1 - from);
        from = i + 1;
      }
    }
    return { kind: "json", messageLengthsBytes: lengths };
  }
}

/** Index of the last record starting at or before `position` (0 when none does). */
function recordIndexAt(records: readonly CachedRecord[], position: number): number {
  let lo = 0;
  let hi = records.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (records[mid]!.first <= position) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}
