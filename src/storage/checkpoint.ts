// A node's WAL checkpoint: `nodes/<node>/checkpoint` says everything in its WAL chain below `walSeq` is in
// stream objects, so replay starts there and WAL objects below it may be deleted. JSON, replaced only by
// compare-and-swap, and it never moves backwards. A writer at an epoch below the recorded one is refused.

import { listAll, type ObjectStore } from "./object-store.ts";
import { checkpointKey, parseWalKey, walKey, walPrefix } from "./keys.ts";
import { CorruptObjectError, checkSafeU64 } from "./record-codec.ts";
import { compareAndSwap, readDocument, type ManifestWriteOptions } from "./document-cas.ts";
import { StaleEpochError } from "./manifest.ts";

const CHECKPOINT_FORMAT_VERSION = 1;

interface Checkpoint {
  nodeId: string;
  /** Every WAL object of the node below this seq is compacted. */
  walSeq: number;
  /** The epoch of the incarnation that last moved it. */
  epoch: number;
}

export interface CheckpointSnapshot {
  checkpoint: Checkpoint;
  etag: string;
}

export class CheckpointCorruptError extends CorruptObjectError {
  override readonly name = "CheckpointCorruptError";
}

/** Deleting WAL the checkpoint does not cover would lose uncompacted records. */
export class UncheckpointedDeleteError extends Error {
  override readonly name = "UncheckpointedDeleteError";
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function encodeCheckpoint(checkpoint: Checkpoint): Uint8Array {
  checkSafeU64(checkpoint.walSeq, "walSeq");
  checkSafeU64(checkpoint.epoch, "epoch");
  const { nodeId, walSeq, epoch } = checkpoint;
  return encoder.encode(JSON.stringify({ formatVersion: CHECKPOINT_FORMAT_VERSION, nodeId, walSeq, epoch }));
}

function decodeCheckpoint(bytes: Uint8Array, key: string, nodeId: string): Checkpoint {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new CheckpointCorruptError(key, "not UTF-8 JSON");
  }
  const v = value as Record<string, unknown> | null;
  const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (typeof v !== "object" || v === null || v.formatVersion !== CHECKPOINT_FORMAT_VERSION) {
    throw new CheckpointCorruptError(key, "not a checkpoint of format version 1");
  }
  if (v.nodeId !== nodeId || !isCount(v.walSeq) || !isCount(v.epoch) || Object.keys(v).length !== 4) {
    throw new CheckpointCorruptError(key, `malformed: ${JSON.stringify(v)}`);
  }
  return { nodeId, walSeq: v.walSeq, epoch: v.epoch };
}

function codec(nodeId: string): { encode: (c: Checkpoint) => Uint8Array; decode: (bytes: Uint8Array) => Checkpoint } {
  const key = checkpointKey(nodeId);
  return { encode: encodeCheckpoint, decode: (bytes) => decodeCheckpoint(bytes, key, nodeId) };
}

export async function readCheckpoint(store: ObjectStore, nodeId: string): Promise<CheckpointSnapshot | null> {
  const raw = await readDocument(store, checkpointKey(nodeId), codec(nodeId).decode);
  return raw === null ? null : { checkpoint: raw.value, etag: raw.etag };
}

/**
 * Moves the checkpoint of `nodeId` up to `walSeq`, as the incarnation at `epoch` (creating it if absent).
 * A lower or equal `walSeq` writes nothing (it never moves backwards) and returns the current one.
 * Throws `StaleEpochError` when the recorded epoch is above `epoch`.
 */
export async function advanceCheckpoint(
  store: ObjectStore,
  nodeId: string,
  epoch: number,
  walSeq: number,
  options: ManifestWriteOptions = {},
): Promise<CheckpointSnapshot> {
  const { value, etag } = await compareAndSwap(store, checkpointKey(nodeId), codec(nodeId), undefined, (current) => {
    if (current !== null && current.epoch > epoch) {
      throw new StaleEpochError(`checkpoint of ${nodeId} is at epoch ${current.epoch}, writer at ${epoch}`, current.epoch);
    }
    if (current !== null && current.walSeq >= walSeq) return current;
    return { nodeId, walSeq, epoch };
  }, options);
  return { checkpoint: value, etag };
}

/**
 * Deletes the WAL objects of `nodeId` in [fromSeq, seq), except the seqs in `keepSeqs`. Refuses
 * (`UncheckpointedDeleteError`) when the stored checkpoint does not cover `seq`: only compacted WAL may go.
 *
 * Seals must be kept (`keepSeqs`): a seal fences the incarnation whose next write would land on its seq; a
 * freed seq would let that incarnation, should it still run, write there and acknowledge an append that
 * replay (which starts at the checkpoint, above it) never sees. The caller lists the seals it knows (those
 * its replay passed over, and its own), and `fromSeq` is where its own chain began: below it, only seals
 * kept by earlier incarnations (and what an interrupted clean-up left) remain, and they are left alone.
 */
export async function deleteWalBelow(
  store: ObjectStore,
  nodeId: string,
  seq: number,
  options: { concurrentDeletes?: number; fromSeq?: number; keepSeqs?: ReadonlySet<number> } = {},
): Promise<{ deleted: number }> {
  const bound = walKey(nodeId, seq);
  const checkpoint = await readCheckpoint(store, nodeId);
  const covered = checkpoint?.checkpoint.walSeq ?? 0;
  if (seq > covered) throw new UncheckpointedDeleteError(`cannot delete the WAL of ${nodeId} below ${seq}: checkpoint is at ${covered}`);

  const fromSeq = options.fromSeq ?? 0;
  const keys: string[] = [];
  const listing = fromSeq > 0 ? { startAfter: walKey(nodeId, fromSeq - 1) } : {};
  for await (const object of listAll(store, walPrefix(nodeId), listing)) {
    if (object.key >= bound) break; // listed in key order, which is seq order
    if (options.keepSeqs?.has(parseWalKey(object.key).seq) === true) continue;
    keys.push(object.key);
  }
  const concurrentDeletes = Math.max(1, options.concurrentDeletes ?? 8);
  for (let i = 0; i < keys.length; i += concurrentDeletes) {
    await Promise.all(keys.slice(i, i + concurrentDeletes).map((key) => store.delete(key)));
  }
  return { deleted: keys.length };
}
