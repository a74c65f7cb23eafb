// Replay of a node's WAL chain (table WR of docs/storage-format.md; the seal is in wal-seal.ts).
//
// Every object in [fromSeq, toSeq) in seq order, checksums verified. A missing seq, or a corrupt or
// misplaced object, is a `WalCorruptError` naming the key. Seals (earlier incarnations, and the fencing
// seal's own window) are passed over. A data object written at an epoch below a seal before it is a fenced
// writer's garbage: the seal lay on its path, and it acknowledges in seq order, so it never acknowledged it.
// On restart: seal first, then replay [checkpoint, sealSeq), then write from sealSeq + 1.

import type { ObjectStore } from "./object-store.ts";
import { walKey } from "./keys.ts";
import type { WalRecord } from "./record-codec.ts";
import { WalCorruptError, decodeWalObject } from "./wal-format.ts";
import { readOrNull } from "./create-once.ts";
import { StaleEpochError } from "./manifest.ts";
import { resolveRetry, retrying, type RetryOptions } from "./retry-policy.ts";

export interface ReplayOptions {
  nodeId: string;
  fromSeq: number;
  /** Exclusive; normally the seq of the seal that fenced the chain. */
  toSeq: number;
  /** Objects fetched ahead of the one being yielded (default 4). */
  readAheadObjects?: number;
  /** Told the seq of every seal passed over (they must outlive a clean-up: see deleteWalBelow). */
  onSeal?: (seq: number) => void;
  /** Told the seq of every fenced writer's object passed over (WR2). */
  onGarbage?: (seq: number) => void;
  /**
   * The replaying owner's epoch (a recovery: its seal's). An object of a higher epoch in the range means a
   * newer owner sealed or wrote below this one's seal: this owner is stale and must not write (WR4).
   */
  ownerEpoch?: number;
  /** Each read is retried after a retryable failure, within this budget (a start should not fail on one). */
  retry?: RetryOptions;
}

export interface ReplayedWalObject {
  key: string;
  seq: number;
  nodeEpoch: number;
  records: WalRecord[];
}

/** Yields the data objects of [fromSeq, toSeq) in seq order, verified; throws `WalCorruptError` naming the key. */
export async function* replayChain(store: ObjectStore, options: ReplayOptions): AsyncGenerator<ReplayedWalObject> {
  const { nodeId, fromSeq, toSeq } = options;
  walKey(nodeId, fromSeq);
  const readAhead = Math.max(1, options.readAheadObjects ?? 4);
  const retry = resolveRetry(options.retry);
  const pending: Promise<Uint8Array | null>[] = [];
  let nextFetch = fromSeq;
  let maxSealEpoch: number | undefined;
  let lastDataEpoch: number | undefined;
  let sealSinceData = false;

  for (let seq = fromSeq; seq < toSeq; seq++) {
    while (nextFetch < toSeq && nextFetch < seq + readAhead) {
      const key = walKey(nodeId, nextFetch++);
      const fetching = retrying(retry, () => readOrNull(store, key));
      // Handled here so an abandoned read-ahead never becomes an unhandled rejection; awaited below.
      void fetching.catch(() => undefined);
      pending.push(fetching);
    }
    const key = walKey(nodeId, seq);
    const body = await pending.shift()!;
    if (body === null) throw new WalCorruptError(key, `missing: the chain has a gap at seq ${seq} below ${toSeq}`);
    const object = decodeWalObject(body, key);
    if (object.nodeId !== nodeId || object.seq !== seq) {
      throw new WalCorruptError(key, `misplaced: the header names ${object.nodeId} seq ${object.seq}`);
    }
    const epoch = object.kind === "seal" ? object.sealEpoch : object.nodeEpoch;
    if (options.ownerEpoch !== undefined && epoch > options.ownerEpoch) {
      throw new StaleEpochError(`WAL chain of ${nodeId}: ${key} is at epoch ${epoch}, above this owner's ${options.ownerEpoch}`, epoch);
    }
    if (object.kind === "seal") {
      options.onSeal?.(seq);
      maxSealEpoch = Math.max(maxSealEpoch ?? 0, object.sealEpoch);
      sealSinceData = true;
      continue;
    }
    if (maxSealEpoch !== undefined && object.nodeEpoch < maxSealEpoch) {
      options.onGarbage?.(seq); // WR2: written by a writer a seal below it had fenced, never acknowledged
      continue;
    }
    if (lastDataEpoch !== undefined && object.nodeEpoch !== lastDataEpoch && !sealSinceData) {
      throw new WalCorruptError(key, `writer epoch changed from ${lastDataEpoch} to ${object.nodeEpoch} without a seal`);
    }
    lastDataEpoch = object.nodeEpoch;
    sealSinceData = false;
    yield { key, seq, nodeEpoch: object.nodeEpoch, records: object.records };
  }
}

/** `replayChain` collected into an array. */
export async function readChain(store: ObjectStore, options: ReplayOptions): Promise<ReplayedWalObject[]> {
  const objects: ReplayedWalObject[] = [];
  for await (const object of replayChain(store, options)) objects.push(object);
  return objects;
}
