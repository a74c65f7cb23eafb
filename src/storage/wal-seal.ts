// Sealing a node's WAL chain: fence every older writer of the chain, so that none of them can acknowledge
// again, and say where the new writer starts. The rules are table WS of docs/storage-format.md.
//
// A writer keeps up to WAL_IN_FLIGHT_CAP objects in flight and acknowledges strictly in seq order, so a seq
// that never landed bounds what it acknowledged: nothing at or above its lowest missing seq was. Its path is
// dense from where it started (its own seal made everything below occupied), so a seal on a free seq at or
// above the chain's lowest missing seq `m` lies on that path, and the writer collides with it.
//
// The sealer claims every free seq of a window above `m` at once. The first it wins, `first`, fences the
// writer: it can never acknowledge `first` or above, and it never issued a seq at or above `first` plus the
// cap (its lowest unacknowledged seq is at most `first`). So the sealer also claims every free seq up to
// there: once it is done, every seq below where the new writer starts is occupied, by data, by seals, or by
// the fenced writer's garbage (data above a seal of a higher epoch, which replay passes over), and nothing
// of the old writer can land at or above the new start. Its top seq is always a seal of this sealer, so the
// next sealer meets the writer it must fence on top.

import { listAll, type ObjectStore } from "./object-store.ts";
import { readCheckpoint } from "./checkpoint.ts";
import { parseWalKey, walKey, walPrefix } from "./keys.ts";
import { StaleEpochError } from "./manifest.ts";
import { WAL_IN_FLIGHT_CAP, decodeWalObject, encodeWalObject } from "./wal-format.ts";
import { putCreateOnce, readOrNull } from "./create-once.ts";
import { resolveRetry, retrying, type ResolvedRetry, type RetryOptions } from "./retry-policy.ts";

export interface SealOptions {
  nodeId: string;
  /** Where the live chain starts (the node's checkpoint); everything below may be deleted. */
  fromSeq: number;
  /** The node performing the seal. */
  sealedBy: string;
  /** The epoch of the chain's new owner. */
  sealEpoch: number;
  /** Rounds tried before giving up against writers that keep winning (default 12). */
  maxSealRounds?: number;
  retry?: RetryOptions;
}

/** The old writer won `maxSealRounds` windows in a row. */
class SealContentionError extends Error {
  override readonly name = "SealContentionError";
}

/** The widest window of seqs claimed at once. */
const MAX_SEAL_WINDOW = 64;

/** Seqs claimed one at a time above the fenced range until the top one is this sealer's (WS5). */
const MAX_TOP_CLAIMS = 64;

interface Sealer {
  readonly store: ObjectStore;
  readonly nodeId: string;
  readonly sealedBy: string;
  readonly sealEpoch: number;
  readonly retry: ResolvedRetry;
}

/** Where the sealed chain is replayed from (`fromSeq`, moved when WS7 found a moved checkpoint) up to `sealSeq`. */
export interface SealedChain {
  readonly fromSeq: number;
  readonly sealSeq: number;
}

/**
 * Fences the chain and returns the seq of the top seal: replay [fromSeq, sealSeq) with the `fromSeq` returned,
 * write from sealSeq + 1. Throws `StaleEpochError` when a newer owner wrote in the chain (fencing it would
 * break it).
 */
export async function sealChain(store: ObjectStore, options: SealOptions): Promise<SealedChain> {
  const sealer: Sealer = { store, nodeId: options.nodeId, sealedBy: options.sealedBy, sealEpoch: options.sealEpoch, retry: resolveRetry(options.retry) };
  const maxSealRounds = options.maxSealRounds ?? 12;
  let fromSeq = options.fromSeq;
  for (let round = 0; round < maxSealRounds; round++) {
    const present = await retrying(sealer.retry, () => presentSeqs(store, sealer.nodeId, fromSeq));
    const m = lowestMissing(present, fromSeq);
    const top = highest(present);
    // WS2: a repeated call. Only a dense chain under our own seal is ours: a hole below it would be sealed
    // by the next sealer off our path.
    if (round === 0 && top !== null && m === top + 1 && (await inspect(sealer, top)) === "ours") return { fromSeq, sealSeq: top };
    // WS1: whoever wrote on top of the dense part, or above the hole, must be older than us.
    const above = [...present].filter((seq) => seq > m);
    await Promise.all([...(m > fromSeq ? [m - 1] : []), ...above].map((seq) => inspect(sealer, seq)));

    const window = Math.min(WAL_IN_FLIGHT_CAP << round, MAX_SEAL_WINDOW);
    const won = await claimFree(sealer, seqsIn(m, m + window, present));
    if (won.length === 0) continue; // WS6: the writers took every free seq of the window; look again
    const first = won.reduce((a, b) => Math.min(a, b));
    // WS3: the writers `first` fenced never issued a seq at or above first + cap: claim every free one below.
    let end = Math.max(m + window, first + WAL_IN_FLIGHT_CAP);
    const fenced = await claimFree(sealer, seqsIn(m + window, end, present));
    end = await sealOnTop(sealer, end, [...won, ...fenced]);
    // WS7: our first seal landed on a seq a fenced writer's compaction had freed below its moved checkpoint:
    // its path lies above, unfenced. Seal again from the checkpoint, and replay from there: below it lie
    // this round's seals, which would make the data they did not fence look like garbage.
    const checkpoint = (await retrying(sealer.retry, () => readCheckpoint(store, sealer.nodeId)))?.checkpoint.walSeq ?? 0;
    if (checkpoint > first) {
      fromSeq = checkpoint;
      continue;
    }
    return { fromSeq, sealSeq: end - 1 };
  }
  throw new SealContentionError(`could not seal the WAL chain of ${sealer.nodeId} in ${maxSealRounds} rounds`);
}

/** WS5: makes seq `end - 1` a seal of ours (claiming one seq above at a time), and returns the new end. */
async function sealOnTop(sealer: Sealer, end: number, won: readonly number[]): Promise<number> {
  const ours = new Set(won);
  for (let claims = 0; !ours.has(end - 1); claims++) {
    if (claims >= MAX_TOP_CLAIMS) throw new SealContentionError(`could not seal the top of the WAL chain of ${sealer.nodeId}`);
    for (const seq of await claimFree(sealer, [end])) ours.add(seq);
    end++;
  }
  return end;
}

/** Claims each seq with a seal, side by side; returns those won. Every seq lost is inspected (WS1). */
async function claimFree(sealer: Sealer, seqs: readonly number[]): Promise<number[]> {
  const { store, nodeId, sealedBy, sealEpoch, retry } = sealer;
  const outcomes = await Promise.all(
    seqs.map(async (seq) => {
      const outcome = await putCreateOnce(store, walKey(nodeId, seq), encodeWalObject({ kind: "seal", nodeId, seq, sealedBy, sealEpoch }), retry);
      if (outcome.kind === "exists") await inspect(sealer, seq);
      return outcome.kind === "created" ? seq : null;
    }),
  );
  return outcomes.filter((seq) => seq !== null);
}

/** The seqs of [from, to) not in `present`. */
function seqsIn(from: number, to: number, present: ReadonlySet<number>): number[] {
  const seqs: number[] = [];
  for (let seq = from; seq < to; seq++) if (!present.has(seq)) seqs.push(seq);
  return seqs;
}

function highest(present: ReadonlySet<number>): number | null {
  let top: number | null = null;
  for (const seq of present) if (top === null || seq > top) top = seq;
  return top;
}

function lowestMissing(present: ReadonlySet<number>, fromSeq: number): number {
  let seq = fromSeq;
  while (present.has(seq)) seq++;
  return seq;
}

/** The seqs ≥ fromSeq holding an object. */
async function presentSeqs(store: ObjectStore, nodeId: string, fromSeq: number): Promise<Set<number>> {
  const startAfter = fromSeq > 0 ? walKey(nodeId, fromSeq - 1) : undefined;
  const present = new Set<number>();
  for await (const object of listAll(store, walPrefix(nodeId), startAfter === undefined ? {} : { startAfter })) {
    const { seq } = parseWalKey(object.key);
    if (seq >= fromSeq) present.add(seq);
  }
  return present;
}

/**
 * Reads the object at `seq`: "ours" if it is a seal of this sealer at this epoch, "gone" if it was deleted
 * meanwhile, "older" otherwise. An object
 * of a higher epoch means this sealer is stale: fencing the newer owner would break it (`StaleEpochError`).
 */
async function inspect(sealer: Sealer, seq: number): Promise<"ours" | "older" | "gone"> {
  const key = walKey(sealer.nodeId, seq);
  const body = await retrying(sealer.retry, () => readOrNull(sealer.store, key));
  // Deleted since it was listed or won: a compaction freed it below a moved checkpoint (WS7 looks again).
  if (body === null) return "gone";
  const object = decodeWalObject(body, key);
  const epoch = object.kind === "seal" ? object.sealEpoch : object.nodeEpoch;
  if (epoch > sealer.sealEpoch) {
    throw new StaleEpochError(`WAL chain of ${sealer.nodeId}: ${key} is at epoch ${epoch}, above seal epoch ${sealer.sealEpoch}`, epoch);
  }
  return object.kind === "seal" && object.sealEpoch === sealer.sealEpoch && object.sealedBy === sealer.sealedBy ? "ours" : "older";
}
