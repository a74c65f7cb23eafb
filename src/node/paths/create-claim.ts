// The metadata side of a create (docs/router.md, "A create that lands on a non-owner"): the ClaimStream that
// registers, places and opens a new stream, and what a node does when the claim did not open it here (a
// 307 to the owner, an adoption, a re-open, or routing the request first). paths/create.ts calls it.
import { domainError, type DomainError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/meta/index.ts";
import type { NodeRecord, StreamRecord } from "../../core/meta/state.ts";
import type { StreamConfig } from "../../core/protocol/stream-config.ts";
import { readManifest } from "../../storage/manifest.ts";
import type { NodeContext } from "../context.ts";
import { unavailable } from "../state/replies.ts";

export type Claim =
  | { readonly kind: "claimed"; readonly id: string; readonly epoch: number }
  | { readonly kind: "redirect"; readonly node: NodeRecord }
  | { readonly kind: "adopt"; readonly view: StreamRecord }
  /** Not opened by the claim, at a request that was not routed: route it first (createStream). */
  | { readonly kind: "route" }
  | { readonly kind: "error"; readonly error: DomainError };

/**
 * The metadata side of a create (docs/router.md, "A create that lands on a non-owner"), from a node that
 * does not hold the name: one ClaimStream (table CM), which registers the name (a no-op when the log holds
 * it with this configuration), places it when nobody owns it yet, and opens it when placed here. Opened
 * here: the caller writes the create record (201). Placed elsewhere: a 307 to the owner, where the same
 * PUT comes back, and its own ClaimStream opens the stream placed there and never opened; it writes the body
 * there (201). So the body is written once, by the owner, and the 201 goes to the one request that opened
 * the stream; a repeat finds it held (200, or 409 for another configuration, answered by the owner from its
 * registry).
 *
 * A name this node opened (in an earlier incarnation, or before its create record landed) but does not
 * hold is a create that never completed: adopted with the same configuration, deleted and created again
 * with another. A name placed on this node, never opened, with another configuration is another client's
 * create on its way here: 409.
 *
 * A PUT that was not routed (a new name, not held here: node-http/stream-routes.ts) goes no further than
 * the claim unless the claim opened the stream: otherwise it is routed first (`route`), and comes back here
 * with `routed` set for the rest of these steps.
 */
export async function claimInMeta(ctx: NodeContext, name: string, config: StreamConfig, routed: boolean): Promise<Claim> {
  const by = { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch };
  const fail = (error: DomainError): Claim => ({ kind: "error", error });
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await ctx.meta.propose({ type: "ClaimStream", name, config: config as unknown as JsonObject, by });
    ctx.view.invalidate(name);
    if (claimed.ok && claimed.value.opened) return { kind: "claimed", id: claimed.value.stream.id, epoch: claimed.value.stream.epoch };
    // This claim placed a new stream on another node (CM4): an eligible node, no transfer yet, nothing to
    // route: the 307 goes to the address the answer carries.
    const placedElsewhere = claimed.ok && claimed.changed && claimed.value.stream.owner !== ctx.nodeId ? claimed.value.ownerNode : null;
    if (placedElsewhere !== null && config.fork === null) return { kind: "redirect", node: placedElsewhere };
    // A refusal of the request itself is answered as it is, routed or not (see below).
    const refusedOutright = !claimed.ok && ["invalid", "too_large", "limit_reached"].includes(claimed.error.code);
    if (!routed && !refusedOutright) return { kind: "route" };
    let record: StreamRecord;
    let ownerNode: NodeRecord | null = null;
    const sameConfig = claimed.ok;
    if (claimed.ok) {
      record = claimed.value.stream;
      ownerNode = claimed.value.ownerNode;
    } else {
      // A refusal of the request itself (a configuration over the log's size limit) is the client's to fix,
      // not a reason to retry: once a 17 KB Content-Type got a retryable 503 here. A full
      // deployment (MAX_STREAMS) keeps its own answer, 429 with the limit, for the same reason.
      if (["invalid", "too_large", "limit_reached"].includes(claimed.error.code)) return fail(claimed.error);
      if (claimed.error.code !== "conflict") return fail(unavailable(claimed.error.message));
      const found = await ctx.view.lookup(name, true);
      if (found.stream === null) continue; // deleted meanwhile: create again
      record = found.stream;
      ownerNode = found.ownerNode;
    }
    const mine = record.owner === ctx.nodeId;
    if (mine && (record.ownership === "opened" || record.ownership === "closed") && !sameConfig) {
      // A leftover of this node's own unfinished create with another configuration: replace it.
      const deleted = await ctx.meta.propose({ type: "DeleteStream", streamId: record.id, by });
      ctx.view.invalidate(name);
      if (!deleted.ok && deleted.error.code !== "not_found") return fail(unavailable(deleted.error.message));
      continue;
    }
    if (!sameConfig && (record.ownership === "unplaced" || record.owner === ctx.nodeId)) {
      return fail(domainError("conflict", "the stream is being created with another configuration"));
    }
    if (record.owner !== ctx.nodeId) return redirectToOwner(ctx, name, config, record, ownerNode, by);
    // Handed here by a transfer, re-led here after a failover, or taken over: its data is in the store, and
    // it opens from there (ownership/adopt.ts), never as a new empty stream. The caller then answers from the copy.
    if (record.ownership !== "placed" || record.epoch > 0) {
      if ((await readManifest(ctx.store, record.id)) !== null) return { kind: "adopt", view: record };
    }
    // Opened by an earlier incarnation of this node whose create record never landed: opened again (epoch + 1).
    const opened = await ctx.meta.propose({ type: "OpenStream", streamId: record.id, nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch });
    ctx.view.invalidate(name);
    if (!opened.ok) return fail(unavailable(opened.error.message));
    return { kind: "claimed", id: record.id, epoch: opened.value.stream.epoch };
  }
  return fail(unavailable("the metadata log keeps a conflicting record of this name; retry"));
}

/** A 307 to the node that owns (or is about to own) the stream; a fork is asked to be handed here first. */
async function redirectToOwner(
  ctx: NodeContext,
  name: string,
  config: StreamConfig,
  record: StreamRecord,
  ownerNode: NodeRecord | null,
  by: { readonly nodeId: string; readonly nodeEpoch: number },
): Promise<Claim> {
  if (config.fork !== null && record.ownership === "placed" && record.epoch === 0) {
    // Placement chose another node for a fork whose source is here: ask for the fork to be handed here.
    // The other node's watcher closes and completes it at once (T2); meanwhile it redirects the PUT back
    // here (R3), where it parks until the transfer settles (R2).
    const moving = await ctx.meta.propose({ type: "BeginTransfer", streamId: record.id, target: ctx.nodeId, by });
    if (!moving.ok) return { kind: "error", error: unavailable(moving.error.message) };
  }
  let node = ownerNode !== null && ownerNode.id === record.owner && config.fork === null ? ownerNode : null;
  if (node === null) {
    const lookup = await ctx.view.lookup(name, true);
    const owner = lookup.stream?.transfer?.source ?? lookup.stream?.owner;
    node = owner === lookup.ownerNode?.id ? lookup.ownerNode : null;
  }
  if (node === null) return { kind: "error", error: unavailable(`no address known for the owner of ${name}`) };
  return { kind: "redirect", node };
}
