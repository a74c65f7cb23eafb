// PUT: create a stream (or a fork), or answer a repeated create. Serialized per name. The new stream is
// registered in the metadata log (CreateStream, PlaceStream, OpenStream: its id and stream epoch; placed on
// another node, the PUT is redirected there: see claimInMeta), then its create record (name, configuration,
// initial body) is written to the WAL; only once that landed is the stream visible and the 201 sent.
// Rules: docs/protocol-rules.md sections 3 and 4; the multi-node create: docs/router.md.
import { domainError, type DomainError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/meta/index.ts";
import type { NodeRecord, StreamRecord } from "../../core/meta/state.ts";
import { admitWalBytes, checkForkDepth } from "../../core/protocol/bounds.ts";
import { checkForkSource, resolveForkPoint, type ForkSourceView } from "../../core/protocol/fork.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { encodeJsonMessages } from "../../core/protocol/json-mode.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";
import {
  checkInitialBody,
  decideCreate,
  newStreamConfig,
  type CreateRequest,
  type ResolvedFork,
  type StreamConfig,
} from "../../core/protocol/stream-config.ts";
import { readManifest } from "../../storage/manifest.ts";
import { adoptStream } from "../ownership/adopt.ts";
import { announce, settled, type NodeContext } from "../context.ts";
import { errorReply, redirectReply, reply, unavailable, type Reply } from "../state/replies.ts";
import { routeAtNode } from "./routing.ts";
import { applyInitial, newStreamState, type StreamState } from "../state/stream-registry.ts";
import { commitRecord, walRecord } from "../streams/commit.ts";
import { recordAccess, resolveLive } from "../streams/lifecycle.ts";

const encoder = new TextEncoder();

export interface CreateInput {
  readonly name: string;
  readonly request: CreateRequest;
  readonly body: Uint8Array;
  /** The body as UTF-8, or null when it is not valid UTF-8. */
  readonly bodyText: string | null;
  /** The absolute URL of the stream, for `Location`. */
  readonly location: string;
}

export async function createStream(ctx: NodeContext, input: CreateInput): Promise<Reply> {
  const first = await ctx.locks.run(`name:${input.name}`, () => createLocked(ctx, input));
  if (!("adopt" in first)) return first;
  // The stream's data is in the store: it is opened from there (adoptStream takes the name lock itself),
  // then the create is answered as a repeat by the copy now held here.
  const error = await adoptStream(ctx, first.adopt);
  if (error !== null && error.code !== "held_by" && error.code !== "not_found") return errorReply(error);
  const again = await ctx.locks.run(`name:${input.name}`, () => createLocked(ctx, input));
  return "adopt" in again ? errorReply(unavailable(`${input.name} could not be opened here yet; retry`)) : again;
}

async function createLocked(ctx: NodeContext, input: CreateInput): Promise<Reply | { readonly adopt: StreamRecord }> {
  if (ctx.stopped !== null) return errorReply(ctx.stopped);
  // A create's initial body waits for the WAL like an append's (MAX_WAL_QUEUE_BYTES, docs/limits.md).
  const backlog = input.body.byteLength === 0 ? null : admitWalBytes(ctx.wal.queuedBytes, input.body.byteLength, ctx.settings.maxWalQueueBytes);
  if (backlog !== null) return errorReply(backlog);
  const { name, request } = input;
  const existing = await resolveLive(ctx, name);
  if (existing !== undefined) {
    const error = await settled(ctx, existing);
    if (error !== null) return errorReply(error);
    const decision = decideCreate(
      { lifecycle: existing.lifecycle, config: existing.config, eof: existing.eof },
      request,
    );
    if (decision.kind === "reject") return errorReply(decision.error);
    return reply(200, streamHeaders(existing));
  }
  const forked = request.fork === null ? { fork: null, source: undefined } : await resolveFork(ctx, request, request.fork);
  if ("kind" in forked) return forked;
  const config = newStreamConfig(request, forked.fork);
  const initial = checkInitialBody(config.contentType, input.body.byteLength, input.bodyText, ctx.settings.maxJsonMessages);
  if (!initial.ok) return errorReply(initial.error);
  const data = initial.value.kind === "json" ? encoder.encode(encodeJsonMessages(initial.value.messages)) : input.body;
  // The source cannot be removed while this create is in flight: the fork holds it from here on.
  if (forked.source !== undefined) ctx.registry.holdSource(forked.source);
  try {
    return await createNew(ctx, input, config, data, forked.source);
  } catch (error) {
    releaseSource(ctx, forked.source);
    throw error;
  }
}

/** A fork's source, held here and settled, and where the fork starts in it; or why it cannot be created (here). */
async function resolveFork(
  ctx: NodeContext,
  request: CreateRequest,
  fork: NonNullable<CreateRequest["fork"]>,
): Promise<{ readonly fork: ResolvedFork; readonly source: StreamState } | Reply> {
  const source = await resolveLive(ctx, fork.sourceName);
  if (source === undefined) {
    // A fork is created where its source lives: it reads the source's bytes below the fork point.
    const elsewhere = await routeAtNode(ctx, fork.sourceName);
    if (elsewhere !== null && elsewhere.kind === "redirect") return elsewhere;
  }
  if (source !== undefined) {
    const error = await settled(ctx, source);
    if (error !== null) return errorReply(error);
  }
  const view: ForkSourceView | null =
    source === undefined
      ? null
      : {
          streamId: source.id,
          lifecycle: source.lifecycle,
          contentType: source.config.contentType,
          expiry: { ttlSeconds: source.config.ttlSeconds, expiresAtMs: source.config.expiresAtMs },
          tailPositionBytes: source.tail,
        };
  const anchor = checkForkSource(fork, request.contentType, view);
  if (!anchor.ok) return errorReply(anchor.error);
  if (source === undefined || view === null) throw new Error("fork source vanished");
  const tooDeep = checkForkDepth(forkDepth(ctx, source), ctx.settings.maxForkDepth);
  if (tooDeep !== null) return errorReply(tooDeep);
  const point = resolveForkPoint(anchor.value, fork.subOffset, await ctx.registry.recordAt(source, anchor.value));
  if (!point.ok) return errorReply(point.error);
  return { fork: { source: view, anchorPositionBytes: anchor.value, forkPositionBytes: point.value }, source };
}

/**
 * The new stream: claimed in the metadata log, then its create record written; visible (and answered 201)
 * once that landed. The fork's source, held by the caller, is released here when the create goes no further
 * (adopted, redirected, refused) and by the caller when this throws.
 */
async function createNew(
  ctx: NodeContext,
  input: CreateInput,
  config: StreamConfig,
  data: Uint8Array,
  source: StreamState | undefined,
): Promise<Reply | { readonly adopt: StreamRecord }> {
  const { name, request } = input;
  const registered = await claimInMeta(ctx, name, config);
  if (registered.kind === "adopt") {
    releaseSource(ctx, source);
    return { adopt: registered.view };
  }
  if (registered.kind !== "claimed") {
    releaseSource(ctx, source);
    return registered.kind === "redirect" ? redirectReply(registered.node) : errorReply(registered.error);
  }
  const nowMs = ctx.now();
  const stream = newStreamState({ id: registered.id, name, config, createdAtMs: nowMs, epoch: registered.epoch, opened: true });
  stream.decided.tail = stream.base + data.byteLength;
  stream.decided.eof = request.closed;
  ctx.registry.beginCreate(stream);
  const landed = commitRecord(ctx, stream, walRecord(stream, stream.base, { k: "create", name, config, at: nowMs }, data, request.closed));
  try {
    await landed;
  } finally {
    ctx.registry.endCreate(stream);
  }
  applyInitial(stream, data, request.closed);
  recordAccess(ctx, stream, "create");
  ctx.registry.add(stream);
  if (stream.tail > stream.base || stream.eof) await announce(ctx, stream);
  return reply(201, { ...streamHeaders(stream), [HEADER.location]: input.location });
}

/**
 * How many forks deep `stream` is (0: not a fork), counted along its sources here (a fork lives where its
 * source does). Stops counting past the bound: every chain it can meet was refused there.
 */
function forkDepth(ctx: NodeContext, stream: StreamState): number {
  let depth = 0;
  for (let at: StreamState | undefined = stream; at !== undefined && at.config.fork !== null && depth <= ctx.settings.maxForkDepth; at = ctx.registry.sourceOf(at)) {
    depth++;
  }
  return depth;
}

function releaseSource(ctx: NodeContext, source: StreamState | undefined): void {
  if (source !== undefined) ctx.registry.dropSource(source);
}

/** Content-Type, Stream-Next-Offset and Stream-Closed: the headers of a create's answer. */
function streamHeaders(stream: StreamState): Record<string, string> {
  const headers: Record<string, string> = {
    [HEADER.contentType]: stream.config.contentType,
    [HEADER.streamNextOffset]: formatOffset(stream.tail),
  };
  if (stream.eof) headers[HEADER.streamClosed] = "true";
  return headers;
}

type Claim =
  | { readonly kind: "claimed"; readonly id: string; readonly epoch: number }
  | { readonly kind: "redirect"; readonly node: NodeRecord }
  | { readonly kind: "adopt"; readonly view: StreamRecord }
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
 */
async function claimInMeta(ctx: NodeContext, name: string, config: StreamConfig): Promise<Claim> {
  const by = { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch };
  const fail = (error: DomainError): Claim => ({ kind: "error", error });
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await ctx.meta.propose({ type: "ClaimStream", name, config: config as unknown as JsonObject, by });
    ctx.view.invalidate(name);
    if (claimed.ok && claimed.value.opened) return { kind: "claimed", id: claimed.value.stream.id, epoch: claimed.value.stream.epoch };
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
