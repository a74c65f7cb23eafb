// Seal and replay of a node's WAL chain.
//
// Seal: claim the lowest free seq of the chain with a seal object (`If-None-Match: *`). The old writer's next
// PUT collides with it, so it can never acknowledge again. Because writers keep one PUT in flight, the chain
// is dense and its lowest free seq is one past its highest object. A 412 means the old writer's PUT landed
// first: claim a wider window above it (see sealChain).
//
// Replay: every object in [fromSeq, toSeq) in seq order, checksums verified. A missing seq, a corrupt or
// misplaced object, or a data object that could not have been written by a one-in-flight writer after the
// seals before it, is a `WalCorruptError` naming the key. Seals in the range (earlier incarnations) are
// passed over. On restart: seal first, then replay [checkpoint, sealSeq), then write from sealSeq + 1.

import { listAll, type ObjectStore } from "./object-store.ts";
import { readCheckpoint } from "./checkpoint.ts";
import { parseWalKey, walKey, walPrefix } from "./keys.ts";
import { StaleEpochError } from "./manifest.ts";
import type { WalRecord } from "./record-codec.ts";
import { WalCorruptError, decodeWalObject, encodeWalObject } from "./wal-format.ts";
import { putCreateOnce, readOrNull } from "./create-once.ts";
import { resolveRetry, type RetryOptions } from "./retry-policy.ts";

export interface SealOptions {
  nodeId: string;
  /** Where the live chain starts (the node's checkpoint); everything below may be deleted. */
  fromSeq: number;
  /** The node performing the seal. */
  sealedBy: string;
  /** The epoch of the chain's new owner. */
  sealEpoch: number;
  /** Windows tried before giving up against a writer that keeps winning (default 12). */
  maxSealRounds?: number;
  retry?: RetryOptions;
}

/** The old writer won `maxSealRounds` windows in a row. */
class SealContentionError extends Error {
  override readonly name = "SealContentionError";
}

/** The widest window of seqs claimed at once. */
const MAX_SEAL_WINDOW = 64;

/**
 * Fences the chain and returns the seq of the top seal: replay [fromSeq, sealSeq), write from sealSeq + 1.
 *
 * A live old writer appends one object after another, so a sealer that claims one seq at a time, and
 * reads what beat it, can trail it forever. Instead each round claims a window of seqs at once, doubling
 * after every lost round. The old writer, one PUT in flight, can only take a prefix of the window: it
 * writes seq n + 1 only after n landed, so once one of our seals lands it collides with it and stops, and
 * every later seq of the window is ours. The chain stays dense; the extra seals are passed over by replay.
 */
export async function sealChain(store: ObjectStore, options: SealOptions): Promise<{ sealSeq: number }> {
  const { nodeId, sealedBy, sealEpoch } = options;
  const retry = resolveRetry(options.retry);
  const maxSealRounds = options.maxSealRounds ?? 12;
  const last = await lastObjectSeq(store, nodeId, options.fromSeq);
  // Our own seal on top already (a repeated call): sealing again would only fence ourselves. Otherwise
  // `inspect` refuses when a newer owner wrote the top object.
  if (last !== null && (await inspect(store, nodeId, last, sealedBy, sealEpoch)) === "ours") return { sealSeq: last };
  let seq = last === null ? options.fromSeq : last + 1;
  for (let round = 0, window = 1; round < maxSealRounds; round++, seq += window, window = Math.min(2 * window, MAX_SEAL_WINDOW)) {
    const outcomes = await Promise.all(
      Array.from({ length: window }, (_, i) =>
        putCreateOnce(store, walKey(nodeId, seq + i), encodeWalObject({ kind: "seal", nodeId, seq: seq + i, sealedBy, sealEpoch }), retry),
      ),
    );
    const firstWon = outcomes.findIndex((outcome) => outcome.kind === "created");
    if (firstWon < 0) {
      // The old writer took the whole window: it must be older than us (else we are the stale one).
      await inspect(store, nodeId, seq + window - 1, sealedBy, sealEpoch);
      continue;
    }
    if (await crossedBySealer(store, nodeId, outcomes, { seq, firstWon, sealedBy, sealEpoch })) continue;
    if (firstWon > 0) await inspect(store, nodeId, seq + firstWon - 1, sealedBy, sealEpoch);
    // A seq below the old writer's head can be free again: its compaction deleted it below a checkpoint it
    // moved while our PUT was on its way. Then the writer is above our seal and not fenced: seal above it.
    const above = await lastObjectSeq(store, nodeId, seq + window);
    if (above !== null) {
      await inspect(store, nodeId, above, sealedBy, sealEpoch);
      seq = above + 1 - window; // the loop's step moves seq to above + 1
      continue;
    }
    return { sealSeq: seq + window - 1 };
  }
  throw new SealContentionError(`could not seal the WAL chain of ${nodeId} in ${maxSealRounds} rounds`);
}

/**
 * Objects above the first seal this round won, each of an older epoch (a newer one is refused by `inspect`),
 * then the caller seals again above the window (its own seals below stay, as seals). A seal there is another
 * sealer's whose window crossed ours (a node's own start and a takeover of it sealing at once). Data there
 * means the seq this sealer won had been written and freed: the old writer's compaction moved its checkpoint
 * past it and deleted it while this PUT was on its way, and the writer went on above (as in the `above` case
 * of sealChain). With the checkpoint not past that seq, data above it can only be a writer with more than one
 * object in flight: corruption. False when nothing lies above.
 */
async function crossedBySealer(
  store: ObjectStore,
  nodeId: string,
  outcomes: readonly { readonly kind: string }[],
  round: { readonly seq: number; readonly firstWon: number; readonly sealedBy: string; readonly sealEpoch: number },
): Promise<boolean> {
  let crossed = false;
  for (let i = round.firstWon + 1; i < outcomes.length; i++) {
    if (outcomes[i]!.kind === "created") continue;
    const key = walKey(nodeId, round.seq + i);
    const object = decodeWalObject((await store.get(key)).body, key);
    const won = round.seq + round.firstWon;
    if (object.kind !== "seal" && ((await readCheckpoint(store, nodeId))?.checkpoint.walSeq ?? 0) <= won) {
      throw new WalCorruptError(key, `written above this sealer's seal at seq ${won}: not a one-in-flight writer`);
    }
    await inspect(store, nodeId, round.seq + i, round.sealedBy, round.sealEpoch);
    crossed = true;
  }
  return crossed;
}

/** The highest seq ≥ fromSeq holding an object, or null when there is none. */
async function lastObjectSeq(store: ObjectStore, nodeId: string, fromSeq: number): Promise<number | null> {
  const startAfter = fromSeq > 0 ? walKey(nodeId, fromSeq - 1) : undefined;
  let last: number | null = null;
  for await (const object of listAll(store, walPrefix(nodeId), startAfter === undefined ? {} : { startAfter })) {
    const { seq } = parseWalKey(object.key);
    if (seq >= fromSeq && (last === null || seq > last)) last = seq;
  }
  return last;
}

/**
 * Reads the object at `seq`: "ours" if it is a seal of this sealer at this epoch, "older" if it was written
 * at a lower epoch. An object of a higher epoch means this sealer is stale: fencing the newer owner would
 * break it, so the seal is refused with `StaleEpochError`.
 */
async function inspect(
  store: ObjectStore,
  nodeId: string,
  seq: number,
  sealedBy: string,
  sealEpoch: number,
): Promise<"ours" | "older"> {
  const key = walKey(nodeId, seq);
  const object = decodeWalObject((await store.get(key)).body, key);
  const epoch = object.kind === "seal" ? object.sealEpoch : object.nodeEpoch;
  if (epoch > sealEpoch) {
    throw new StaleEpochError(`WAL chain of ${nodeId}: ${key} is at epoch ${epoch}, above seal epoch ${sealEpoch}`, epoch);
  }
  return object.kind === "seal" && object.sealEpoch === sealEpoch && object.sealedBy === sealedBy ? "ours" : "older";
}

export interface ReplayOptions {
  nodeId: string;
  fromSeq: number;
  /** Exclusive; normally the seq of the seal that fenced the chain. */
  toSeq: number;
  /** Objects fetched ahead of the one being yielded (default 4). */
  readAheadObjects?: number;
  /** Told the seq of every seal passed over (they must outlive a clean-up: see deleteWalBelow). */
  onSeal?: (seq: number) => void;
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
  const pending: Promise<Uint8Array | null>[] = [];
  let nextFetch = fromSeq;
  let maxSealEpoch: number | undefined;
  let lastDataEpoch: number | undefined;
  let sealSinceData = false;

  for (let seq = fromSeq; seq < toSeq; seq++) {
    while (nextFetch < toSeq && nextFetch < seq + readAhead) {
      const fetching = readOrNull(store, walKey(nodeId, nextFetch++));
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
    if (object.kind === "seal") {
      options.onSeal?.(seq);
      maxSealEpoch = Math.max(maxSealEpoch ?? 0, object.sealEpoch);
      sealSinceData = true;
      continue;
    }
    if (maxSealEpoch !== undefined && object.nodeEpoch < maxSealEpoch) {
      throw new WalCorruptError(key, `written at epoch ${object.nodeEpoch} after a seal at epoch ${maxSealEpoch}`);
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
