// The node's in-memory view of the streams it owns: the streams by id and by name, those being created,
// the holds forks keep on their sources, and each stream's tail cache (records pushed, ranges replaced by
// stream objects). Decisions (offsets, producers, Stream-Seq, eof) read a stream's decided state; readers see
// only acknowledged data, read through stream-reads.ts (a fork's inherited range stitched from its source).
// A stream's own state is stream-state.ts. A stream replayed at a start lists its stream objects on its
// first read (loadObjectRuns): a start reads no manifest, however many streams the node holds.
import { producerBytes } from "../../core/protocol/producer.ts";
import type { RecordAtAnchor } from "../../core/protocol/fork.ts";
import type { StreamObjectRef } from "../../storage/manifest.ts";
import { isGone, memoryRecord, moveTo, pointAtObjects, type CachedRecord, type StreamState } from "./stream-state.ts";
import { StreamReads, type StreamObjectLoader } from "./stream-reads.ts";

export {
  applyInitial,
  isGone,
  lifecycleView,
  memoryRecord,
  moveTo,
  newStreamState,
  pointAtObjects,
  type StreamPhase,
  type StreamState,
} from "./stream-state.ts";
export type { StreamObjectLoader } from "./stream-reads.ts";

/** A stream's stream objects as its manifest lists them (null: it has no manifest). */
export type StreamObjectLister = (streamId: string) => Promise<readonly StreamObjectRef[] | null>;

export class StreamRegistry {
  private readonly reads: StreamReads;
  /** Listings in flight, one per stream, so concurrent first reads read its manifest once. */
  private readonly listing = new Map<StreamState, Promise<void>>();

  constructor(
    loadObject: StreamObjectLoader,
    private readonly listObjects: StreamObjectLister,
  ) {
    this.reads = new StreamReads(loadObject, (stream) => this.sourceOf(stream), (stream) => this.loadObjectRuns(stream));
  }

  /**
   * Lists the stream objects below `unlistedBelow` in the stream's records (one manifest read, shared by
   * concurrent callers). Throws when the manifest does not cover that range: what a start that read every
   * manifest used to refuse is refused at the first read instead.
   */
  loadObjectRuns(stream: StreamState): Promise<void> {
    if (stream.unlistedBelow === null) return Promise.resolve();
    let pending = this.listing.get(stream);
    if (pending === undefined) {
      const upTo = stream.unlistedBelow;
      pending = this.listObjects(stream.id)
        .then((objects) => {
          if (objects === null) throw new Error(`stream ${stream.id} has data below ${upTo} but no manifest`);
          if (stream.unlistedBelow === upTo) pointAtObjects(stream, objects, upTo);
        })
        .finally(() => this.listing.delete(stream));
      this.listing.set(stream, pending);
    }
    return pending;
  }

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
   * Drops an idle stream from memory (streams/eviction.ts): it stays owned here, its state in its manifest. A
   * caller still holding the object sees phase `evicted` and looks the name up again.
   */
  evict(stream: StreamState): void {
    moveTo(stream, { kind: "evicted" });
    if (this.idByName.get(stream.name) === stream.id) this.idByName.delete(stream.name);
    this.byId.delete(stream.id);
  }

  /**
   * Where the stream's data in stream objects ends: the end of its last object-backed run, or its base. Data
   * from here to the tail is in memory (and in this node's WAL).
   */
  compactedEnd(stream: StreamState): number {
    let end = stream.unlistedBelow ?? stream.base;
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

  /** Forgets every stream: a replay that starts over (streams/recovery.ts) fills it again. */
  clear(): void {
    this.byId.clear();
    this.idByName.clear();
    this.creating.clear();
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
  readBytes(stream: StreamState, start: number, end: number): Promise<Uint8Array> {
    return this.reads.readBytes(stream, start, end);
  }

  /**
   * The record that starts at, or contains, `position` in the stream's view (an inherited record cut at
   * the fork point), as fork sub-offsets count it; null at the tail.
   */
  recordAt(stream: StreamState, position: number, limit = stream.tail): Promise<RecordAtAnchor> {
    return this.reads.recordAt(stream, position, limit);
  }
}
