// GET (catch-up, long-poll) and HEAD. Readers see acknowledged data only. A long-poll at the tail waits
// for the stream's next acknowledged append (ctx.readers, src/waits/keyed-waiters.ts) up to LONG_POLL_TIMEOUT_MS. SSE is in
// paths/sse.ts. Rules: docs/protocol-rules.md sections 6 to 8.
import { domainError, type DomainError } from "../../core/errors.ts";
import { firstMessageEnd, jsonPageCut } from "../../core/protocol/bounds.ts";
import { cacheControl, ifNoneMatchMatches, NO_STORE, readEtag } from "../../core/protocol/caching.ts";
import { readEndFlags } from "../../core/protocol/closure.ts";
import { isJsonContentType } from "../../core/protocol/content-type.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { decodeJsonMessages, frameJsonArray } from "../../core/protocol/json-mode.ts";
import { formatOffset, resolveReadStart, type ReadStart } from "../../core/protocol/offsets.ts";
import { decideLiveStart, isTailProbe, responseCursor, type ReadMode } from "../../core/protocol/read.ts";
import { formatExpiresAt } from "../../core/protocol/ttl.ts";

import { type NodeContext } from "../context.ts";
import { lostTouch } from "./routing.ts";
import { errorReply, reply, type Reply } from "../state/replies.ts";
import type { StreamState } from "../state/stream-registry.ts";
import { recordAccess, resolveLive } from "../streams/lifecycle.ts";
import { missingStream } from "../streams/missing-stream.ts";

const decoder = new TextDecoder();

export interface ReadInput {
  readonly name: string;
  readonly start: ReadStart;
  readonly mode: ReadMode;
  readonly cursor: number | null;
  readonly ifNoneMatch: string | null;
  /** Aborts when the client goes away. */
  readonly signal?: AbortSignal;
  /** The id of the token the Worker verified for this request (src/http/request-target.ts), or null. */
  readonly tokenId?: string | null;
}

/** The stream for a read-like request, or the 404/410 to answer. */
async function readable(ctx: NodeContext, name: string): Promise<StreamState | Reply> {
  const stream = await resolveLive(ctx, name);
  if (stream === undefined) return missingStream(ctx, name);
  if (stream.lifecycle === "soft-deleted") return errorReply(domainError("gone", "the stream was deleted"));
  return stream;
}

export async function headStream(ctx: NodeContext, name: string): Promise<Reply> {
  const stream = await readable(ctx, name);
  if ("kind" in stream) return stream;
  const headers: Record<string, string> = {
    [HEADER.contentType]: stream.config.contentType,
    [HEADER.streamNextOffset]: formatOffset(stream.tail),
    [HEADER.cacheControl]: NO_STORE,
  };
  if (stream.eof) headers[HEADER.streamClosed] = "true";
  if (stream.config.ttlSeconds !== null) headers[HEADER.streamTtl] = String(stream.config.ttlSeconds);
  if (stream.config.expiresAtMs !== null) headers[HEADER.streamExpiresAt] = formatExpiresAt(stream.config.expiresAtMs);
  return reply(200, headers);
}

/** A read's stream and resolved start offset (the access renews the TTL clock), or the reply to send. */
export async function openRead(ctx: NodeContext, input: ReadInput): Promise<{ stream: StreamState; startOffset: number } | Reply> {
  const found = await readable(ctx, input.name);
  if ("kind" in found) return found;
  const start = resolveReadStart(input.start, found.tail);
  if (!start.ok) return errorReply(start.error);
  recordAccess(ctx, found, input.mode === "catch-up" ? "read" : "live-read");
  return { stream: found, startOffset: start.value };
}

export async function readStream(ctx: NodeContext, input: ReadInput): Promise<Reply> {
  const opened = await openRead(ctx, input);
  if ("kind" in opened) return opened;
  const { stream, startOffset } = opened;

  if (input.mode === "catch-up") {
    if (isTailProbe(input.mode, input.start)) return tailProbe(stream);
    return page(ctx, stream, startOffset, input, null);
  }
  if (input.mode !== "long-poll") throw new Error("SSE reads go through paths/sse.ts");

  let slot = false;
  try {
    return await longPoll(ctx, input, stream, startOffset, () => {
      if (slot) return null;
      const refused = takeLiveSlot(ctx, input.tokenId ?? null);
      slot = refused === null;
      return refused;
    });
  } finally {
    if (slot) releaseLiveSlot(ctx, input.tokenId ?? null);
  }
}

/**
 * Takes one of the node's MAX_LIVE_READERS slots within the token's MAX_LIVE_READERS_PER_TOKEN share, or
 * returns the 429 to answer at once (docs/limits.md: a reader over a cap is never parked on a wait that
 * cannot happen, so nothing spins).
 */
export function takeLiveSlot(ctx: NodeContext, tokenId: string | null): DomainError | null {
  return ctx.liveReaders.take(tokenId, ctx.settings);
}

export function releaseLiveSlot(ctx: NodeContext, tokenId: string | null): void {
  ctx.liveReaders.release(tokenId);
}

/** A long-poll from `startOffset`; `admit` takes a live-reader slot before the first wait (null: taken). */
async function longPoll(
  ctx: NodeContext,
  input: ReadInput,
  stream: StreamState,
  startOffset: number,
  admit: () => DomainError | null,
): Promise<Reply> {
  const deadline = ctx.now() + ctx.settings.longPollTimeoutMs;
  for (;;) {
    if (stream.phase.kind === "moved-away" || stream.phase.kind === "evicted") {
      // Handed to another node: answer as a timeout would; the next poll is routed to the new owner. Evicted
      // (streams/eviction.ts) while this read awaited a page: the next poll reloads it.
      return reply(204, {
        [HEADER.streamNextOffset]: formatOffset(startOffset),
        [HEADER.streamUpToDate]: "true",
        [HEADER.cacheControl]: NO_STORE,
      });
    }
    if (stream.phase.kind === "removed") return errorReply(domainError("not_found", "the stream was deleted"));
    if (stream.lifecycle === "soft-deleted") return errorReply(domainError("gone", "the stream was deleted"));
    const live = decideLiveStart(startOffset, stream.tail, stream.eof);
    const cursor = responseCursor(input.cursor, ctx.now(), 1 + Math.floor(ctx.random() * 3600));
    if (live.kind === "respond") {
      recordAccess(ctx, stream, "live-read");
      return page(ctx, stream, startOffset, input, cursor);
    }
    if (live.kind === "eof") {
      return reply(204, {
        [HEADER.streamNextOffset]: formatOffset(stream.tail),
        [HEADER.streamUpToDate]: "true",
        [HEADER.streamClosed]: "true",
        [HEADER.cacheControl]: NO_STORE,
      });
    }
    const remaining = deadline - ctx.now();
    if (remaining <= 0) {
      recordAccess(ctx, stream, "live-read");
      return reply(204, {
        [HEADER.streamNextOffset]: formatOffset(stream.tail),
        [HEADER.streamUpToDate]: "true",
        [HEADER.streamCursor]: cursor,
        [HEADER.cacheControl]: NO_STORE,
      });
    }
    const lost = lostTouch(ctx);
    if (lost !== null) return errorReply(lost);
    const refused = admit();
    if (refused !== null) return errorReply(refused);
    // Woken at the latest when this node would lose touch, so a reader is not kept at a node being taken over.
    const reason = await ctx.readers.wait(stream.id, Math.min(remaining, ctx.liveUntilMs - ctx.now()), input.signal);
    if (reason === "shutdown") return errorReply(domainError("unavailable", "the node is restarting"));
    if (reason === "timeout" && input.signal?.aborted === true) {
      return errorReply(domainError("unavailable", "the client went away"));
    }
  }
}

/** `offset=now` catch-up: the tail, no data, not cacheable, no ETag. */
function tailProbe(stream: StreamState): Reply {
  const headers: Record<string, string> = {
    [HEADER.contentType]: stream.config.contentType,
    [HEADER.streamNextOffset]: formatOffset(stream.tail),
    [HEADER.streamUpToDate]: "true",
    [HEADER.cacheControl]: NO_STORE,
  };
  if (stream.eof) headers[HEADER.streamClosed] = "true";
  return reply(200, headers, isJsonContentType(stream.config.contentType) ? "[]" : null);
}

/**
 * One page of data from `start`: bytes, or a JSON array of whole messages. A page holds at most
 * `maxReadBytes`, except that a JSON page never cuts a message: it ends after the last whole one, or,
 * when the first message is larger than a page, holds that message alone (read on a page at a time until
 * its end; never to the tail). So a page is at most one page's worth or one message.
 */
export async function readPage(
  ctx: NodeContext,
  stream: StreamState,
  start: number,
): Promise<{ end: number; bytes: Uint8Array; json: boolean }> {
  const json = isJsonContentType(stream.config.contentType);
  const pageBytes = ctx.settings.maxReadBytes;
  const end = Math.min(stream.tail, start + pageBytes);
  const bytes = await ctx.registry.readBytes(stream, start, end);
  if (!json) return { end, bytes, json };
  const cut = jsonPageCut(bytes, end === stream.tail);
  if (cut !== null) return { end: start + cut, bytes: bytes.subarray(0, cut), json };
  // One message larger than a page: its first page is `bytes`; read on until it ends (a message is one
  // append's body at most, so this ends within MAX_BODY_BYTES), or at the tail.
  const parts = [bytes];
  let at = end;
  while (at < stream.tail) {
    const next = Math.min(stream.tail, at + pageBytes);
    const more = await ctx.registry.readBytes(stream, at, next);
    const messageEnd = firstMessageEnd(more);
    if (messageEnd !== null) {
      parts.push(more.subarray(0, messageEnd));
      at += messageEnd;
      break;
    }
    parts.push(more);
    at = next;
  }
  return { end: at, bytes: concat(parts, at - start), json };
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

function pageBody(pageData: { bytes: Uint8Array; json: boolean }): Uint8Array | string {
  return pageData.json ? frameJsonArray(decodeJsonMessages(decoder.decode(pageData.bytes))) : pageData.bytes;
}

async function page(
  ctx: NodeContext,
  stream: StreamState,
  start: number,
  input: ReadInput,
  cursor: string | null,
): Promise<Reply> {
  const data = await readPage(ctx, stream, start);
  const flags = readEndFlags(data.end, stream.tail, stream.eof);
  const etag = readEtag(stream.id, formatOffset(start), formatOffset(data.end), flags.closed);
  const headers: Record<string, string> = {
    [HEADER.contentType]: stream.config.contentType,
    [HEADER.streamNextOffset]: formatOffset(data.end),
    [HEADER.etag]: etag,
    [HEADER.cacheControl]: cacheControl("read", {
      hasData: data.end > start,
      closed: flags.closed,
      lifetimeSeconds: lifetimeSeconds(stream, ctx.now()),
    }),
  };
  if (flags.upToDate) headers[HEADER.streamUpToDate] = "true";
  if (flags.closed) headers[HEADER.streamClosed] = "true";
  if (cursor !== null) headers[HEADER.streamCursor] = cursor;
  if (ifNoneMatchMatches(input.ifNoneMatch, etag)) {
    const { [HEADER.contentType]: _contentType, ...rest } = headers;
    return reply(304, rest);
  }
  return reply(200, headers, pageBody(data));
}

/** Seconds the stream has left (its deadline, or its TTL window after this access), null if unbounded. */
function lifetimeSeconds(stream: StreamState, nowMs: number): number | null {
  if (stream.config.expiresAtMs !== null) return (stream.config.expiresAtMs - nowMs) / 1000;
  if (stream.config.ttlSeconds !== null) return stream.config.ttlSeconds;
  return null;
}
