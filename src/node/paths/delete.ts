// DELETE: a stream without forks is removed (its name is free at once); one that forks still read is
// soft-deleted (410 from then on, its data kept for the forks). Serialized per name with creates.
import { domainError } from "../../core/errors.ts";
import { deleteOutcome } from "../../core/protocol/fork.ts";

import { settled, type NodeContext } from "../context.ts";
import { errorReply, reply, type Reply } from "../state/replies.ts";
import { removeStream, resolveLive, softDeleteStream } from "../streams/lifecycle.ts";
import { missingStream } from "../streams/missing-stream.ts";

export async function deleteStream(ctx: NodeContext, name: string): Promise<Reply> {
  return ctx.locks.run(`name:${name}`, async () => {
    if (ctx.stopped !== null) return errorReply(ctx.stopped);
    const stream = await resolveLive(ctx, name);
    if (stream === undefined) return missingStream(ctx, name);
    if (stream.lifecycle === "soft-deleted") return errorReply(domainError("gone", "the stream was deleted"));
    const error = await settled(ctx, stream);
    if (error !== null) return errorReply(error);
    if (deleteOutcome(stream.forkCount) === "remove") await removeStream(ctx, stream);
    else await softDeleteStream(ctx, stream);
    return reply(204, {});
  });
}
