// PUT: create a stream (or a fork), or answer a repeated create. Serialized per name. The new stream is
// registered in the metadata log (CreateStream, PlaceStream, OpenStream: its id and stream epoch), then
// its create record (name, configuration, initial body) is written to the WAL; only once that landed is
// the stream visible and the 201 sent. Rules: docs/protocol-rules.md sections 3 and 4.
import { domainError, type DomainError } from "../core/errors.ts";
import type { JsonObject } from "../core/meta/index.ts";
import { checkAccess, checkForkSource, resolveForkPoint, type ForkSourceView } from "../core/protocol/fork.ts";
import { HEADER } from "../core/protocol/headers.ts";
import { encodeJsonMessages } from "../core/protocol/json-mode.ts";
import { formatOffset } from "../core/protocol/offsets.ts";
import {
  checkInitialBody,
  decideCreate,
  newStreamConfig,
  type CreateRequest,
  type ResolvedFork,
  type StreamConfig,
} from "../core/protocol/stream-config.ts";
import { RECORD_FLAG_EOF } from "../storage/record-codec.ts";
import {
  announce,
  errorReply,
  reply,
  removeStream,
  settled,
  softDeleteStream,
  unavailable,
  type NodeContext,
  type Reply,
} from "./node-context.ts";
import { encodeRecordMeta } from "./record-meta.ts";
import { lifecycleView, memoryRecord, newStreamState, type StreamState } from "./stream-registry.ts";

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
  return ctx.locks.run(`name:${input.name}`, () => createLocked(ctx, input));
}

/** Resolves a live stream by name for a direct operation, applying expiry (404 removes, 410 soft-deletes). */
export async function resolveLive(ctx: NodeContext, name: string): Promise<StreamState | undefined> {
  const stream = ctx.registry.byName(name);
  if (stream === undefined) return undefined;
  const access = checkAccess(lifecycleView(stream), ctx.now());
  if (access.kind === "not-found" && access.remove) await removeStream(ctx, stream);
  else if (access.kind === "gone" && access.softDelete) await softDeleteStream(ctx, stream);
  return ctx.registry.byName(name);
}

async function createLocked(ctx: NodeContext, input: CreateInput): Promise<Reply> {
  if (ctx.stopped !== null) return errorReply(ctx.stopped);
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

  let fork: ResolvedFork | null = null;
  let source: StreamState | undefined;
  if (request.fork !== null) {
    source = await resolveLive(ctx, request.fork.sourceName);
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
    const anchor = checkForkSource(request.fork, request.contentType, view);
    if (!anchor.ok) return errorReply(anchor.error);
    if (source === undefined || view === null) throw new Error("fork source vanished");
    const point = resolveForkPoint(anchor.value, request.fork.subOffset, await ctx.registry.recordAt(source, anchor.value));
    if (!point.ok) return errorReply(point.error);
    fork = { source: view, anchorPositionBytes: anchor.value, forkPositionBytes: point.value };
  }

  const config = newStreamConfig(request, fork);
  const initial = checkInitialBody(config.contentType, input.body.byteLength, input.bodyText);
  if (!initial.ok) return errorReply(initial.error);
  const data = initial.value.kind === "json" ? encoder.encode(encodeJsonMessages(initial.value.messages)) : input.body;

  // The source cannot be removed while this create is in flight: the fork holds it from here on.
  if (source !== undefined) source.forkCount++;
  try {
    const registered = await registerInMeta(ctx, name, config);
    if ("code" in registered) {
      releaseSource(ctx, source);
      return errorReply(registered);
    }
    const nowMs = ctx.now();
    const stream = newStreamState({ id: registered.id, name, config, createdAtMs: nowMs, epoch: registered.epoch, opened: true });
    stream.decided.tail = stream.base + data.byteLength;
    stream.decided.eof = request.closed;
    ctx.registry.beginCreate(stream);
    const landed = ctx.wal.append([
      {
        streamId: stream.id,
        streamEpoch: stream.epoch,
        firstOffset: stream.base,
        flags: request.closed ? RECORD_FLAG_EOF : 0,
        meta: encodeRecordMeta({ k: "create", name, config, at: nowMs }),
        data,
      },
    ]);
    try {
      await landed;
    } finally {
      ctx.registry.endCreate(stream);
    }
    applyInitial(stream, data, request.closed);
    stream.lastAccessMs = ctx.now();
    ctx.registry.add(stream);
    if (stream.tail > stream.base || stream.eof) announce(ctx, stream);
    return reply(201, { ...streamHeaders(stream), [HEADER.location]: input.location });
  } catch (error) {
    releaseSource(ctx, source);
    throw error;
  }
}

function releaseSource(ctx: NodeContext, source: StreamState | undefined): void {
  if (source === undefined) return;
  source.forkCount = Math.max(0, source.forkCount - 1);
  ctx.registry.release(source);
}

/** The initial body and closure of a created (or replayed) stream. */
export function applyInitial(stream: StreamState, data: Uint8Array, closed: boolean): void {
  if (data.byteLength > 0) {
    stream.records.push(memoryRecord(stream.base, data));
    stream.memoryBytes += data.byteLength;
  }
  stream.tail = stream.base + data.byteLength;
  stream.eof = closed;
  stream.decided.tail = stream.tail;
  stream.decided.eof = closed;
}

/** Content-Type, Stream-Next-Offset and Stream-Closed: the headers of a create's answer. */
export function streamHeaders(stream: StreamState): Record<string, string> {
  const headers: Record<string, string> = {
    [HEADER.contentType]: stream.config.contentType,
    [HEADER.streamNextOffset]: formatOffset(stream.tail),
  };
  if (stream.eof) headers[HEADER.streamClosed] = "true";
  return headers;
}

/**
 * Registers a new stream in the metadata log and opens it here: its id and stream epoch. A name the log
 * still holds while this node does not (a create whose WAL record never landed, a delete whose log entry
 * was lost) is a leftover of this node's own past: it is adopted when the configuration matches, and
 * otherwise deleted and created afresh. (Single node; with several nodes the router sends a name held
 * elsewhere to its owner before it gets here.)
 */
async function registerInMeta(
  ctx: NodeContext,
  name: string,
  config: StreamConfig,
): Promise<{ id: string; epoch: number } | DomainError> {
  const by = { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch };
  for (let attempt = 0; attempt < 2; attempt++) {
    const created = await ctx.meta.propose({
      type: "CreateStream",
      name,
      config: config as unknown as JsonObject,
      by,
    });
    let leftover: string | null = null;
    if (!created.ok) {
      const streamId = created.error.details?.["streamId"];
      if (created.error.code !== "conflict" || typeof streamId !== "string") return unavailable(created.error.message);
      leftover = streamId;
    } else if (!created.changed && ctx.registry.get(created.value.stream.id) !== undefined) {
      leftover = created.value.stream.id;
    }
    if (leftover !== null) {
      if (attempt > 0) break;
      const deleted = await ctx.meta.propose({ type: "DeleteStream", streamId: leftover, by });
      if (!deleted.ok && deleted.error.code !== "not_found") return unavailable(deleted.error.message);
      continue;
    }
    if (!created.ok) break;
    const streamId = created.value.stream.id;
    const placed = await ctx.meta.propose({ type: "PlaceStream", streamId, by });
    if (!placed.ok) return unavailable(placed.error.message);
    if (placed.value.stream.owner !== ctx.nodeId) {
      return domainError("held_by", "the stream was placed on another node", {
        streamId,
        owner: placed.value.stream.owner,
      });
    }
    const opened = await ctx.meta.propose({ type: "OpenStream", streamId, nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch });
    if (!opened.ok) return unavailable(opened.error.message);
    return { id: streamId, epoch: opened.value.stream.epoch };
  }
  return unavailable("the metadata log keeps a conflicting record of this name");
}
