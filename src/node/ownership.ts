// Giving up ownership of a stream this node holds: everything decided is flushed, then CloseStream at the
// epoch it opened at. The stream is then `closed` in the log: routing serves it where the request lands
// (R7) and the next write re-opens it (OpenStream re-places a closed stream on its opener). This is the
// source side of a transfer without the transfer (issue 5 builds transfers and drain on it); tests use it
// to show a closed stream revived.
import { domainError, type DomainError } from "../core/errors.ts";
import { ensureOpened, settled, unavailable, type NodeContext } from "./node-context.ts";

export async function closeOwnership(ctx: NodeContext, name: string): Promise<DomainError | null> {
  return ctx.locks.run(`name:${name}`, async () => {
    const stream = ctx.registry.byName(name);
    if (stream === undefined) return domainError("not_found", "no such stream");
    const openError = await ensureOpened(ctx, stream);
    if (openError !== null) return openError;
    // From here a write opens the stream again (at a new epoch) before it appends; a racing open makes
    // the close below stale (refused), never a second writer.
    stream.opened = false;
    const error = await settled(ctx, stream);
    if (error !== null) return error;
    const closed = await ctx.meta.propose({
      type: "CloseStream",
      streamId: stream.id,
      nodeId: ctx.nodeId,
      nodeEpoch: ctx.nodeEpoch,
      epoch: stream.epoch,
    });
    ctx.view.invalidate(name);
    return closed.ok ? null : unavailable(closed.error.message);
  });
}
