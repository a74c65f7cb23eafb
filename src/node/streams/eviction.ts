// Idle streams out of the node's memory, still owned here (docs/node.md, "Idle streams"; tables EV and RL in
// src/core/stream-eviction.ts). An eviction writes the stream's whole state into its manifest as the session
// (the same snapshot meta a hand-off records, without a close), then drops the stream from the registry; the
// next request that finds the log naming this node as its owner reloads it from that session over its stream
// objects. The WAL does not know a reloaded stream (its snapshot record is below the checkpoint), so its
// next record goes out behind a fresh snapshot record (streams/commit.ts): replay always finds the latest.
import { evictionRow, evictionWriteRow, reloadRow, type EvictionPolicy, type EvictionView } from "../../core/stream-eviction.ts";
import { parseBucketStreamName } from "../../core/tables/bucketing.ts";
import { readManifest, StaleEpochError, updateManifest } from "../../storage/manifest.ts";
import type { NodeContext } from "../context.ts";
import { isGone, pointAtObjects, type StreamState } from "../state/stream-registry.ts";
import { walRecord } from "./commit.ts";
import { ensureStreamManifest, STORE_WRITE_LOCK } from "./compaction.ts";
import { replayRecord } from "./recovery.ts";
import { manifestSession, sessionMeta } from "./snapshot-record.ts";

/** Streams one round evicts at most (one manifest read and write each). */
const MAX_EVICTIONS_PER_ROUND = 2_000;
/** Manifest writes of one round in flight at once. */
const EVICT_CONCURRENCY = 16;

/** The manifest is not this copy's to write (closed, or holding data past this copy's tail): it stays. */
class NotThisCopyError extends Error {
  override readonly name = "NotThisCopyError";
}

/** The stream as table EV sees it. */
function evictionView(ctx: NodeContext, stream: StreamState): EvictionView {
  return {
    phase: stream.phase.kind,
    busy: ctx.locks.busy(`name:${stream.name}`) || ctx.locks.busy(`open:${stream.id}`),
    lifecycle: stream.lifecycle,
    ttlSeconds: stream.config.ttlSeconds,
    expiresAtMs: stream.config.expiresAtMs,
    base: stream.base,
    forkCount: stream.forkCount,
    bucketStream: parseBucketStreamName(stream.name) !== null,
    tail: stream.tail,
    eof: stream.eof,
    decidedTail: stream.decided.tail,
    decidedEof: stream.decided.eof,
    compactedEnd: ctx.registry.compactedEnd(stream),
    readersWaiting: ctx.readers.waiting(stream.id),
    lastAccessMs: stream.lastAccessMs,
  };
}

/**
 * The streams to evict now: those table EV lets go, idle ones first and, while the node holds more than
 * MAX_RESIDENT_STREAMS, the least recently used of the rest.
 */
function evictionCandidates(ctx: NodeContext): StreamState[] {
  const nowMs = ctx.now();
  const anyAge: EvictionPolicy = { nowMs, idleMs: ctx.settings.streamIdleEvictMs, overResidentCap: true };
  const movable = [...ctx.registry.all()].filter((stream) => evictionRow(evictionView(ctx, stream), anyAge) === "EV8");
  movable.sort((a, b) => a.lastAccessMs - b.lastAccessMs);
  const overCap = Math.max(0, ctx.registry.size - ctx.settings.maxResidentStreams);
  const picked = movable.filter((stream, i) => i < overCap || nowMs - stream.lastAccessMs >= ctx.settings.streamIdleEvictMs);
  return picked.slice(0, MAX_EVICTIONS_PER_ROUND);
}

/**
 * Evicts what table EV lets go, in rounds of at most MAX_EVICTIONS_PER_ROUND, each under the store lock (no
 * compaction meanwhile) and released between rounds. Returns how many left memory.
 */
export async function evictIdle(ctx: NodeContext): Promise<number> {
  let evicted = 0;
  for (;;) {
    const round = await evictRound(ctx);
    evicted += round.evicted;
    if (round.candidates < MAX_EVICTIONS_PER_ROUND || round.evicted === 0) return evicted;
  }
}

async function evictRound(ctx: NodeContext): Promise<{ readonly candidates: number; readonly evicted: number }> {
  if (ctx.stopped !== null || ctx.now() >= ctx.liveUntilMs) return { candidates: 0, evicted: 0 };
  const candidates = evictionCandidates(ctx);
  if (candidates.length === 0) return { candidates: 0, evicted: 0 };
  const evicted = await ctx.locks.run(STORE_WRITE_LOCK, async () => {
    let evicted = 0;
    for (let i = 0; i < candidates.length; i += EVICT_CONCURRENCY) {
      // All of a chunk settle before the lock is released, a failure included (it ends the round).
      const results = await Promise.allSettled(candidates.slice(i, i + EVICT_CONCURRENCY).map((stream) => evictOne(ctx, stream)));
      evicted += results.filter((result) => result.status === "fulfilled" && result.value).length;
      const failed = results.find((result) => result.status === "rejected");
      if (failed !== undefined) throw failed.reason;
      if (ctx.stopped !== null) break;
    }
    ctx.log.log("stream.evicted", { candidates: candidates.length, evicted, resident: ctx.registry.size });
    return evicted;
  });
  return { candidates: candidates.length, evicted };
}

/** What may not change while an eviction writes the manifest: else the session it wrote is not the stream's state. */
function fingerprint(stream: StreamState): string {
  return `${stream.epoch}/${stream.phase.kind}/${stream.decided.tail}/${stream.decided.eof}/${stream.lifecycle}`;
}

/**
 * The stream's state into its manifest as the session (at its epoch: a later owner's manifest refuses it), then
 * out of memory, if nothing changed meanwhile. A session written for a stream that then stays is harmless: the
 * stream stays in every compaction's snapshot until an eviction succeeds and writes a newer one.
 */
async function evictOne(ctx: NodeContext, stream: StreamState): Promise<boolean> {
  const policy = (): EvictionPolicy => ({
    nowMs: ctx.now(),
    idleMs: ctx.settings.streamIdleEvictMs,
    overResidentCap: ctx.registry.size > ctx.settings.maxResidentStreams,
  });
  // Touched, busy or gone since it was picked (an earlier chunk's manifest writes took a while): it stays.
  if (evictionRow(evictionView(ctx, stream), policy()) !== "EV8") return false;
  const before = fingerprint(stream);
  const session = manifestSession(stream);
  try {
    await ensureStreamManifest(ctx.store, stream, stream.epoch);
    await updateManifest(ctx.store, stream.id, stream.epoch, (manifest) => {
      // Table EW (src/core/stream-eviction.ts): a close at this copy's epoch, or data past its tail, keeps
      // the stream; a close at an earlier epoch is the previous owner's, and the session supersedes it (EW3).
      const row = evictionWriteRow(manifest, stream);
      if (row === "EW1" || row === "EW2") throw new NotThisCopyError(`stream ${stream.id}: its manifest is closed or ends past ${stream.tail} (${row})`);
      const { closed: _previousOwnersClose, ...rest } = manifest;
      return { ...rest, endOffset: stream.tail, eof: manifest.eof || stream.eof, session };
    });
  } catch (error) {
    if (!(error instanceof StaleEpochError) && !(error instanceof NotThisCopyError)) throw error;
    ctx.log.log("stream.evict_skipped", { stream: stream.name, streamId: stream.id, epoch: stream.epoch }, error);
    return false;
  }
  if (fingerprint(stream) !== before || evictionRow(evictionView(ctx, stream), policy()) !== "EV8") return false;
  ctx.registry.evict(stream);
  ctx.meters.residency.evicted++;
  return true;
}

/** The log's record of a stream this node owns (opened here, or an orphan it adopts). */
export interface OwnedRecord {
  readonly id: string;
  readonly name: string;
  readonly epoch: number;
}

/** Reloads an evicted stream (table RL), under its name lock. The stream, held, or undefined when RL says no. */
export function reloadEvicted(ctx: NodeContext, record: OwnedRecord): Promise<StreamState | undefined> {
  return ctx.locks.run(`name:${record.name}`, () => reloadLocked(ctx, record));
}

/** reloadEvicted for a caller that holds the name lock (a hand-off). */
export async function reloadLocked(ctx: NodeContext, record: OwnedRecord): Promise<StreamState | undefined> {
  const held = ctx.registry.get(record.id);
  if (held !== undefined && !isGone(held)) return held;
  const found = await readManifest(ctx.store, record.id);
  const manifest = found?.manifest ?? null;
  const session = manifest?.session === undefined ? null : sessionMeta(manifest.session);
  if (typeof session === "string") throw new Error(`stream ${record.id}: ${session}`);
  const row = reloadRow({
    ownedHere: true,
    logEpoch: record.epoch,
    name: record.name,
    manifest: manifest === null ? null : { epoch: manifest.epoch, endOffset: manifest.endOffset, closed: manifest.closed !== undefined, session },
  });
  if (row === "RL4") throw new Error(`stream ${record.id}: its manifest's session does not match its data (table RL, row RL4)`);
  if (row !== "RL5" || manifest === null || session === null) return undefined;
  const again = ctx.registry.get(record.id);
  if (again !== undefined && !isGone(again)) return again; // reloaded meanwhile by a caller without the name lock
  replayRecord(ctx.registry, walRecord({ id: record.id, epoch: record.epoch }, session.tail, session), ctx.now());
  const stream = ctx.registry.get(record.id);
  if (stream === undefined) throw new Error(`reload: ${record.id} not rebuilt`);
  pointAtObjects(stream, manifest.objects, session.tail);
  stream.needsAnchor = true;
  stream.manifestEpoch = manifest.epoch;
  ctx.meters.residency.reloaded++;
  return stream;
}
