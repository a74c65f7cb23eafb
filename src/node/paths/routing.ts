// A node answers a request from its own view, the same way the router does (docs/router.md, the table in
// src/core/routing.ts), except that it never forwards: a stream owned elsewhere gets a 307 to its owner.
// A stream this incarnation opened needs no lookup: only this incarnation can give it up (CloseStream
// carries its node epoch; a restart or a takeover seals its WAL first), so while it is opened here the
// view can only agree. Any other name is looked up afresh: that costs one metadata RPC on a misdirected
// request or a create, and keeps two stale views from sending a request back and forth.
import type { DomainError } from "../../core/errors.ts";
import { refusalError, routeStream } from "../../core/routing.ts";
import { opensFromStore } from "../../core/transfer-steps.ts";
import { adoptStream } from "../ownership/adopt.ts";
import { type NodeContext } from "../context.ts";
import { reloadEvicted } from "../streams/eviction.ts";
import { forgetStale, heldCopyIsStale } from "../streams/release.ts";
import { errorReply, redirectReply, unavailable, type Reply } from "../state/replies.ts";
import type { StreamState } from "../state/stream-registry.ts";
import { settleWithin } from "../../waits/keyed-waiters.ts";

/** How long a request for a stream being transferred here waits for the transfer to settle (R2). */
const PARK_TIMEOUT_MS = 10_000;
/** How often a parked request looks at the log again if nothing wakes it first. */
const PARK_POLL_MS = 200;

/**
 * Out of touch with the metadata log for nearly a lease: this incarnation may be declared dead and its
 * streams taken over, so it serves nothing new and ends its live readers (they retry at the new owner).
 */
export function lostTouch(ctx: NodeContext): DomainError | null {
  return ctx.now() >= ctx.liveUntilMs ? unavailable("this node has lost touch with the metadata log; retry") : null;
}

/** Null: serve here. Otherwise the reply (307, 409, 503). */
export async function routeAtNode(ctx: NodeContext, name: string): Promise<Reply | null> {
  const lost = lostTouch(ctx);
  if (lost !== null) return errorReply(lost);
  let held = ctx.registry.byName(name);
  if (held?.phase.kind === "opened") return null;
  const parkUntilMs = ctx.now() + PARK_TIMEOUT_MS;
  if (held?.phase.kind === "handing-off") {
    // This node is handing the stream off: wait for that (bounded), then route the request to where it went.
    await settleWithin(held.phase.done, PARK_TIMEOUT_MS);
    held = ctx.registry.byName(name);
    if (held?.phase.kind === "opened") return null;
  }
  // A stream replayed after a restart (held, not opened yet) is served from the cached view.
  let lookup = await ctx.view.lookup(name, held === undefined);
  for (let adoptions = 0; ; ) {
    const decision = routeStream({ lookup, name, hereNodeId: ctx.nodeId, at: "node", mode: "redirect" });
    switch (decision.kind) {
      case "serve": {
        const stream = lookup.stream;
        if (held?.phase.kind === "held" && stream !== null && heldCopyIsStale(stream, ctx.nodeId, held)) {
          await forgetStale(ctx, held.id); // a copy from before another node's ownership: adopt instead
          held = ctx.registry.byName(name);
        }
        if (held !== undefined || stream === null) return null;
        // Evicted while idle (streams/eviction.ts, table RL): back into memory from its manifest, still owned here.
        if (stream.owner === ctx.nodeId && stream.ownership === "opened" && stream.transfer === undefined && (await reloadEvicted(ctx, stream))) return null;
        if (!opensFromStore(stream, ctx.nodeId)) return null;
        // R7 (closed) or R5 for a stream handed here and not opened yet: open it from the object store.
        const error = await adoptStream(ctx, stream);
        if (error === null || error.code === "not_found") return null;
        if (error.code !== "held_by" || ++adoptions > 2) return errorReply(error);
        lookup = await ctx.view.lookup(name, true); // someone else opened it first: route there
        held = ctx.registry.byName(name);
        continue;
      }
      case "redirect":
        return redirectReply(decision.node);
      case "forward":
        throw new Error("a node never forwards");
      case "transfer_pending":
      case "unavailable":
        return errorReply(refusalError(decision));
      case "park": {
        // R2: this node is the transfer target; wait for the source to complete it, then route again.
        // The answer that says so was on its way while this node may have opened the stream (and woken the
        // requests parked for it) or begun handing it on: look here, with no await before the wait, so
        // that wake-up is not missed and the request does not sit out a poll for a stream it can be served.
        const here = ctx.registry.byName(name);
        if (here?.phase.kind === "opened") return null;
        if (ctx.now() >= parkUntilMs) return errorReply(unavailable("the transfer of this stream has not settled; retry"));
        // Every parking place taken (docs/limits.md): the wait would return at once and this loop would poll the
        // metadata log without pause; answer as a park that ran out instead.
        if (here?.phase.kind !== "handing-off" && ctx.parked.full) {
          return errorReply(unavailable("too many requests wait for transfers on this node; retry"));
        }
        // Woken as soon as this node opens the stream (its watcher sees the completion), else polls.
        if (here?.phase.kind === "handing-off") await settleWithin(here.phase.done, parkUntilMs - ctx.now());
        else await ctx.parked.wait(name, PARK_POLL_MS);
        lookup = await ctx.view.lookup(name, true);
        continue;
      }
    }
  }
}

/**
 * The answer to a write that found the stream being handed off: once the hand-off is over, a redirect to
 * where the stream went (or a 503 to retry, if it stayed: the hand-off failed and the watcher retries it).
 */
export async function afterHandOff(ctx: NodeContext, stream: StreamState): Promise<Reply> {
  if (stream.phase.kind === "handing-off") await settleWithin(stream.phase.done, PARK_TIMEOUT_MS);
  const routed = await routeAtNode(ctx, stream.name);
  return routed ?? errorReply(unavailable("the stream is being handed to another node; retry"));
}
