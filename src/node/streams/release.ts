// A stream leaving this node without being deleted (a transfer's hand-off, or a stale copy found after a
// crash): forgotten here (its name is free on this node, forks here keep reading it), its live readers
// sent on. Its data is in stream objects already: the hand-off flushed it.
import type { StreamView } from "../../core/meta/view.ts";
import { type NodeContext } from "../context.ts";
import { isGone, type StreamState } from "../state/stream-registry.ts";
import { writeControlRecord } from "./lifecycle.ts";

/**
 * Whether a copy of `view`'s stream that this node holds but has not opened is stale: the log shows that
 * another node owned the stream after it (handed to this node at an epoch above 0, which only a transfer
 * completed by another node does, whether or not a new transfer is pending; or closed last by another
 * node). The stream's state is in the manifest that ownership left, so the copy must be released: the
 * stream is adopted from the store, or (a transfer pending from here) closed without a flush (T2). A view
 * older than the copy (its epoch below the copy's: the copy was adopted after it, e.g. a watcher's duty
 * remembered from an earlier round) says nothing about the copy.
 */
export function heldCopyIsStale(view: StreamView, nodeId: string, copy: StreamState): boolean {
  if (view.epoch < copy.epoch) return false;
  if (view.ownership === "closed") return view.owner !== nodeId;
  return view.ownership === "placed" && view.owner === nodeId && view.epoch > 0;
}

/**
 * Releases a copy of a stream this node holds but no longer owns (closed, or opened elsewhere at a later
 * epoch): its data is in stream objects already. Nothing happens for a stream this incarnation opened.
 */
export async function forgetStale(ctx: NodeContext, streamId: string): Promise<void> {
  const stream = ctx.registry.get(streamId);
  if (stream === undefined || stream.phase.kind !== "held") return;
  await ctx.locks.run(`name:${stream.name}`, async () => {
    if (stream.phase.kind !== "held") return;
    await releaseDurably(ctx, stream);
  });
}

/**
 * Writes the stream's `release` record and forgets the stream in the same synchronous step it queues the
 * record: a compaction's snapshot decided after that point no longer includes it. (Forgotten only once the
 * record landed, a snapshot decided meanwhile landed after the release and brought the stream back on
 * replay, where a later adoption's snapshot record was then passed over: the node could not start.)
 */
export async function releaseDurably(ctx: NodeContext, stream: StreamState): Promise<void> {
  const written = writeControlRecord(ctx, stream, { k: "release" });
  release(ctx, stream);
  await written;
}

/** Forgets a handed-off stream here: the name is free, forks here keep reading it, readers move on. */
function release(ctx: NodeContext, stream: StreamState): void {
  if (isGone(stream)) return; // removed meanwhile (an expiry during the hand-off): its removal did all this
  ctx.registry.remove(stream, "moved-away");
  ctx.view.invalidate(stream.name);
  ctx.readers.notify(stream.id);
  ctx.registry.detachFork(stream);
}

