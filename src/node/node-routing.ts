// A node answers a request from its own view, the same way the router does (DESIGN section 5, the table in
// src/core/routing.ts), except that it never forwards: a stream owned elsewhere gets a 307 to its owner.
// A stream this incarnation opened needs no lookup: only this incarnation can give it up (CloseStream
// carries its node epoch; a restart or a takeover seals its WAL first), so while it is opened here the
// view can only agree. Any other name is looked up afresh: that costs one metadata RPC on a misdirected
// request or a create, and keeps two stale views from sending a request back and forth.
import { domainError } from "../core/errors.ts";
import type { StreamLookup } from "../core/meta/view.ts";
import { routeStream } from "../core/routing.ts";
import { errorReply, redirectReply, unavailable, type NodeContext, type Reply } from "./node-context.ts";
import type { StreamState } from "./stream-registry.ts";

/** How long a request for a stream being transferred here waits for the transfer to settle (R2). */
export const PARK_TIMEOUT_MS = 10_000;
const PARK_POLL_MS = 200;

/** Null: serve here. Otherwise the reply (307, 409, 503). */
export async function routeAtNode(ctx: NodeContext, name: string): Promise<Reply | null> {
  const held = ctx.registry.byName(name);
  if (held?.opened === true) return null;
  const parkUntilMs = ctx.now() + PARK_TIMEOUT_MS;
  // A stream replayed after a restart (held, not opened yet) is served from the cached view.
  let lookup = await ctx.view.lookup(name, held === undefined);
  for (;;) {
    const handedOff = await handOffUnopened(ctx, name, lookup, held);
    if (handedOff !== null) lookup = handedOff;
    const decision = routeStream({ lookup, hereNodeId: ctx.nodeId, at: "node", mode: "redirect" });
    switch (decision.kind) {
      case "serve":
        return decision.rule === "R7" ? closedElsewhere(lookup, held) : null;
      case "redirect":
        return redirectReply(decision.node);
      case "forward":
        throw new Error("a node never forwards");
      case "transfer_pending":
        return errorReply(
          domainError("conflict", `the stream is being transferred to node ${decision.target}; retry there`, {
            target: decision.target,
            ...(decision.targetAddr === null ? {} : { targetAddr: decision.targetAddr }),
          }),
        );
      case "unavailable":
        return errorReply(unavailable(decision.reason));
      case "park":
        // R2: this node is the transfer target; wait for the source to complete it, then route again.
        if (ctx.now() >= parkUntilMs) return errorReply(unavailable("the transfer of this stream has not settled; retry"));
        await new Promise((resolve) => setTimeout(resolve, PARK_POLL_MS));
        lookup = await ctx.view.lookup(name, true);
        continue;
    }
  }
}

/**
 * R7 (closed, or created and never placed) says "serve here: the open re-places it here". That needs the
 * stream's data: a node that holds it (it served the stream last) revives it at its next write. A node
 * that does not hold it cannot read another node's WAL yet (adoption from the manifest comes with
 * failover, issue 5), so it sends the request to the stream's last owner instead.
 */
function closedElsewhere(lookup: StreamLookup, held: StreamState | undefined): Reply | null {
  const stream = lookup.stream;
  if (held !== undefined || stream === null || stream.ownership !== "closed" || stream.owner === null) return null;
  if (lookup.ownerNode === null) return errorReply(unavailable(`no address known for node ${stream.owner}`));
  return redirectReply(lookup.ownerNode);
}

/**
 * The source side of a transfer of a stream this node was placed on and never opened (a fork created next
 * to its source: see create-path.ts). There is nothing to flush, so the hand-off is immediate: close at
 * the placed epoch and complete the transfer. Returns the lookup after it, or null when it does not apply.
 */
async function handOffUnopened(
  ctx: NodeContext,
  name: string,
  lookup: StreamLookup,
  held: StreamState | undefined,
): Promise<StreamLookup | null> {
  const stream = lookup.stream;
  if (stream === null || held !== undefined || stream.transfer === undefined) return null;
  if (stream.transfer.source !== ctx.nodeId || stream.owner !== ctx.nodeId) return null;
  if (stream.ownership !== "placed" && stream.ownership !== "closed") return null;
  if (stream.ownership === "placed") {
    const closed = await ctx.meta.propose({
      type: "CloseStream",
      streamId: stream.id,
      nodeId: ctx.nodeId,
      nodeEpoch: ctx.nodeEpoch,
      epoch: stream.epoch,
    });
    if (!closed.ok) return null;
  }
  const completed = await ctx.meta.propose({
    type: "CompleteTransfer",
    streamId: stream.id,
    closedEpoch: stream.epoch,
    by: { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch },
  });
  if (!completed.ok && completed.error.code !== "not_found") return null;
  return ctx.view.lookup(name, true);
}
