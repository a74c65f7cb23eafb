// One stream's state on this node, as plain data: its configuration, its acknowledged data (the tail
// cache: memory records and compacted stream objects), the "decided" state that already includes appends
// whose WAL object is still in flight, and its phase (StreamPhase, moved only along src/core/stream-phase.ts).
// The registry of these (stream-registry.ts) finds, holds and reads them.
import type { ProducerState } from "../../core/protocol/producer.ts";
import type { StreamConfig } from "../../core/protocol/stream-config.ts";
import type { Lifecycle, LifecycleView } from "../../core/protocol/fork.ts";
import { canMove } from "../../core/stream-phase.ts";
import type { StreamObjectRef } from "../../storage/manifest.ts";

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
  | { readonly kind: "removed" }
  | { readonly kind: "evicted" };

/** Moves the stream to `next`; an illegal move is a bug and throws (an assertion that stays on). */
export function moveTo(stream: StreamState, next: StreamPhase): void {
  const from = stream.phase.kind;
  if (!canMove(from, next.kind)) throw new Error(`stream ${stream.id}: illegal phase move ${from} -> ${next.kind}`);
  stream.phase = next;
}

/**
 * Deleted, expired or handed away (the name is free here), or this copy evicted (the name's next request
 * reloads a new one): no step may act on this copy any more.
 */
export function isGone(stream: StreamState): boolean {
  return stream.phase.kind === "removed" || stream.phase.kind === "moved-away" || stream.phase.kind === "evicted";
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
  /**
   * Data in [base, this) is in stream objects whose runs `records` does not list yet: a stream replayed from
   * a snapshot record at a start leaves them to its first read (StreamRegistry.loadObjectRuns), so a start
   * reads no manifest. Null once listed (or when there is nothing below to list).
   */
  unlistedBelow: number | null;
  /**
   * Reloaded from its manifest's session (streams/eviction.ts): the WAL does not know the stream, so its next
   * record goes out behind a snapshot record of it (streams/commit.ts), which replay rebuilds it from.
   */
  needsAnchor: boolean;
  /**
   * The epoch this node last saw its manifest at (opened, raised, read), or null: a compaction or eviction at
   * that epoch need not open it again. Only a hint: every manifest write re-checks the epoch.
   */
  manifestEpoch: number | null;
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
    unlistedBelow: null,
    needsAnchor: false,
    manifestEpoch: null,
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

/**
 * Puts the stream objects covering [base, upTo) ahead of the stream's records (a manifest's `objects`, in
 * order); they must cover exactly that range. Clears `unlistedBelow`: the runs below it are listed now.
 */
export function pointAtObjects(stream: StreamState, objects: readonly StreamObjectRef[], upTo: number): void {
  stream.unlistedBelow = null;
  if (upTo === stream.base) return;
  const extents: CachedRecord[] = [];
  let at = stream.base;
  for (const ref of objects) {
    if (ref.firstOffset >= upTo) break;
    if (ref.firstOffset !== at) throw new Error(`stream ${stream.id}: objects jump from ${at} to ${ref.firstOffset}`);
    extents.push({ first: ref.firstOffset, end: ref.endOffset, data: null, objectKey: ref.key });
    at = ref.endOffset;
  }
  if (at < upTo) throw new Error(`stream ${stream.id}: objects end at ${at}, its data at ${upTo}`);
  stream.records.unshift(...extents);
}
