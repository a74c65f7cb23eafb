// The node's in-memory view of the streams it owns: per stream its configuration, its acknowledged data
// (the tail cache: every record this incarnation acknowledged or replayed), and the "decided" state that
// already includes appends whose WAL object is still in flight. Decisions (offsets, producers, Stream-Seq,
// eof) read the decided state; readers see only acknowledged data. Reads stitch a fork's inherited range
// from its source. This session keeps every record in memory (see docs/node.md, "What is left").
import { producerBytes, type ProducerState } from "../../core/protocol/producer.ts";
import type { StreamConfig } from "../../core/protocol/stream-config.ts";
import type { Lifecycle, LifecycleView, RecordAtAnchor } from "../../core/protocol/fork.ts";
import { isJsonContentType } from "../../core/protocol/content-type.ts";
import { canMove } from "../../core/stream-phase.ts";

/**
 * A run of a stream's own acknowledged bytes [first, end): one record held in memory (the tail cache), or
 * a compacted stream object read back on demand (`objectKey`).
 */
export type CachedRecord =
  | { readonly first: number; readonly end: number; readonly data: Uint8Array; readonly objectKey?: undefined }
  | { readonly first: number; readonly end: number; readonly data: null; readonly objectKey: string };

export function memoryRecord(first: number, data: Uint8Array): CachedRecord {
  return { first, end: first + data.byteLength, data };
}

/** Reads a stream object's records (cached by the caller). */
export type StreamObjectLoader = (key: string) => Promise<readonly { firstOffset: number; data: Uint8Array }[]>;

interface DecidedState {
  tail: number;
  eof: boolean;
  /** Updated in place by the append that commits a producer (never copied per append: docs/limits.md). */
  readonly producers: Map<string, ProducerState>;
  lastStreamSeq: string | null;
}

/**
 * Where a stream stands on this node; one phase at a time, moved only by `moveTo` along the table in
 * src/core/stream-phase.ts. `held`: replayed after a restart, or known here but not opened by this
 * incarnation (its epoch is the last one seen); `opened`: this incarnation opened it at `epoch` and may
 * decide appends; `handing-off`: a transfer stopped its appends, requests wait for `done`; `moved-away`:
 * handed to another node (readers are sent on, not told 404); `removed`: deleted or expired (the name is
 * free). The protocol's soft delete (`lifecycle`) and writer closure (`eof`) are properties of the stream's
 * data, not phases.
 */
export type StreamPhase =
  | { readonly kind: "held" }
  | { readonly kind: "opened" }
  | { readonly kind: "handing-off"; readonly done: Promise<void> }
  | { readonly kind: "moved-away" }
  | { readonly kind: "removed" };

/** Moves the stream to `next`; an illegal move is a bug and throws (an assertion that stays on). */
export function moveTo(stream: StreamState, next: StreamPhase): void {
  const from = stream.phase.kind;
  if (!canMove(from, next.kind)) throw new Error(`stream ${stream.id}: illegal phase move ${from} -> ${next.kind}`);
  stream.phase = next;
}

/** Deleted, expired or handed away: the name is free here. */
export function isGone(stream: StreamState): boolean {
  return stream.phase.kind === "removed" || stream.phase.kind === "moved-away";
}

export interface StreamState {
  readonly id: string;
  readonly name: string;
  readonly config: StreamConfig;
  readonly createdAtMs: number;
  /** Where the stream's own data starts: its fork point, or 0. */
  readonly base: number;
  lifecycle: Lifecycle;
  /** Where the stream stands on this node (see StreamPhase); change it with `moveTo`. */
  phase: StreamPhase;
  /** Acknowledged (visible) tail and eof. */
  tail: number;
  eof: boolean;
  readonly records: CachedRecord[];
  readonly decided: DecidedState;
  /** Bytes of `records` held in memory. */
  memoryBytes: number;
  /** Settles when every decided append is acknowledged; rejects when the WAL writer stopped. */
  pending: Promise<void>;
  /** The stream epoch from the metadata log (the last one seen; this incarnation's own once `opened`). */
  epoch: number;
  lastAccessMs: number;
  /** Live or soft-deleted forks whose source this stream is. */
  forkCount: number;
}

export function newStreamState(input: {
  id: string;
  name: string;
  config: StreamConfig;
  createdAtMs: number;
  epoch: number;
  opened: boolean;
}): StreamState {
  const base = input.config.fork?.forkPositionBytes ?? 0;
  const { opened, ...rest } = input;
  return {
    ...rest,
    base,
    lifecycle: "live",
    phase: opened ? { kind: "opened" } : { kind: "held" },
    tail: base,
    eof: false,
    records: [],
    memoryBytes: 0,
    decided: { tail: base, eof: false, producers: new Map(), lastStreamSeq: null },
    pending: Promise.resolve(),
    lastAccessMs: input.createdAtMs,
    forkCount: 0,
  };
}

export function lifecycleView(stream: StreamState): LifecycleView {
  return {
    lifecycle: stream.lifecycle,
    expiry: { ttlSeconds: stream.config.ttlSeconds, expiresAtMs: stream.config.expiresAtMs },
    lastAccessMs: stream.lastAccessMs,
    forkCount: stream.forkCount,
  };
}

export class StreamRegistry {
  constructor(private readonly loadObject: StreamObjectLoader) {}

  private readonly byId = new Map<string, StreamState>();
  private readonly idByName = new Map<string, string>();
  /** Streams whose create record is in flight: not visible yet, but a snapshot must include them. */
  private readonly creating = new Set<StreamState>();

  /** The stream currently holding `name` (not removed), if any. */
  byName(name: string): StreamState | undefined {
    const id = this.idByName.get(name);
    const stream = id === undefined ? undefined : this.byId.get(id);
    return stream === undefined || isGone(stream) ? undefined : stream;
  }

  get(id: string): StreamState | undefined {
    return this.byId.get(id);
  }

  /** A create record of `stream` was queued: snapshots include it from now on. */
  beginCreate(stream: StreamState): void {
    this.creating.add(stream);
  }

  /** The create ended (visible through `add`, or failed). */
  endCreate(stream: StreamState): void {
    this.creating.delete(stream);
  }

  /** Every stream a compaction snapshot must describe: live, soft-deleted, and being created. */
  snapshotStreams(): StreamState[] {
    return [...[...this.byId.values()].filter((stream) => !isGone(stream)), ...this.creating];
  }

  add(stream: StreamState): void {
    this.creating.delete(stream);
    this.byId.set(stream.id, stream);
    this.idByName.set(stream.name, stream.id);
  }

  /**
   * Forgets a stream that left (`removed`, or `moved-away` for a hand-off). Its data stays reachable while
   * forks read it (they hold it by id).
   */
  remove(stream: StreamState, why: "removed" | "moved-away" = "removed"): void {
    moveTo(stream, { kind: why });
    if (this.idByName.get(stream.name) === stream.id) this.idByName.delete(stream.name);
    if (stream.forkCount === 0) this.byId.delete(stream.id);
  }

  /**
   * Where the stream's data in stream objects ends: the end of its last object-backed run, or its base. Data
   * from here to the tail is in memory (and in this node's WAL).
   */
  compactedEnd(stream: StreamState): number {
    let end = stream.base;
    for (const record of stream.records) if (record.data === null) end = Math.max(end, record.end);
    return end;
  }

  /** `stream` reads its source here from now on: the source's fork count rises. Returns the source. */
  attachFork(stream: StreamState): StreamState | undefined {
    const source = this.sourceOf(stream);
    if (source !== undefined) this.holdSource(source);
    return source;
  }

  /** A fork (or a fork's create in flight) holds `source`: it cannot be removed for good meanwhile. */
  holdSource(source: StreamState): void {
    source.forkCount++;
  }

  /** A hold on `source` ends; a removed source nobody reads any more leaves memory. */
  dropSource(source: StreamState): void {
    source.forkCount = Math.max(0, source.forkCount - 1);
    this.release(source);
  }

  /**
   * `stream` no longer reads its source here (removed, handed off, or its create failed): the source's
   * fork count drops, and a removed source nobody reads any more leaves memory. Returns the source.
   */
  detachFork(stream: StreamState): StreamState | undefined {
    const source = this.sourceOf(stream);
    if (source !== undefined) this.dropSource(source);
    return source;
  }

  /** A removed stream no fork reads any more can be dropped from memory. */
  release(stream: StreamState): void {
    if (isGone(stream) && stream.forkCount === 0) this.byId.delete(stream.id);
  }

  all(): IterableIterator<StreamState> {
    return this.byId.values();
  }

  /** What every producer table of the node holds (MAX_NODE_PRODUCER_BYTES): summed when a new producer id arrives. */
  producerBytes(): number {
    let bytes = 0;
    for (const stream of this.byId.values()) for (const id of stream.decided.producers.keys()) bytes += producerBytes(id);
    return bytes;
  }

  get size(): number {
    return this.byId.size;
  }

  /** The fork's source, by the id it recorded (the source may since be soft-deleted). */
  sourceOf(stream: StreamState): StreamState | undefined {
    const fork = stream.config.fork;
    return fork === null ? undefined : this.byId.get(fork.sourceStreamId);
  }

  /** Appends an acknowledged record held in memory. */
  pushRecord(stream: StreamState, first: number, data: Uint8Array): void {
    if (data.byteLength === 0) return;
    stream.records.push(memoryRecord(first, data));
    stream.memoryBytes += data.byteLength;
  }

  /**
   * The stream's data [first, end) now lives in a stream object: the memory records inside the range are
   * dropped from the tail cache and read back from the object when needed.
   */
  replaceWithObject(stream: StreamState, objectKey: string, first: number, end: number): void {
    const kept: CachedRecord[] = [];
    let inserted = false;
    for (const record of stream.records) {
      if (record.first >= first && record.end <= end) {
        if (record.data !== null) stream.memoryBytes -= record.data.byteLength;
        if (!inserted) {
          kept.push({ first, end, data: null, objectKey });
          inserted = true;
        }
        continue;
      }
      if (!inserted && record.first >= end) {
        kept.push({ first, end, data: null, objectKey });
        inserted = true;
      }
      kept.push(record);
    }
    if (!inserted) kept.push({ first, end, data: null, objectKey });
    stream.records.splice(0, stream.records.length, ...kept);
  }

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

/** The initial body and closure of a created (or replayed) stream. */
export function applyInitial(stream: StreamState, data: Uint8Array, closed: boolean): void {
  if (data.byteLength > 0) {
    stream.records.push(memoryRecord(stream.base, data));
    stream.memoryBytes += data.byteLength;
  }
  stream.tail = stream.base + data.byteLength;
  stream.eof = closed;
  stream.decided.tail = stream.tail;
  stream.decided.eof = closed;
}
