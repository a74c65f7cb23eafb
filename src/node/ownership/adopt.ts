// The target side of a transfer, and the revival of a closed stream (R7): this node opens a stream it does
// not hold from the object store alone. OpenStream in the log (epoch E+1; refused while a transfer is
// pending or another node holds it), then the manifest raised to E+1 (fencing any older writer), then the
// stream rebuilt from the session the last owner recorded with its close (ownership/hand-off.ts) over the stream
// objects, and a snapshot record of it in this node's WAL, so a restart rebuilds it the same way.
import type { DomainError } from "../../core/errors.ts";
import type { StreamConfig } from "../../core/protocol/stream-config.ts";
import type { StreamView } from "../../core/meta/view.ts";
import { openManifest, readManifest, type Manifest } from "../../storage/manifest.ts";
import { reloadRow } from "../../core/stream-eviction.ts";
import type { RecordMeta } from "../state/record-meta.ts";
import { sessionMeta } from "../streams/snapshot-record.ts";
import { walRecord } from "../streams/commit.ts";
import { STORE_WRITE_LOCK } from "../streams/compaction.ts";
import { replayRecord } from "../streams/recovery.ts";
import { moveTo, newStreamState, pointAtObjects, type StreamState } from "../state/stream-registry.ts";
import { type NodeContext } from "../context.ts";
import { unavailable } from "../state/replies.ts";
import { deadIncarnationIn, takeOverFor } from "./takeover-use.ts";


/** Adopts `view`'s stream here. Null once this node holds it opened; otherwise why it could not. */
export async function adoptStream(ctx: NodeContext, view: StreamView): Promise<DomainError | null> {
  return ctx.locks.run(`name:${view.name}`, async () => {
    const held = ctx.registry.byName(view.name);
    if (held !== undefined) return null;
    const open = () => ctx.meta.propose({ type: "OpenStream", streamId: view.id, nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch });
    let opened = await open();
    // The last owner is a dead incarnation not taken over yet (row OS3b): take it over, then open.
    const dead = opened.ok ? null : deadIncarnationIn(opened.error);
    if (dead !== null && (await takeOverFor(ctx, dead))) opened = await open();
    ctx.view.invalidate(view.name);
    if (!opened.ok) {
      if (deadIncarnationIn(opened.error) !== null) return opened.error;
      if (opened.error.code === "held_by" || opened.error.code === "not_found") return opened.error;
      return unavailable(`the stream cannot be opened here yet: ${opened.error.message}`);
    }
    const epoch = opened.value.stream.epoch;
    const config = view.config as unknown as StreamConfig;
    const base = config.fork?.forkPositionBytes ?? 0;
    const { previous, snapshot } = await openManifest(ctx.store, view.id, epoch, { startOffset: base, keepSession: true });
    const session = sessionOf(previous, view, config, base, ctx.now());
    if (typeof session === "string") return unavailable(`stream ${view.id} cannot be adopted: ${session}`);
    if (previous !== null && previous.closed === undefined && previous.session !== undefined) ctx.meters.residency.adoptedFromEviction++;

    const record = walRecord({ id: view.id, epoch }, session.tail, session);
    // Under the store lock, so a compaction's snapshot is decided either before this record is queued or
    // after the stream is in the registry: a snapshot landing above this record without the stream would
    // move the checkpoint past the only record that says the stream is here (sim seed 4638).
    const stream = await ctx.locks.run(STORE_WRITE_LOCK, async () => {
      await ctx.wal.append([record]);
      replayRecord(ctx.registry, record, ctx.now());
      return ctx.registry.get(view.id);
    });
    if (stream === undefined) throw new Error(`adopt: ${view.id} not rebuilt`);
    pointAtObjects(stream, snapshot.manifest.objects, session.tail);
    if (ctx.registry.sourceOf(stream) === undefined && stream.base > 0) await attachSource(ctx, stream);
    // The TTL idle clock continues from the last owner's (a transfer does not renew a stream's lease on life).
    if (session.la !== undefined) stream.lastAccessMs = session.la;
    stream.epoch = epoch;
    moveTo(stream, { kind: "opened" });
    ctx.parked.notify(view.name);
    return null;
  });
}

type Session = Extract<RecordMeta, { k: "snapshot" }>;

/** No stream objects, no WAL ranges, no data, no eof: a manifest as openManifest creates it. */
function holdsNothing(manifest: Manifest, base: number): boolean {
  return (
    manifest.objects.length === 0 &&
    manifest.walRanges.length === 0 &&
    manifest.startOffset === base &&
    manifest.endOffset === base &&
    !manifest.eof &&
    manifest.session === undefined
  );
}

/**
 * The state to continue from: the session recorded with the close. No manifest at all means no owner ever
 * flushed anything (a placement that was never opened): an empty stream of the log's configuration. So
 * does a manifest without a close that holds nothing: the one an earlier adoption of such a stream created
 * (openManifest) before it failed or crashed short of its WAL record. A manifest without a close but with a
 * session was evicted by its last owner (evictedSession). Any other manifest without a close is refused: its
 * last owner did not hand it over.
 */
function sessionOf(previous: Manifest | null, view: StreamView, config: StreamConfig, base: number, nowMs: number): Session | string {
  if (previous === null || (previous.closed === undefined && holdsNothing(previous, base))) {
    return { k: "snapshot", name: view.name, config, at: nowMs, tail: base, eof: false, softDeleted: false, producers: [], q: null };
  }
  if (previous.session === undefined) return "its manifest records no close";
  const meta = sessionMeta(previous.session);
  if (typeof meta === "string") return meta;
  if (previous.closed === undefined) return evictedSession(previous, meta, view);
  if (meta.tail !== previous.closed.endOffset) return `its session ends at ${meta.tail}, its close at ${previous.closed.endOffset}`;
  if (meta.tail !== previous.endOffset) return `its session ends at ${meta.tail}, its data at ${previous.endOffset}`;
  if (meta.name !== view.name) return `its session names ${meta.name}`;
  return meta;
}

/**
 * The session an eviction left in the manifest (table RL in src/core/stream-eviction.ts). The open just
 * succeeded, so no live node holds the stream: its last owner is dead and was taken over (the takeover closed
 * every stream its WAL still knew, so this one was evicted when it died), or it handed the stream on (a
 * hand-off reloads an evicted stream and closes it). Either way that session is the stream's last state,
 * provided it is at the log's epoch before this open and covers all of its data.
 */
function evictedSession(previous: Manifest, meta: Session, view: StreamView): Session | string {
  const row = reloadRow({
    ownedHere: true,
    logEpoch: view.epoch,
    name: view.name,
    manifest: { epoch: previous.epoch, endOffset: previous.endOffset, closed: false, session: meta },
  });
  return row === "RL5" ? meta : `its manifest records no close (table RL, row ${row})`;
}

/**
 * A fork whose source is not held here reads the inherited bytes from the source's stream objects: a
 * read-only stand-in of the source (removed: never served, compacted or snapshotted), from its manifest.
 * The source's owner flushed them before the fork left it (ownership/hand-off.ts).
 */
async function attachSource(ctx: NodeContext, fork: StreamState): Promise<void> {
  const sourceId = fork.config.fork?.sourceStreamId;
  if (sourceId === undefined) return;
  const manifest = await readManifest(ctx.store, sourceId);
  if (manifest === null) throw new Error(`fork ${fork.id}: its source ${sourceId} has no manifest`);
  const found = await ctx.meta.lookupStream({ id: sourceId });
  const session = manifest.manifest.session;
  const config = (found.stream?.config ?? (session === undefined ? undefined : session["config"])) as StreamConfig | undefined;
  if (config === undefined) throw new Error(`fork ${fork.id}: the configuration of its source ${sourceId} is unknown`);
  const stand = newStreamState({ id: sourceId, name: `~source:${sourceId}`, config, createdAtMs: 0, epoch: 0, opened: false });
  pointAtObjects(stand, manifest.manifest.objects, fork.base);
  stand.tail = fork.base;
  stand.decided.tail = fork.base;
  stand.forkCount = 1;
  ctx.registry.add(stand);
  ctx.registry.remove(stand);
  if (stand.base > 0 && ctx.registry.sourceOf(stand) === undefined) await attachSource(ctx, stand);
  if (ctx.registry.sourceOf(fork) === undefined) throw new Error(`fork ${fork.id}: source not attached`);
}

/** After a restart: forks whose source this node no longer holds read it from the object store. */
export async function attachMissingSources(ctx: NodeContext): Promise<void> {
  for (const stream of [...ctx.registry.all()]) {
    if (stream.base > 0 && ctx.registry.sourceOf(stream) === undefined) await attachSource(ctx, stream);
  }
}
