// Start-up of a node incarnation: fence the node's own WAL chain with a seal at the new epoch, replay
// [checkpoint, seal) into stream state, and hand back the seq the new WAL writer starts at. Replay
// rebuilds, per stream, what the records carry: configuration (create), data and offsets, eof, producer
// state and Stream-Seq (append meta), soft deletes and removals. Lost: TTL idle clocks (every stream's
// last access becomes the restart time) and in-memory stream epochs (streams re-open lazily).
import type { StreamConfig } from "../../core/protocol/stream-config.ts";
import { readCheckpoint } from "../../storage/checkpoint.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { isEof, type WalRecord } from "../../storage/record-codec.ts";
import { replayChain } from "../../storage/wal-chain.ts";
import { sealChain } from "../../storage/wal-seal.ts";
import { WalCorruptError } from "../../storage/wal-format.ts";

import { decodeRecordMeta, type RecordMeta } from "../state/record-meta.ts";
import { isGone, applyInitial, memoryRecord, newStreamState, type StreamRegistry, type StreamState } from "../state/stream-registry.ts";

/** Replays of one recovery: a checkpoint moved by the fenced incarnation restarts it, not more than this. */
const MAX_REPLAY_ATTEMPTS = 3;

export interface RecoveryResult {
  readonly fromSeq: number;
  readonly sealSeq: number;
  readonly objectsReplayed: number;
  readonly recordsReplayed: number;
  readonly streams: number;
  /** Every seal in [fromSeq, sealSeq], the top one included: a WAL clean-up keeps them (deleteWalBelow). */
  readonly seals: ReadonlySet<number>;
  /** WAL bytes read by the replay. */
  readonly bytesReplayed: number;
}

/** A node's own start: it seals its chain at its new epoch. */
export function recoverNode(store: ObjectStore, registry: StreamRegistry, nodeId: string, nodeEpoch: number, nowMs: number): Promise<RecoveryResult> {
  return recoverChain(store, registry, { nodeId, sealedBy: nodeId, sealEpoch: nodeEpoch }, nowMs);
}

/** Whose chain is recovered, by whom, fencing which epochs (a takeover seals a dead node's chain at its epoch + 1). */
export interface ChainRecovery {
  readonly nodeId: string;
  readonly sealedBy: string;
  readonly sealEpoch: number;
}

/**
 * Seals the chain of `chain.nodeId` and replays [checkpoint, seal) into `registry`.
 *
 * The incarnation the seal fences may still be running (a zombie) and finish a compaction that landed
 * below the seal: it moves the checkpoint past the one read here and deletes the WAL objects below it, so
 * the replay meets a gap. Such a gap is read again against the checkpoint: when it moved, the replay starts
 * over from there (what that incarnation's own next start would do); when it did not, the gap is
 * corruption and stays an error.
 */
export async function recoverChain(store: ObjectStore, registry: StreamRegistry, chain: ChainRecovery, nowMs: number): Promise<RecoveryResult> {
  const { nodeId } = chain;
  const checkpoint = (await readCheckpoint(store, nodeId))?.checkpoint.walSeq ?? 0;
  const sealed = await sealChain(store, { nodeId, fromSeq: checkpoint, sealedBy: chain.sealedBy, sealEpoch: chain.sealEpoch });
  const { sealSeq } = sealed;
  let { fromSeq } = sealed;
  for (let attempt = 1; ; attempt++) {
    try {
      return await replayInto(store, registry, { nodeId, fromSeq, sealSeq, ownerEpoch: chain.sealEpoch }, nowMs);
    } catch (error) {
      const moved = error instanceof WalCorruptError && attempt < MAX_REPLAY_ATTEMPTS ? ((await readCheckpoint(store, nodeId))?.checkpoint.walSeq ?? 0) : fromSeq;
      if (moved <= fromSeq || moved > sealSeq) throw error;
      registry.clear();
      fromSeq = moved;
    }
  }
}

/** Replays [fromSeq, sealSeq) of the node's chain into `registry`, leaving snapshotted streams to list their objects at first read. */
async function replayInto(
  store: ObjectStore,
  registry: StreamRegistry,
  range: { readonly nodeId: string; readonly fromSeq: number; readonly sealSeq: number; readonly ownerEpoch: number },
  nowMs: number,
): Promise<RecoveryResult> {
  const { nodeId, fromSeq, sealSeq, ownerEpoch } = range;
  const seals = new Set([sealSeq]);
  let bytesReplayed = 0;
  let objectsReplayed = 0;
  let recordsReplayed = 0;
  const snapshotted = new Set<string>();
  // The tail a snapshotted stream had at its snapshot: its stream objects end there.
  const snapshotTails = new Map<string, number>();
  for await (const object of replayChain(store, { nodeId, fromSeq, toSeq: sealSeq, ownerEpoch, onSeal: (seq) => seals.add(seq) })) {
    objectsReplayed++;
    for (const record of object.records) {
      bytesReplayed += record.data.byteLength;
      if (replayRecord(registry, record, nowMs, snapshotted)) snapshotTails.set(record.streamId, record.firstOffset);
      recordsReplayed++;
    }
  }
  // Data below a snapshot's tail is in stream objects; the first read lists them (one manifest read), so a
  // start reads no manifest, however many streams the node holds.
  for (const streamId of snapshotted) {
    const stream = registry.get(streamId);
    const tail = snapshotTails.get(streamId);
    if (stream !== undefined && !isGone(stream) && tail !== undefined && tail > stream.base) stream.unlistedBelow = tail;
  }
  return { fromSeq, sealSeq, objectsReplayed, recordsReplayed, streams: registry.size, seals, bytesReplayed };
}

/**
 * Applies one replayed record; records of streams already removed are passed over. True when the record
 * (re)built a stream from a snapshot: its data below the record's offset is in stream objects.
 */
export function replayRecord(
  registry: StreamRegistry,
  record: WalRecord,
  nowMs: number,
  snapshotted?: Set<string>,
): boolean {
  const meta = decodeRecordMeta(record.meta);
  if (meta.k === "mark") return false;
  const existing = registry.get(record.streamId);
  if (meta.k === "snapshot" && (existing === undefined || isGone(existing))) {
    // A compaction's snapshot replayed from its checkpoint, or a stream handed to this node (adopted: see
    // ownership/adopt.ts), possibly one it handed away before and still keeps for its forks.
    const stream = replaySnapshot(registry, record, meta, existing, nowMs);
    snapshotted?.add(stream.id);
    return true;
  }
  if (meta.k === "create") {
    if (existing !== undefined) throw new Error(`replay: stream ${record.streamId} created twice`);
    const stream = replayedStream(record, meta);
    if (record.firstOffset !== stream.base) throw new Error(`replay: ${record.streamId} created at ${record.firstOffset}`);
    applyInitial(stream, record.data, isEof(record));
    stream.lastAccessMs = nowMs;
    registry.add(stream);
    registry.attachFork(stream);
    return false;
  }
  if (existing === undefined || isGone(existing)) return false;
  existing.epoch = Math.max(existing.epoch, record.streamEpoch);
  switch (meta.k) {
    case "append":
      replayAppend(existing, record, meta);
      return false;
    case "soft-delete":
      existing.lifecycle = "soft-deleted";
      return false;
    case "snapshot":
      return false; // replay began before this compaction: the stream's state is already rebuilt
    case "delete":
    case "release": {
      registry.remove(existing);
      registry.detachFork(existing);
      return false;
    }
  }
}

/** A stream (re)built from a snapshot record: its state at the snapshot, its data below `tail` in stream objects. */
function replaySnapshot(
  registry: StreamRegistry,
  record: WalRecord,
  meta: Extract<RecordMeta, { k: "snapshot" }>,
  existing: StreamState | undefined,
  nowMs: number,
): StreamState {
  const stream = replayedStream(record, meta);
  // Data below the snapshot's tail is in stream objects: loadCompacted reads it after the replay.
  stream.tail = meta.tail;
  stream.eof = meta.eof;
  stream.lifecycle = meta.softDeleted ? "soft-deleted" : "live";
  stream.lastAccessMs = nowMs;
  const decided = stream.decided;
  decided.tail = meta.tail;
  decided.eof = meta.eof;
  decided.lastStreamSeq = meta.q;
  for (const [producerId, epoch, lastSeq, lastUpdatedMs] of meta.producers) {
    decided.producers.set(producerId, { epoch, lastSeq, lastUpdatedMs });
  }
  stream.forkCount = existing?.forkCount ?? 0;
  registry.add(stream);
  registry.attachFork(stream);
  return stream;
}

/** An append record replayed onto its stream: data, tail, eof, then the producer state and Stream-Seq it committed. */
function replayAppend(existing: StreamState, record: WalRecord, meta: Extract<RecordMeta, { k: "append" }>): void {
  if (record.firstOffset !== existing.tail) {
    throw new Error(`replay: ${record.streamId} record at ${record.firstOffset}, tail ${existing.tail}`);
  }
  if (record.data.byteLength > 0) {
    existing.records.push(memoryRecord(record.firstOffset, record.data));
    existing.memoryBytes += record.data.byteLength;
  }
  existing.tail += record.data.byteLength;
  if (isEof(record)) existing.eof = true;
  const decided = existing.decided;
  decided.tail = existing.tail;
  decided.eof = existing.eof;
  // The same steps as the append that wrote the record (paths/append.ts): pruned ids first, then `p`.
  for (const producerId of meta.x ?? []) decided.producers.delete(producerId);
  if (meta.p !== undefined) {
    const [producerId, epoch, lastSeq] = meta.p;
    decided.producers.set(producerId, { epoch, lastSeq, lastUpdatedMs: meta.at });
  }
  if (meta.q !== undefined) decided.lastStreamSeq = meta.q;
}

/** A stream rebuilt from its create or snapshot record: not opened by this incarnation yet. */
function replayedStream(record: WalRecord, meta: { readonly name: string; readonly config: StreamConfig; readonly at: number }): StreamState {
  return newStreamState({
    id: record.streamId,
    name: meta.name,
    config: meta.config,
    createdAtMs: meta.at,
    epoch: record.streamEpoch,
    opened: false,
  });
}
