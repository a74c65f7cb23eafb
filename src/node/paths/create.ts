// PUT: create a stream (or a fork), or answer a repeated create. Serialized per name. The new stream is
// registered in the metadata log (one ClaimStream: its id and stream epoch; placed on another node, the PUT
// is redirected there: see create-claim.ts), then its create record (name, configuration,
// initial body) is written to the WAL; only once that landed is the stream visible and the 201 sent.
// Rules: docs/protocol-rules.md sections 3 and 4; the multi-node create: docs/router.md.
import type { StreamRecord } from "../../core/meta/state.ts";
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
import { adoptStream } from "../ownership/adopt.ts";
import { announce, settled, type NodeContext } from "../context.ts";
import { errorReply, redirectReply, reply, unavailable, type Reply } from "../state/replies.ts";
import { routeAtNode } from "./routing.ts";
import { applyInitial, newStreamState, type StreamState } from "../state/stream-registry.ts";
import { commitRecord, walRecord } from "../streams/commit.ts";
import { claimInMeta } from "./create-claim.ts";
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
  /**
   * Whether the request was routed before it got here (paths/routing.ts). A create of a name not held here
   * need not be: its claim opens a new stream at once, and only a claim that did not is routed first.
   */
  readonly routed: boolean;
}

export async function createStream(ctx: NodeContext, input: CreateInput): Promise<Reply> {
  let first = await ctx.locks.run(`name:${input.name}`, () => createLocked(ctx, input, input.routed));
  if ("route" in first) {
    // The claim did not open the stream here: route the PUT as any request (a 307 to the owner, a park for
    // a transfer, a 503 for a dead owner, an adoption), then create as a routed request does.
    const routed = await routeAtNode(ctx, input.name);
    if (routed !== null) return routed;
    first = await ctx.locks.run(`name:${input.name}`, () => createLocked(ctx, input, true));
  }
  if ("route" in first) return errorReply(unavailable(`${input.name} could not be routed yet; retry`));
  if (!("adopt" in first)) return first;
  // The stream's data is in the store: it is opened from there (adoptStream takes the name lock itself),
  // then the create is answered as a repeat by the copy now held here.
  const error = await adoptStream(ctx, first.adopt);
  if (error !== null && error.code !== "held_by" && error.code !== "not_found") return errorReply(error);
  const again = await ctx.locks.run(`name:${input.name}`, () => createLocked(ctx, input, true));
  return "adopt" in again || "route" in again ? errorReply(unavailable(`${input.name} could not be opened here yet; retry`)) : again;
}

/** What createLocked may hand back instead of a reply: a stream to adopt, or a PUT to route first. */
type Detour = { readonly adopt: StreamRecord } | { readonly route: true };

/** `routed`: the request was routed here (paths/routing.ts); otherwise the claim may ask for that first. */
async function createLocked(ctx: NodeContext, input: CreateInput, routed: boolean): Promise<Reply | Detour> {
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
    return await createNew(ctx, input, config, data, forked.source, routed);
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
  let source = await resolveLive(ctx, fork.sourceName);
  if (source === undefined) {
    // A fork is created where its source lives: it reads the source's bytes below the fork point.
    const elsewhere = await routeAtNode(ctx, fork.sourceName);
    if (elsewhere !== null && elsewhere.kind === "redirect") return elsewhere;
    // Served here: an evicted source is back in memory now (streams/eviction.ts).
    if (elsewhere === null) source = await resolveLive(ctx, fork.sourceName);
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
  routed: boolean,
): Promise<Reply | Detour> {
  const { name, request } = input;
  const registered = await claimInMeta(ctx, name, config, routed);
  if (registered.kind === "adopt" || registered.kind === "route") {
    releaseSource(ctx, source);
    return registered.kind === "adopt" ? { adopt: registered.view } : { route: true };
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
