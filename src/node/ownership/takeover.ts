// The takeover of a dead incarnation (docs/failover.md, "Takeover"; a stream opened by a node that is dead;
// docs/architecture.md), run by any live node that needs it (the new owner of one of its streams, or the node
// itself back from the dead), once per incarnation: whoever claims it in the log first does it, the others
// wait for the result.
//
//  1. ClaimTakeover in the log (the coordinator's DeclareDead already raised the dead node's epoch to E + 1,
//     so its proposals are refused);
//  2. seal its WAL chain at epoch E + 1: the zombie, should it still run, collides with the seal and can
//     never acknowledge again; everything it acknowledged is below the seal;
//  3. replay [checkpoint, seal) into a private registry, and close every stream the log still counts as
//     the dead node's (opened or placed by it, or re-led away from it) in its manifest: its data into stream
//     objects, the close at the stream's epoch and the session the next owner continues from, exactly as a
//     transfer's hand-off does;
//  4. move the dead chain's checkpoint to the seal at epoch E + 1 (the zombie's compaction is refused from
//     then on, and the node's next start replays nothing of it), then CompleteTakeover: the log lets the
//     orphans open (table OS, row OS3b). One entry for the whole incarnation, not one close per stream.
//  5. delete the dead chain's WAL below the seal, keeping every seal (deleteWalBelow).
// Each step is idempotent: a crash or a lost claim leaves a state the next claimer finishes.
import type { DomainError } from "../../core/errors.ts";
import type { Logger } from "../../log/logger.ts";
import type { StreamRecord } from "../../core/meta/state.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import { advanceCheckpoint, deleteWalBelow } from "../../storage/checkpoint.ts";
import { StaleEpochError } from "../../storage/manifest.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { flushToObjects, HandOffError } from "./hand-off.ts";
import type { KeyedLock } from "../state/keyed-lock.ts";
import { manifestObjects, StreamObjectCache } from "../state/object-cache.ts";
import { recoverChain } from "../streams/recovery.ts";
import { isGone, StreamRegistry, type StreamState } from "../state/stream-registry.ts";

/** Streams closed at once by one takeover. */
const CLOSE_CONCURRENCY = 16;

export interface TakeoverDeps {
  /** The node taking over, at its current epoch. */
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly store: ObjectStore;
  readonly meta: Pick<MetaLogClient, "propose" | "lookupStream">;
  readonly locks: KeyedLock;
  readonly now: () => number;
  /** How long a claim holds other claimers off (LEASE_TTL_MS). */
  readonly claimTtlMs: number;
  readonly log: Logger;
}

export interface DeadIncarnationRef {
  readonly nodeId: string;
  readonly nodeEpoch: number;
}

export interface TakeoverReport {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly sealSeq: number;
  readonly walObjectsReplayed: number;
  readonly walBytesReplayed: number;
  readonly streamsClosed: number;
  readonly durationMs: number;
}

export type TakeoverAnswer =
  /** Taken over (by this call, when `report` is present, or earlier by anyone). */
  | { readonly kind: "done"; readonly report?: TakeoverReport }
  /** Another node holds the claim: wait for its result (until `untilMs` at most, then claim it again). */
  | { readonly kind: "wait"; readonly by: string; readonly untilMs: number }
  /** A later incarnation of the node was declared dead: take that one over instead. */
  | { readonly kind: "later"; readonly nodeEpoch: number }
  | { readonly kind: "refused"; readonly error: DomainError };

/** Takes over `dead` (one run at a time per dead node on this node; the log arbitrates between nodes). */
export function takeOver(deps: TakeoverDeps, dead: DeadIncarnationRef): Promise<TakeoverAnswer> {
  return deps.locks.run(`takeover:${dead.nodeId}`, () => takeOverLocked(deps, dead));
}

async function takeOverLocked(deps: TakeoverDeps, dead: DeadIncarnationRef): Promise<TakeoverAnswer> {
  const by = { nodeId: deps.nodeId, nodeEpoch: deps.nodeEpoch };
  const claimed = await deps.meta.propose({ type: "ClaimTakeover", nodeId: dead.nodeId, nodeEpoch: dead.nodeEpoch, by, ttlMs: deps.claimTtlMs });
  if (!claimed.ok) return refusal(claimed.error);
  if ((claimed.value.node.takenOver ?? -1) >= dead.nodeEpoch) return { kind: "done" };

  const startedMs = deps.now();
  deps.log.log("takeover.begin", { deadNode: dead.nodeId, deadEpoch: dead.nodeEpoch });
  const registry = new StreamRegistry((key) => objects.get(key), manifestObjects(deps.store));
  const objects = new StreamObjectCache(deps.store);
  const sealEpoch = dead.nodeEpoch + 1;
  const recovery = await recoverChain(deps.store, registry, { nodeId: dead.nodeId, sealedBy: deps.nodeId, sealEpoch }, startedMs);
  let streamsClosed = 0;
  const live = [...registry.all()].filter((stream) => !isGone(stream));
  // Streams one at a time would make the takeover (and every orphan waiting for it) as slow as the sum of
  // their store round trips: a few workers close them side by side. Forks go after every source, since
  // closing a fork flushes its source's data too.
  const close = async (queue: StreamState[]): Promise<void> => {
    const worker = async (): Promise<void> => {
      for (let stream = queue.shift(); stream !== undefined; stream = queue.shift()) {
        const record = (await deps.meta.lookupStream({ id: stream.id })).stream;
        if (record === null || !belongsTo(record, dead)) continue; // deleted, or someone else's since: not ours to touch
        if (await closeInManifest(deps, registry, stream, record.epoch)) streamsClosed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CLOSE_CONCURRENCY, queue.length) }, worker));
  };
  const depthOf = (stream: StreamState): number => {
    let depth = 0;
    for (let source = registry.sourceOf(stream); source !== undefined; source = registry.sourceOf(source)) depth++;
    return depth;
  };
  const byDepth = new Map<number, StreamState[]>();
  for (const stream of live) byDepth.set(depthOf(stream), [...(byDepth.get(depthOf(stream)) ?? []), stream]);
  for (const depth of [...byDepth.keys()].sort((a, b) => a - b)) await close(byDepth.get(depth)!);
  await advanceCheckpoint(deps.store, dead.nodeId, sealEpoch, recovery.sealSeq);
  const completed = await deps.meta.propose({ type: "CompleteTakeover", nodeId: dead.nodeId, nodeEpoch: dead.nodeEpoch, by });
  if (!completed.ok) return refusal(completed.error);
  try {
    await deleteWalBelow(deps.store, dead.nodeId, recovery.sealSeq, { fromSeq: recovery.fromSeq, keepSeqs: recovery.seals });
  } catch (error) {
    // Only garbage is left behind: the checkpoint already says replay starts at the seal.
    deps.log.log("node.error", { during: "takeover_wal_cleanup", deadNode: dead.nodeId, deadEpoch: dead.nodeEpoch }, error);
  }
  const report: TakeoverReport = {
    nodeId: dead.nodeId,
    nodeEpoch: dead.nodeEpoch,
    sealSeq: recovery.sealSeq,
    walObjectsReplayed: recovery.objectsReplayed,
    walBytesReplayed: recovery.bytesReplayed,
    streamsClosed,
    durationMs: deps.now() - startedMs,
  };
  deps.log.log("takeover.end", {
    deadNode: dead.nodeId,
    deadEpoch: dead.nodeEpoch,
    sealSeq: report.sealSeq,
    walObjects: report.walObjectsReplayed,
    walBytes: report.walBytesReplayed,
    streamsClosed,
    durationMs: report.durationMs,
  });
  return { kind: "done", report };
}

/** Whether the log still counts the stream as the dead node's: placed on or opened by it, or re-led away from it. */
function belongsTo(record: StreamRecord, dead: DeadIncarnationRef): boolean {
  if (record.orphanOf !== undefined) return record.orphanOf.node === dead.nodeId && record.orphanOf.nodeEpoch <= dead.nodeEpoch;
  return record.owner === dead.nodeId && record.ownership !== "closed" && record.ownership !== "unplaced";
}

/**
 * Closes one replayed stream in its manifest at `epoch` (the epoch the dead node opened it at), after the
 * data of a fork's source it reads. False when the manifest shows a later owner (this copy is stale).
 */
async function closeInManifest(deps: TakeoverDeps, registry: StreamRegistry, stream: StreamState, epoch: number): Promise<boolean> {
  const { store } = deps;
  const source = registry.sourceOf(stream);
  try {
    if (source !== undefined) await flushToObjects({ store, registry }, source, source.epoch, false);
    await flushToObjects({ store, registry }, stream, epoch, true);
    return true;
  } catch (error) {
    if (error instanceof StaleEpochError || error instanceof HandOffError) {
      deps.log.log("takeover.stream_skipped", { stream: stream.name, streamId: stream.id, epoch }, error);
      return false;
    }
    throw error;
  }
}

function refusal(error: DomainError): TakeoverAnswer {
  const details = error.details ?? {};
  if (error.code === "held_by" && typeof details["owner"] === "string") {
    return { kind: "wait", by: details["owner"], untilMs: typeof details["expiresAtMs"] === "number" ? details["expiresAtMs"] : 0 };
  }
  // CK4 names the later dead incarnation; a stale_epoch without it is table P's: the taker itself is stale.
  if (error.code === "stale_epoch" && typeof details["deadEpoch"] === "number") return { kind: "later", nodeEpoch: details["deadEpoch"] };
  return { kind: "refused", error };
}
