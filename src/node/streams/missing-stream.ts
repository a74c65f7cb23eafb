// The 404 for a name this node does not hold. One case gets its own message: the metadata log has the
// stream placed on this node and never opened, which is a create that stopped halfway. The router placed
// it here and answered the PUT with a 307 that the client did not follow (curl without -L), so the PUT
// never reached this node and the stream does not exist yet. Repeating the PUT, following the redirect,
// completes it (paths/create.ts opens a stream placed here by the same configuration).
import { domainError } from "../../core/errors.ts";
import type { StreamView } from "../../core/meta/view.ts";
import type { NodeContext } from "../context.ts";
import { errorReply, type Reply } from "../state/replies.ts";

/** Placed on `nodeId` by a create, never opened there, not moving: the create's PUT never arrived. */
function isUnfinishedCreate(stream: StreamView, nodeId: string): boolean {
  return stream.owner === nodeId && stream.ownership === "placed" && stream.epoch === 0 && stream.transfer === undefined;
}

export async function missingStream(ctx: NodeContext, name: string): Promise<Reply> {
  const { stream } = await ctx.view.lookup(name);
  if (stream !== null && isUnfinishedCreate(stream, ctx.nodeId)) {
    return errorReply(
      domainError(
        "not_found",
        `no such stream: the create of ${name} was never completed at its owner (its PUT was answered with a 307 ` +
          "that was not followed); repeat the PUT, following redirects (curl -L)",
      ),
    );
  }
  return errorReply(domainError("not_found", "no such stream"));
}
