// What the state asks of one node, and the plans built from it (docs/transfers.md): the pending
// transfers a node takes part in (the watcher loop on every node acts on them), every pending transfer
// (admin), and a drain plan: each stream assigned to a draining node, to the node placement would choose,
// counting the streams already planned so the plan spreads them by the slots ratio.
import { chooseNode } from "./placement.ts";
import { countsAsAssigned, type MetaState } from "./state.ts";
import { streamView, type StreamView, type Touched } from "./view.ts";

/** Streams with a pending transfer whose source or target is `nodeId`. */
export function transferDuties(state: MetaState, nodeId: string): StreamView[] {
  const duties: StreamView[] = [];
  for (const [streamId, transfer] of state.transfers.entries()) {
    if (transfer.source !== nodeId && transfer.target !== nodeId) continue;
    const stream = state.streams.get(streamId);
    if (stream !== undefined) duties.push(streamView(state, stream));
  }
  return duties;
}

/**
 * Whether a changed stream concerns `nodeId`'s watcher: a transfer it is source or target of, or a stream
 * handed to it. Other changes (the creates and opens of a busy log) do not wake it.
 */
export function concernsNode(stream: StreamView, nodeId: string): boolean {
  const transfer = stream.transfer;
  if (transfer !== undefined && (transfer.source === nodeId || transfer.target === nodeId)) return true;
  return isHandedTo(stream, nodeId);
}

/**
 * The nodes whose watcher an entry that touched `touched` may concern, judged on the state after it: each
 * node it touched (a registration or a declared death may supersede the watcher), and for each stream it
 * touched, the source and target of its pending transfer, or the node it is handed to (`concernsNode`).
 * The metadata log wakes only these watchers, so a busy log of creates and opens wakes none.
 */
export function nodesConcernedBy(state: MetaState, touched: Touched): Set<string> {
  const nodes = new Set(touched.nodes ?? []);
  for (const streamId of touched.streams ?? []) {
    const transfer = state.transfers.get(streamId);
    if (transfer !== undefined) {
      nodes.add(transfer.source);
      nodes.add(transfer.target);
      continue;
    }
    const stream = state.streams.get(streamId);
    if (stream !== undefined && stream.owner !== null && stream.ownership === "placed" && stream.epoch > 0) nodes.add(stream.owner);
  }
  return nodes;
}

/** Every stream with a pending transfer. */
export function pendingTransfers(state: MetaState): StreamView[] {
  const views: StreamView[] = [];
  for (const [streamId] of state.transfers.entries()) {
    const stream = state.streams.get(streamId);
    if (stream !== undefined) views.push(streamView(state, stream));
  }
  return views;
}

/**
 * A stream a transfer just handed to `nodeId` (placed on it at a non-zero epoch: CompleteTransfer leaves it
 * `placed` at the closed epoch) that it should open at once (pre-warm). A fresh placement is at epoch 0: its
 * create is on its way and opens it.
 */
export function isHandedTo(stream: StreamView, nodeId: string): boolean {
  return stream.owner === nodeId && stream.ownership === "placed" && stream.epoch > 0 && stream.transfer === undefined;
}

/** Every stream `isHandedTo` the node (the node's streams: at its start). */
export function handedToNode(state: MetaState, nodeId: string): StreamView[] {
  const views: StreamView[] = [];
  for (const stream of state.streams.ownedBy(nodeId)) {
    if (stream.ownership !== "placed" || stream.epoch === 0) continue;
    const view = streamView(state, stream);
    if (isHandedTo(view, nodeId)) views.push(view);
  }
  return views;
}

export interface DrainMove {
  readonly streamId: string;
  readonly name: string;
  readonly target: string;
}

/**
 * The transfers that empty `nodeId`: every stream assigned to it (placed or opened) without a pending
 * transfer, each to `chooseNode` over the other eligible nodes, as if the moves planned before it had
 * completed. `nodeId` itself is never a target (the caller marks it draining first). Null target: no
 * eligible node is left, and the plan stops short (the caller reports it). At most `limit` moves: a drain
 * begins its transfers a batch at a time, and the next drain round plans the streams left.
 */
export function planDrain(state: MetaState, nodeId: string, limit = Number.POSITIVE_INFINITY): { moves: DrainMove[]; unplaceable: number } {
  const assigned = new Map(state.assigned);
  assigned.delete(nodeId);
  const others: MetaState = { ...state, nodes: new Map([...state.nodes].filter(([id]) => id !== nodeId)) };
  const moves: DrainMove[] = [];
  let unplaceable = 0;
  for (const stream of state.streams.ownedBy(nodeId)) {
    if (moves.length >= limit) break;
    if (!countsAsAssigned(stream) || state.transfers.get(stream.id) !== undefined) continue;
    const target = chooseNode(others, assigned);
    if (target === null) {
      unplaceable++;
      continue;
    }
    moves.push({ streamId: stream.id, name: stream.name, target: target.id });
    assigned.set(target.id, (assigned.get(target.id) ?? 0) + 1);
  }
  return { moves, unplaceable };
}

export interface DrainProgress {
  readonly nodeId: string;
  readonly draining: boolean;
  /** Streams still placed on or opened by the node, or closed by it with their transfer not complete yet. */
  readonly remaining: number;
  /** Of those, how many have a transfer pending. */
  readonly transferring: number;
  /**
   * Transfers pending to the node: begun before it was marked draining, they still land on it (a pending
   * transfer carries on), and only a drain after they landed moves those streams away.
   */
  readonly incoming: number;
}

export function drainProgress(state: MetaState, nodeId: string): DrainProgress | null {
  const node = state.nodes.get(nodeId);
  if (node === undefined) return null;
  let transferring = 0;
  let incoming = 0;
  // A stream the source has closed but whose transfer is not complete yet is no longer "assigned" (placed
  // or opened) anywhere, but it has not left the node either: it counts as remaining until the completion.
  let closedInTransfer = 0;
  for (const [streamId, transfer] of state.transfers.entries()) {
    const stream = state.streams.get(streamId);
    if (stream === undefined) continue;
    if (transfer.target === nodeId) incoming++;
    if (transfer.source !== nodeId) continue;
    transferring++;
    if (stream.ownership === "closed") closedInTransfer++;
  }
  return { nodeId, draining: node.draining, remaining: (state.assigned.get(nodeId) ?? 0) + closedInTransfer, transferring, incoming };
}

/** A drain is done when the node is draining, holds nothing, and nothing is on its way to it. */
export function isDrained(progress: DrainProgress): boolean {
  return progress.draining && progress.remaining === 0 && progress.incoming === 0;
}

/** Why a drain cannot go on by itself (see drainStall). */
export interface DrainStall {
  /**
   * `unplaceable`: no other node has slots and is not draining (add a node or raise slots, then drain again);
   * `refused`: the log refused their transfers for now (a dead node's takeover to wait for: drain again).
   */
  readonly reason: "unplaceable" | "refused";
  readonly streams: number;
}

/**
 * Whether a drain round (planDrain's `begun` and `unplaceable` right after `progress`) leaves the drain stuck:
 * streams remain on the node, none of them is moving, this round began nothing and nothing is on its way
 * to the node (a transfer landing there is planned by the next round). Null while the drain is moving or done.
 */
export function drainStall(progress: DrainProgress, round: { readonly begun: number; readonly unplaceable: number }): DrainStall | null {
  if (progress.remaining === 0 || progress.transferring > 0 || progress.incoming > 0 || round.begun > 0) return null;
  // Nothing moves: every stream left was planned this round, and placed nowhere or refused.
  if (round.unplaceable > 0) return { reason: "unplaceable", streams: round.unplaceable };
  return { reason: "refused", streams: progress.remaining };
}
