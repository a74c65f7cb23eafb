// Compaction of a node's WAL into stream objects, then the checkpoint, then WAL clean-up.
//
// 1. Snapshot: one WAL append holding a `snapshot` record for every stream (its configuration, tail,
//    eof, producers and Stream-Seq as decided at that instant) and a `mark`; it lands at seq X, after
//    every append decided before it. Replay from X rebuilds every stream from these records alone.
// 2. Every data record of [checkpoint, X) is written into stream objects, one per stream, each listed in
//    the stream's manifest (opened at the stream's epoch first). The records come from the tail cache,
//    which holds every acknowledged byte not yet compacted (no WAL GETs); should a stream's cached records
//    not cover its range exactly, the whole compaction reads them back from the WAL instead.
// 3. The checkpoint moves to X; WAL objects below X are deleted.
// A crash anywhere leaves a consistent store: before step 3 replay starts at the old checkpoint (records
// already in stream objects are found in the manifest and skipped, and snapshot records of streams replay
// already knows are passed over); after it, replay starts at the snapshot.
import { advanceCheckpoint, deleteWalBelow, readCheckpoint } from "../../storage/checkpoint.ts";
import { compactStream } from "../../storage/compaction.ts";
import { openManifest, readManifest, StaleEpochError, type ManifestSnapshot } from "../../storage/manifest.ts";
import { NonContiguousRecordsError } from "../../storage/stream-object.ts";
import { forgetStale } from "./release.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { isEof, RECORD_FLAG_EOF, type WalRecord } from "../../storage/record-codec.ts";
import { replayChain } from "../../storage/wal-chain.ts";
import { type NodeContext } from "../context.ts";
import { encodeRecordMeta } from "../state/record-meta.ts";
import { snapshotRecord } from "./snapshot-record.ts";
import { isGone, type StreamState } from "../state/stream-registry.ts";

/** Streams whose objects and manifests one compaction writes at once. */
const COMPACT_CONCURRENCY = 16;
/** The stream id of the `mark` record (not a stream: ids from the metadata log look like `s<n>`). */
const MARK_STREAM_ID = "~mark";

export interface CompactionReport {
  readonly fromSeq: number;
  readonly snapshotSeq: number;
  readonly streamsCompacted: number;
  readonly recordsCompacted: number;
  readonly walObjectsDeleted: number;
}

/** Held by a compaction and by a hand-off's flush: both write stream objects and manifests. */
export const STORE_WRITE_LOCK = "~stream-objects";

/** What a WAL clean-up must leave: where this incarnation's chain began, and the seals in it. */
export interface WalKeep {
  readonly fromSeq: number;
  readonly seals: ReadonlySet<number>;
}

export async function compactNode(ctx: NodeContext, store: ObjectStore, keep: WalKeep): Promise<CompactionReport> {
  const stale: string[] = [];
  const report = await ctx.locks.run(STORE_WRITE_LOCK, () => compactLocked(ctx, store, stale, keep));
  // Outside the store lock: a release takes the name lock, which a hand-off holds while it waits for it.
  for (const streamId of stale) await forgetStale(ctx, streamId);
  return report;
}

async function compactLocked(ctx: NodeContext, store: ObjectStore, stale: string[], keep: WalKeep): Promise<CompactionReport> {
  const checkpoint = await readCheckpoint(store, ctx.nodeId);
  const fromSeq = checkpoint?.checkpoint.walSeq ?? 0;

  // 1. The snapshot, decided synchronously: it follows every append decided before it.
  const streams = ctx.registry.snapshotStreams();
  const records = streams.map(snapshotRecord);
  // What each stream had decided at that instant: once the snapshot lands, all of it is acknowledged.
  const decided = new Map(streams.map((stream) => [stream.id, { tail: stream.decided.tail, eof: stream.decided.eof }]));
  records.push({
    streamId: MARK_STREAM_ID,
    streamEpoch: 0,
    firstOffset: 0,
    flags: 0,
    meta: encodeRecordMeta({ k: "mark" }),
    data: new Uint8Array(0),
  });
  const { seq: snapshotSeq } = await ctx.wal.append(records);

  // 2. The data of [fromSeq, snapshotSeq) into stream objects, stream by stream: from the tail cache, which
  //    holds every acknowledged byte not yet compacted, or (if it somehow does not) read back from the WAL.
  const byStream = fromMemory(ctx, decided) ?? (await fromWal(store, ctx.nodeId, fromSeq, snapshotSeq, decided));
  let recordsCompacted = 0;
  let streamsCompacted = 0;
  // Streams side by side (their objects and manifests are their own): one at a time, a compaction of
  // 50,000 small streams took minutes of store round trips, during which nothing could be evicted.
  // A failure stops the others taking more, and the compaction ends (with that error) only once they all
  // stopped: nothing of it runs on outside the store lock.
  const queue = [...byStream];
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      try {
        const compacted = await compactEntry(ctx, store, next[0], next[1], snapshotSeq, stale);
        recordsCompacted += compacted;
        if (compacted > 0) streamsCompacted++;
      } catch (error) {
        queue.length = 0;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(COMPACT_CONCURRENCY, queue.length) }, worker));
  const failed = settled.find((result) => result.status === "rejected");
  if (failed !== undefined) throw failed.reason;

  // 3. Checkpoint, then WAL clean-up below it (seals stay: see deleteWalBelow).
  await advanceCheckpoint(store, ctx.nodeId, ctx.nodeEpoch, snapshotSeq);
  const { deleted } = await deleteWalBelow(store, ctx.nodeId, snapshotSeq, { fromSeq: keep.fromSeq, keepSeqs: keep.seals });
  return { fromSeq, snapshotSeq, streamsCompacted, recordsCompacted, walObjectsDeleted: deleted };
}

/**
 * The records of one stream in [checkpoint, snapshot) into a stream object (those a hand-off did not flush
 * already). Returns how many records went into a new object; a stale copy goes to `stale`.
 */
async function compactEntry(
  ctx: NodeContext,
  store: ObjectStore,
  streamId: string,
  replayed: readonly WalRecord[],
  snapshotSeq: number,
  stale: string[],
): Promise<number> {
  const stream = ctx.registry.get(streamId);
  if (stream === undefined || isGone(stream)) return 0; // deleted or handed off: nothing to keep here
  // Records a hand-off already flushed (an earlier ownership of this stream, or a fork's source flushed
  // for it) are in stream objects: only what follows them is compacted.
  const done = ctx.registry.compactedEnd(stream);
  const replayedRecords = replayed.filter((record) => record.firstOffset >= done);
  if (replayedRecords.length === 0) return 0;
  const writerEpoch = Math.max(stream.epoch, ...replayedRecords.map((record) => record.streamEpoch));
  // Written at the epoch that writes them, as the tail cache's records are: records read back from the WAL
  // carry the epoch of their append, which an open since then (this node's own) may have superseded.
  const streamRecords = replayedRecords.map((record) => (record.streamEpoch === writerEpoch ? record : { ...record, streamEpoch: writerEpoch }));
  try {
    const known = await ensureStreamManifest(store, stream, writerEpoch);
    return await compactOne(ctx, store, stream, writerEpoch, streamRecords, snapshotSeq, known);
  } catch (error) {
    // Another node opened the stream at a later epoch: this is a stale copy (a crash after the hand-off's
    // close, before its release record), and its data was flushed by the hand-off. Let it go.
    if (!(error instanceof StaleEpochError) || stream.phase.kind === "opened") throw error;
    stale.push(stream.id);
    return 0;
  }
}

/**
 * One stream's records into one stream object, listed in its manifest; the tail cache then lets go of the
 * bytes (reads go to the object). A compaction that crashed after its objects landed but before the
 * checkpoint moved left objects this incarnation does not know: their records are skipped and the cache
 * points at them instead. Returns how many records went into a new object.
 */
async function compactOne(
  ctx: NodeContext,
  store: ObjectStore,
  stream: StreamState,
  writerEpoch: number,
  records: readonly WalRecord[],
  snapshotSeq: number,
  known: ManifestSnapshot | undefined,
): Promise<number> {
  const walCovered = [{ nodeId: ctx.nodeId, toSeq: snapshotSeq }];
  let rest = records;
  try {
    const { object } = await compactStream(store, { streamId: stream.id, writerEpoch, records: rest, walCovered, ...(known === undefined ? {} : { known }) });
    ctx.registry.replaceWithObject(stream, object.key, object.firstOffset, object.endOffset);
    return rest.length;
  } catch (error) {
    if (!(error instanceof NonContiguousRecordsError)) throw error;
    const known = await readManifest(store, stream.id);
    const objects = (known?.manifest.objects ?? []).filter((ref) => ref.endOffset > rest[0]!.firstOffset);
    for (const ref of objects) ctx.registry.replaceWithObject(stream, ref.key, ref.firstOffset, ref.endOffset);
    const end = objects.at(-1)?.endOffset ?? 0;
    rest = rest.filter((record) => record.firstOffset >= end);
    if (objects.length === 0 || rest.length === 0) {
      if (objects.length === 0) throw error;
      return 0;
    }
    if (rest[0]!.firstOffset !== end) throw error; // the objects end inside a record: not ours to mend
  }
  const { object } = await compactStream(store, { streamId: stream.id, writerEpoch, records: rest, walCovered });
  ctx.registry.replaceWithObject(stream, object.key, object.firstOffset, object.endOffset);
  return rest.length;
}

/**
 * Each stream's records in [compacted end, tail at the snapshot) from the tail cache, as WAL records; null
 * when some stream's cached records do not cover that range exactly (then the WAL is read back instead).
 */
function fromMemory(ctx: NodeContext, decided: ReadonlyMap<string, { tail: number; eof: boolean }>): Map<string, WalRecord[]> | null {
  const byStream = new Map<string, WalRecord[]>();
  for (const [streamId, { tail, eof }] of decided) {
    const stream = ctx.registry.get(streamId);
    if (stream === undefined || isGone(stream)) continue;
    let at = ctx.registry.compactedEnd(stream);
    const list: WalRecord[] = [];
    for (const record of stream.records) {
      if (record.data === null || record.end <= at || record.first >= tail) continue;
      if (record.first !== at || record.end > tail) return null;
      list.push({ streamId, streamEpoch: stream.epoch, firstOffset: record.first, flags: 0, meta: EMPTY_META, data: record.data });
      at = record.end;
    }
    if (at < tail) return null;
    const last = list.at(-1);
    if (last === undefined) continue;
    if (eof) list[list.length - 1] = { ...last, flags: RECORD_FLAG_EOF };
    byStream.set(streamId, list);
  }
  return byStream;
}

/**
 * The data records below each stream's snapshot tail in [fromSeq, snapshotSeq] of the node's WAL, by stream
 * (the compaction of before the cache). The snapshot's own object counts too: appends queued before the
 * snapshot go out in the same group commit, ahead of its records, and replay from the checkpoint (that
 * object) passes over data of streams it has not met yet, so they must be in stream objects.
 */
async function fromWal(
  store: ObjectStore,
  nodeId: string,
  fromSeq: number,
  snapshotSeq: number,
  decided: ReadonlyMap<string, { tail: number }>,
): Promise<Map<string, WalRecord[]>> {
  const byStream = new Map<string, WalRecord[]>();
  for await (const object of replayChain(store, { nodeId, fromSeq, toSeq: snapshotSeq + 1 })) {
    for (const record of object.records) {
      if (record.data.byteLength === 0 && !isEof(record)) continue;
      const tail = decided.get(record.streamId)?.tail;
      // After the snapshot (the next compaction's), except a closing record at the tail, which belongs to it.
      const after = record.firstOffset > (tail ?? -1) || (record.firstOffset === tail && record.data.byteLength > 0);
      if (tail === undefined || after) continue;
      let list = byStream.get(record.streamId);
      if (list === undefined) byStream.set(record.streamId, (list = []));
      list.push(record);
    }
  }
  return byStream;
}

const EMPTY_META = new Uint8Array(0);

/**
 * The stream's manifest exists at `epoch` (created at its first offset, or raised to it): what was written,
 * or null when it already was at `epoch`.
 */
export async function ensureManifest(store: ObjectStore, streamId: string, base: number, epoch: number): Promise<ManifestSnapshot | null> {
  try {
    return (await openManifest(store, streamId, epoch, { startOffset: base })).snapshot;
  } catch (error) {
    if (error instanceof StaleEpochError && error.currentEpoch === epoch) return null; // already open at it
    throw error;
  }
}

/** ensureManifest, skipped when this node already saw the manifest at `epoch` (StreamState.manifestEpoch). */
export async function ensureStreamManifest(store: ObjectStore, stream: StreamState, epoch: number): Promise<ManifestSnapshot | undefined> {
  if (stream.manifestEpoch === epoch) return undefined;
  const written = await ensureManifest(store, stream.id, stream.base, epoch);
  stream.manifestEpoch = epoch;
  return written ?? undefined;
}
