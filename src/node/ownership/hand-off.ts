// The source side of a transfer (docs/transfers.md; the steps are table T in src/core/transfer-steps.ts). No data
// moves between nodes: the source makes the stream's whole state readable from the object store and gives
// it up, and the target opens it from there (ownership/adopt.ts).
//
// T1, hand off a stream this node holds, under the stream's name lock:
//  1. stop: the stream moves to phase `handing-off`, so no append is decided from here on (the append path checks
//     it right before deciding); requests for the stream wait for the hand-off and are then redirected;
//  2. flush: wait for every decided append to be acknowledged, write the data not yet in stream objects
//     into one stream object, and record in the manifest, at epoch E, the end offset, `closed` at E and the
//     session (configuration, producers, Stream-Seq, eof) the next owner continues from;
//  3. CloseStream at E in the log; a `release` record in the WAL (replay forgets the stream); forget it
//     in memory, sending its live readers on;
//  4. CompleteTransfer(E).
// Each step is idempotent: a crash anywhere leaves a state from which the watcher's next run (T1, T2 or
// T3) finishes the job, and a completion from an earlier attempt is refused by the log (CT5).
import type { DomainError } from "../../core/errors.ts";
import { readManifest, updateManifest } from "../../storage/manifest.ts";
import { compactStream } from "../../storage/compaction.ts";
import { RECORD_FLAG_EOF, type WalRecord } from "../../storage/record-codec.ts";
import { ensureManifest, STORE_WRITE_LOCK } from "../streams/compaction.ts";
import { manifestSession } from "../streams/snapshot-record.ts";
import { settled, type NodeContext } from "../context.ts";
import { reloadLocked } from "../streams/eviction.ts";
import { forgetStale, releaseDurably } from "../streams/release.ts";
import { isGone, moveTo, type StreamState } from "../state/stream-registry.ts";
import { ensureOpened } from "../streams/lifecycle.ts";

/** A transfer step the log refused or that could not finish; the watcher tries again. */
export class HandOffError extends Error {
  override readonly name = "HandOffError";
  constructor(
    message: string,
    readonly error?: DomainError,
  ) {
    super(message);
  }
}

/**
 * T1 and T2: hands off the stream `streamId` (named `name`), closing it at `epoch`, then completes the
 * transfer (unless `transfer` is false: a plain close, after which any node may open it). Runs under the
 * name lock, so a create of the stream still in flight finishes first and is flushed with it. A stream
 * this node does not hold has nothing here to flush (T2): it is only closed.
 */
export async function handOff(ctx: NodeContext, streamId: string, name: string, epoch: number, transfer = true): Promise<void> {
  await ctx.locks.run(`name:${name}`, async () => {
    const held = ctx.registry.get(streamId);
    // An evicted stream (streams/eviction.ts) is handed off like any other: reloaded from its manifest first.
    const stream = held !== undefined && !isGone(held) ? held : await reloadLocked(ctx, { id: streamId, name, epoch });
    if (stream === undefined || isGone(stream)) return proposeClose(ctx, streamId, epoch);
    if (stream !== held) ctx.meters.residency.handedOff++;
    let done: () => void = () => undefined;
    try {
      // The store lock first: a compaction running now finishes before appends stop, not while they wait.
      await ctx.locks.run(STORE_WRITE_LOCK, async () => {
        if (isGone(stream)) return; // expired while this waited for the store lock: nothing to flush
        moveTo(stream, { kind: "handing-off", done: new Promise<void>((resolve) => (done = resolve)) });
        const error = await settled(ctx, stream);
        if (error !== null) throw new HandOffError(`appends before the hand-off failed: ${error.message}`, error);
        // A fork's inherited bytes must be readable from its source's stream objects at the target.
        const source = ctx.registry.sourceOf(stream);
        if (source !== undefined && !isGone(source)) await flushSource(ctx, source);
        await flushToObjects(ctx, stream, epoch, true);
      });
      await proposeClose(ctx, streamId, epoch);
      // Expired during the hand-off: its removal already wrote its record and forgot it.
      if (!isGone(stream)) await releaseDurably(ctx, stream);
    } finally {
      // Failed before the release: the stream stays here, to be opened again (the watcher retries the step).
      if (stream.phase.kind === "handing-off") moveTo(stream, { kind: "held" });
      done();
    }
  });
  if (transfer) await complete(ctx, streamId, epoch);
}

/**
 * T3: the stream is closed at `closedEpoch`; re-point it at the target. A copy this node still holds (it
 * crashed after CloseStream, before its release record) is released too: it is flushed already.
 */
export async function complete(ctx: NodeContext, streamId: string, closedEpoch: number): Promise<void> {
  await forgetStale(ctx, streamId);
  const completed = await ctx.meta.propose({
    type: "CompleteTransfer",
    streamId,
    closedEpoch,
    by: { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch },
  });
  // not_found: no transfer pending any more (a duplicate completion that already landed).
  if (!completed.ok && completed.error.code !== "not_found") {
    throw new HandOffError(`CompleteTransfer ${streamId} at ${closedEpoch}: ${completed.error.message}`, completed.error);
  }
}

async function proposeClose(ctx: NodeContext, streamId: string, epoch: number): Promise<void> {
  const closed = await ctx.meta.propose({ type: "CloseStream", streamId, nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch, epoch });
  if (!closed.ok) throw new HandOffError(`CloseStream ${streamId} at ${epoch}: ${closed.error.message}`, closed.error);
}

/** A fork's source that stays here: its data is flushed into stream objects (it stays open here). */
async function flushSource(ctx: NodeContext, source: StreamState): Promise<void> {
  const openError = await ensureOpened(ctx, source);
  if (openError !== null) throw new HandOffError(`the fork's source cannot be flushed: ${openError.message}`, openError);
  const error = await settled(ctx, source);
  if (error !== null) throw new HandOffError(`the fork's source cannot be flushed: ${error.message}`, error);
  await flushToObjects(ctx, source, source.epoch, false);
}

/**
 * Writes the stream's acknowledged data not yet in stream objects into one stream object at `epoch` and
 * lists it in the manifest; with `close`, also records the close at `epoch` and the session. Idempotent.
 * The caller holds STORE_WRITE_LOCK (compaction writes the same objects and manifests).
 */
export async function flushToObjects(
  ctx: Pick<NodeContext, "store" | "registry">,
  stream: StreamState,
  epoch: number,
  close: boolean,
): Promise<void> {
  const { store } = ctx;
  await ensureManifest(store, stream.id, stream.base, epoch);
  // Objects an earlier flush or compaction wrote without the copy here knowing (a crash before its
  // checkpoint, an earlier takeover attempt): the copy reads them instead, and only the rest is written.
  const known = await readManifest(store, stream.id);
  for (const ref of known?.manifest.objects ?? []) {
    if (ref.endOffset > ctx.registry.compactedEnd(stream) && ref.endOffset <= stream.tail) {
      ctx.registry.replaceWithObject(stream, ref.key, ref.firstOffset, ref.endOffset);
    }
  }
  const from = ctx.registry.compactedEnd(stream);
  const records: WalRecord[] = [];
  for (const record of stream.records) {
    if (record.data === null || record.first < from) continue;
    records.push({ streamId: stream.id, streamEpoch: epoch, firstOffset: record.first, flags: 0, meta: new Uint8Array(0), data: record.data });
  }
  const last = records.at(-1);
  if (last !== undefined && stream.eof) records[records.length - 1] = { ...last, flags: RECORD_FLAG_EOF };
  if (records.length > 0) {
    const { object } = await compactStream(store, { streamId: stream.id, writerEpoch: epoch, records });
    ctx.registry.replaceWithObject(stream, object.key, object.firstOffset, object.endOffset);
  }
  if (!close) return;
  // The session is the stream's snapshot record meta (versioned like every record meta): the same state a
  // compaction lets replay start from.
  const session = manifestSession(stream);
  await updateManifest(store, stream.id, epoch, (manifest) => {
    // Data beyond this copy's tail is durable: a later owner wrote it, so this copy (a superseded
    // incarnation's) is stale. Its close would end the session before the data, which no node can adopt.
    if (manifest.endOffset > stream.tail) {
      throw new HandOffError(`the copy of ${stream.id} held here ends at ${stream.tail}, its data at ${manifest.endOffset}: stale`);
    }
    return {
      ...manifest,
      endOffset: Math.max(manifest.endOffset, stream.tail),
      eof: manifest.eof || stream.eof,
      closed: { atEpoch: epoch, endOffset: stream.tail },
      session,
    };
  });
}
