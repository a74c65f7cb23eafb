// A stream's manifest: its epoch, its stream objects, the WAL ranges not yet compacted, its durable end.
// JSON (small, rarely written), at `streams/<id>/manifest`. Created with `If-None-Match: *`, then only ever
// replaced by compare-and-swap (`If-Match` on the ETag last read), so every write is based on the latest
// state, and a writer whose epoch is below the recorded one can never write: `updateManifest` re-checks
// the epoch against every state it bases a write on.

import { CorruptObjectError } from "./record-codec.ts";
import type { ObjectStore } from "./object-store.ts";
import { compareAndSwap, readDocument, type ManifestWriteOptions } from "./document-cas.ts";
import { manifestKey } from "./keys.ts";

const MANIFEST_FORMAT_VERSION = 1;

export interface StreamObjectRef {
  key: string;
  firstOffset: number;
  endOffset: number;
  bytes: number;
}

/** WAL objects [fromSeq, toSeq) of `nodeId` hold records of the stream not yet in stream objects. */
interface WalRange {
  nodeId: string;
  fromSeq: number;
  toSeq: number;
}

export interface Manifest {
  streamId: string;
  /** The epoch of the owner that may write; raised by `openManifest`. */
  epoch: number;
  /** The stream's first offset: 0, or a fork's fork point. The first stream object starts here. */
  startOffset: number;
  /** Sorted and contiguous from `startOffset`. */
  objects: StreamObjectRef[];
  walRanges: WalRange[];
  /** The durable end known at the last manifest write; never decreases. */
  endOffset: number;
  /** Set when an owner closed the stream (ownership), cleared by the next open. */
  closed?: { atEpoch: number; endOffset: number };
  /** The writer closed the stream (data): no append follows. */
  eof: boolean;
  /**
   * What the owner that closed the stream hands to the next one (its configuration, producers and the like),
   * opaque JSON to this layer; written with `closed` and dropped by the next open, like it.
   */
  session?: { readonly [key: string]: unknown };
}

export interface ManifestSnapshot {
  manifest: Manifest;
  etag: string;
}

/** The recorded epoch is above the writer's: the writer is fenced and must stop. */
export class StaleEpochError extends Error {
  override readonly name = "StaleEpochError";
  readonly code = "stale_epoch";
  constructor(
    message: string,
    readonly currentEpoch: number,
  ) {
    super(message);
  }
}

export class ManifestCorruptError extends CorruptObjectError {
  override readonly name = "ManifestCorruptError";
}

/** A manifest that must not be written (a mutation broke a rule); nothing was written. */
export class InvalidManifestError extends Error {
  override readonly name = "InvalidManifestError";
}

export class ManifestNotFoundError extends Error {
  override readonly name = "ManifestNotFoundError";
  readonly code = "not_found";
}

function emptyManifest(streamId: string, epoch: number, startOffset = 0): Manifest {
  return { streamId, epoch, startOffset, objects: [], walRanges: [], endOffset: startOffset, eof: false };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Deterministic JSON (fixed field order), so equal manifests are equal bytes. */
function encodeManifest(manifest: Manifest): Uint8Array {
  const problem = validateManifest(manifest);
  if (problem !== null) throw new InvalidManifestError(`manifest of ${manifest.streamId}: ${problem}`);
  const ordered = {
    formatVersion: MANIFEST_FORMAT_VERSION,
    streamId: manifest.streamId,
    epoch: manifest.epoch,
    startOffset: manifest.startOffset,
    objects: manifest.objects.map((o) => ({ key: o.key, firstOffset: o.firstOffset, endOffset: o.endOffset, bytes: o.bytes })),
    walRanges: manifest.walRanges.map((r) => ({ nodeId: r.nodeId, fromSeq: r.fromSeq, toSeq: r.toSeq })),
    endOffset: manifest.endOffset,
    ...(manifest.closed === undefined ? {} : { closed: { atEpoch: manifest.closed.atEpoch, endOffset: manifest.closed.endOffset } }),
    eof: manifest.eof,
    ...(manifest.session === undefined ? {} : { session: manifest.session }),
  };
  return encoder.encode(JSON.stringify(ordered));
}

export function decodeManifest(bytes: Uint8Array, key: string, streamId: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ManifestCorruptError(key, "not UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null || (value as { formatVersion?: unknown }).formatVersion !== MANIFEST_FORMAT_VERSION) {
    throw new ManifestCorruptError(key, "not a manifest of format version 1");
  }
  const { formatVersion: _version, ...manifest } = value as Manifest & { formatVersion: number };
  const problem = validateManifest(manifest);
  if (problem !== null) throw new ManifestCorruptError(key, problem);
  if (manifest.streamId !== streamId) throw new ManifestCorruptError(key, `names stream ${manifest.streamId}`);
  return manifest;
}

export async function readManifest(store: ObjectStore, streamId: string): Promise<ManifestSnapshot | null> {
  const key = manifestKey(streamId);
  const raw = await readDocument(store, key, (bytes) => decodeManifest(bytes, key, streamId));
  return raw === null ? null : { manifest: raw.value, etag: raw.etag };
}

function manifestCodec(streamId: string): { encode: (m: Manifest) => Uint8Array; decode: (bytes: Uint8Array) => Manifest } {
  const key = manifestKey(streamId);
  return { encode: encodeManifest, decode: (bytes) => decodeManifest(bytes, key, streamId) };
}

export interface UpdateManifestOptions extends ManifestWriteOptions {
  /** A snapshot just read: saves the first GET. */
  known?: ManifestSnapshot;
}

/**
 * Applies `mutate` and writes the result by compare-and-swap, as the owner at `writerEpoch`. A recorded
 * epoch above `writerEpoch` throws `StaleEpochError` (the writer is fenced); one below it means the writer
 * never opened the stream (`openManifest` first) and throws `InvalidManifestError`. `mutate` gets a fresh
 * copy and may run more than once (after a lost CAS, on the newer state): it must be idempotent. It may not
 * change the stream id, epoch or start offset, nor lower `endOffset`. Returning the manifest unchanged writes nothing.
 */
export async function updateManifest(
  store: ObjectStore,
  streamId: string,
  writerEpoch: number,
  mutate: (manifest: Manifest) => Manifest,
  options: UpdateManifestOptions = {},
): Promise<ManifestSnapshot> {
  const known = options.known === undefined
    ? undefined
    : { value: options.known.manifest, etag: options.known.etag, bytes: encodeManifest(options.known.manifest) };
  const { value, etag } = await compareAndSwap(store, manifestKey(streamId), manifestCodec(streamId), known, (current) => {
    if (current === null) throw new ManifestNotFoundError(`no manifest for stream ${streamId}`);
    const { epoch, endOffset, startOffset } = current;
    if (epoch > writerEpoch) throw new StaleEpochError(`stream ${streamId} is at epoch ${epoch}, writer at ${writerEpoch}`, epoch);
    if (epoch < writerEpoch) throw new InvalidManifestError(`stream ${streamId} is at epoch ${epoch}: open it at ${writerEpoch} first`);
    const next = mutate(current);
    if (next.streamId !== streamId || next.epoch !== epoch || next.startOffset !== startOffset) {
      throw new InvalidManifestError("mutate may not change the stream id, epoch or start offset");
    }
    if (next.endOffset < endOffset) throw new InvalidManifestError(`endOffset may not move back from ${endOffset} to ${next.endOffset}`);
    return next;
  }, options);
  return { manifest: value, etag };
}

export interface OpenManifestOptions extends ManifestWriteOptions {
  /** The first offset of a stream whose manifest does not exist yet (a fork starts at its fork point). */
  startOffset?: number;
  /**
   * Keep `closed` and `session`: an adopting owner reads them, and must find them again if it crashes
   * before it recorded the stream in its own WAL (it then opens once more).
   */
  keepSession?: boolean;
}

/**
 * A new owner takes the stream at `newEpoch`: the manifest's epoch is raised (created if absent) and
 * `closed` is cleared; `previous` is the state it replaced. Refuses `newEpoch` ≤ the recorded epoch.
 */
export async function openManifest(
  store: ObjectStore,
  streamId: string,
  newEpoch: number,
  options: OpenManifestOptions = {},
): Promise<{ previous: Manifest | null; snapshot: ManifestSnapshot }> {
  let previous: Manifest | null = null;
  const { value, etag } = await compareAndSwap(store, manifestKey(streamId), manifestCodec(streamId), undefined, (current) => {
    previous = current;
    if (current === null) return emptyManifest(streamId, newEpoch, options.startOffset ?? 0);
    if (current.epoch >= newEpoch) {
      throw new StaleEpochError(`stream ${streamId} is at epoch ${current.epoch}; cannot open at ${newEpoch}`, current.epoch);
    }
    if (options.keepSession === true) return { ...current, epoch: newEpoch };
    const { closed: _closed, session: _session, ...rest } = current;
    return { ...rest, epoch: newEpoch };
  }, options);
  return { previous, snapshot: { manifest: value, etag } };
}

// --- validation: the same rules for what we write and what we read ---

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const MANIFEST_FIELDS = new Set(["streamId", "epoch", "startOffset", "objects", "walRanges", "endOffset", "closed", "eof", "session"]);

/** The first rule `value` breaks, or null for a well-formed manifest. */
function validateManifest(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return "not an object";
  const m = value as Record<string, unknown>;
  const unknownField = Object.keys(m).find((field) => !MANIFEST_FIELDS.has(field));
  if (unknownField !== undefined) return `unknown field ${unknownField}`;
  if (typeof m.streamId !== "string" || m.streamId.length === 0) return "streamId must be a non-empty string";
  if (!isCount(m.epoch)) return "epoch must be a safe non-negative integer";
  if (!isCount(m.startOffset) || !isCount(m.endOffset) || m.endOffset < m.startOffset) {
    return "startOffset and endOffset must be safe non-negative integers, start ≤ end";
  }
  if (typeof m.eof !== "boolean") return "eof must be a boolean";
  if (m.session !== undefined && (typeof m.session !== "object" || m.session === null || Array.isArray(m.session))) {
    return "session must be an object";
  }
  if (!Array.isArray(m.objects)) return "objects must be an array";
  let previousEnd: number = m.startOffset;
  for (const o of m.objects as unknown[]) {
    if (typeof o !== "object" || o === null) return "an object entry is not an object";
    const { key, firstOffset, endOffset, bytes } = o as Record<string, unknown>;
    if (typeof key !== "string" || !isCount(firstOffset) || !isCount(endOffset) || !isCount(bytes) || endOffset < firstOffset) {
      return `bad object entry ${JSON.stringify(o)}`;
    }
    if (firstOffset !== previousEnd) return `objects not contiguous from the start: one starts at ${firstOffset}, expected ${previousEnd}`;
    previousEnd = endOffset;
  }
  if (m.endOffset < previousEnd) return `endOffset ${m.endOffset} below the last object's end ${previousEnd}`;
  if (!Array.isArray(m.walRanges)) return "walRanges must be an array";
  for (const r of m.walRanges as unknown[]) {
    if (typeof r !== "object" || r === null) return "a WAL range is not an object";
    const { nodeId, fromSeq, toSeq } = r as Record<string, unknown>;
    if (typeof nodeId !== "string" || !isCount(fromSeq) || !isCount(toSeq) || toSeq < fromSeq) return `bad WAL range ${JSON.stringify(r)}`;
  }
  if (m.closed !== undefined) {
    if (typeof m.closed !== "object" || m.closed === null) return "closed must be an object";
    const { atEpoch, endOffset } = m.closed as Record<string, unknown>;
    if (!isCount(atEpoch) || !isCount(endOffset) || atEpoch > m.epoch) return `bad closed ${JSON.stringify(m.closed)}`;
  }
  return null;
}
