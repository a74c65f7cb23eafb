// The life of a stream on its node, in one place: expiry at access (the core's TTL and fork rules),
// the lazy open of a replayed stream at its first write, soft delete, removal (DELETE, expiry, the last
// fork of a soft-deleted source gone) with its cascade up a chain of sources, and the control records
// that make each of them durable. The request paths call these; none of them decides a rule itself.
import type { DomainError } from "../../core/errors.ts";
import { checkAccess, sourceAfterForkRemoved } from "../../core/protocol/fork.ts";
import { renewsTtl, type AccessKind } from "../../core/protocol/ttl.ts";
import { type NodeContext } from "../context.ts";
import { unavailable } from "../state/replies.ts";
import type { RecordMeta } from "../state/record-meta.ts";
import { isGone, lifecycleView, moveTo, type StreamState } from "../state/stream-registry.ts";
import { commitRecord, walRecord } from "./commit.ts";

/** A successful access of `kind`: renews the sliding TTL clock when the core's rule says it does. */
export function recordAccess(ctx: NodeContext, stream: StreamState, kind: AccessKind): void {
  if (renewsTtl(kind)) stream.lastAccessMs = ctx.now();
}

/** Resolves a live stream by name for a direct operation, applying expiry (404 removes, 410 soft-deletes). */
export async function resolveLive(ctx: NodeContext, name: string): Promise<StreamState | undefined> {
  const stream = ctx.registry.byName(name);
  if (stream === undefined) return undefined;
  const access = checkAccess(lifecycleView(stream), ctx.now());
  if (access.kind !== "ok" && (("remove" in access && access.remove) || ("softDelete" in access && access.softDelete))) {
    const { ttlSeconds, expiresAtMs } = stream.config;
    ctx.log.log("stream.expired", {
      stream: name,
      streamId: stream.id,
      epoch: stream.epoch,
      ttlSeconds: ttlSeconds ?? null,
      expiresAtMs: expiresAtMs ?? null,
      idleMs: ctx.now() - stream.lastAccessMs,
      ageMs: ctx.now() - stream.createdAtMs,
    });
  }
  if (access.kind === "not-found" && access.remove) await removeStream(ctx, stream);
  else if (access.kind === "gone" && access.softDelete) await softDeleteStream(ctx, stream);
  return ctx.registry.byName(name);
}

/**
 * The lifecycle loop of expiry on the owner (each heartbeat): every stream held here with a TTL or an
 * expiry time is checked by the core's rule, and an expired one is removed or soft-deleted as an access
 * would, so its name frees without any request. Only the owner knows a stream's idle clock (the last
 * access lives in its memory), so this runs where the stream is, fenced by the owner's node epoch.
 * Returns how many expired.
 */
export async function expireIdle(ctx: NodeContext): Promise<number> {
  let expired = 0;
  for (const stream of [...ctx.registry.all()]) {
    if (isGone(stream) || stream.lifecycle === "soft-deleted" || (stream.config.ttlSeconds === null && stream.config.expiresAtMs === null)) continue;
    if (checkAccess(lifecycleView(stream), ctx.now()).kind === "ok") continue;
    await resolveLive(ctx, stream.name);
    expired++;
  }
  return expired;
}

/**
 * Writes a control record (soft delete, delete) for a stream at its acknowledged tail, after everything it
 * decided before. Resolves once durable.
 */
export async function writeControlRecord(ctx: NodeContext, stream: StreamState, meta: RecordMeta): Promise<void> {
  // Never the eof flag: only a stream's closing record carries it (stream objects allow one, last).
  await commitRecord(ctx, stream, walRecord(stream, stream.decided.tail, meta));
}

/**
 * Removes a stream for good (DELETE without forks, expiry, the last fork of a soft-deleted source gone):
 * a delete record in the WAL, then the metadata log, then memory; wakes its readers; releases its source
 * and cascades up a chain of soft-deleted sources.
 */
export async function removeStream(ctx: NodeContext, stream: StreamState): Promise<void> {
  if (isGone(stream)) return;
  // Refused from now on (the name is free once the record landed; creates of it wait on the name lock).
  ctx.registry.remove(stream);
  ctx.readers.notify(stream.id);
  await writeControlRecord(ctx, stream, { k: "delete" });
  const deleted = await ctx.meta.propose({
    type: "DeleteStream",
    streamId: stream.id,
    by: { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch },
  });
  if (!deleted.ok && deleted.error.code !== "not_found") {
    ctx.log.log("node.error", { during: "delete_stream", stream: stream.name, streamId: stream.id, code: deleted.error.code }, deleted.error.message);
  }
  ctx.view.invalidate(stream.name);
  const source = ctx.registry.detachFork(stream);
  if (source !== undefined && !isGone(source) && sourceAfterForkRemoved(source) === "remove") await removeStream(ctx, source);
}

/** Soft-deletes a stream forks still read: durable first, then refused from now on. */
export async function softDeleteStream(ctx: NodeContext, stream: StreamState): Promise<void> {
  if (stream.lifecycle === "soft-deleted") return;
  stream.lifecycle = "soft-deleted";
  ctx.readers.notify(stream.id);
  await writeControlRecord(ctx, stream, { k: "soft-delete" });
}

/**
 * Makes sure this incarnation has opened the stream in the metadata log (a restarted node re-opens its
 * streams lazily, at their first write): the stream epoch every record carries.
 */
export async function ensureOpened(ctx: NodeContext, stream: StreamState): Promise<DomainError | null> {
  if (stream.phase.kind !== "held") return null;
  return ctx.locks.run(`open:${stream.id}`, async () => {
    if (stream.phase.kind !== "held") return null;
    const opened = await ctx.meta.propose({
      type: "OpenStream",
      streamId: stream.id,
      nodeId: ctx.nodeId,
      nodeEpoch: ctx.nodeEpoch,
    });
    if (!opened.ok) return opened.error.code === "held_by" ? opened.error : unavailable(opened.error.message);
    // Removed, expired or being handed off meanwhile (the append path holds no name lock): the caller's
    // checks of the phase answer for it.
    if (stream.phase.kind !== "held") return null;
    stream.epoch = opened.value.stream.epoch;
    moveTo(stream, { kind: "opened" });
    return null;
  });
}
