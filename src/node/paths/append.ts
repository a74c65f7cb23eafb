// POST: append and/or close. The decision and the offset assignment happen in one synchronous step
// against the stream's decided state (which includes appends still in flight), so appends to one stream
// are decided one at a time and take offsets in order; the WAL writer batches them across streams. The
// answer waits until the WAL object holding the record landed (docs/architecture.md, "Fencing"); only then does the data
// become readable and live readers wake. Answers that do not append (duplicates, rejections) wait for
// the appends decided before them, so no answer ever reflects state that might still be lost.
import { domainError, type DomainError } from "../../core/errors.ts";
import { decideAppend, type AppendRequest } from "../../core/protocol/append.ts";
import { admitWalBytes } from "../../core/protocol/bounds.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { encodeJsonMessages } from "../../core/protocol/json-mode.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";
import { RECORD_FLAG_EOF } from "../../storage/record-codec.ts";

import { afterHandOff } from "./routing.ts";
import { announce, settled, type NodeContext } from "../context.ts";
import { asDomainError, errorReply, reply, type Reply } from "../state/replies.ts";
import { encodeRecordMeta, type RecordMeta } from "../state/record-meta.ts";
import { observeAck } from "../state/store-metrics.ts";
import type { StreamState } from "../state/stream-registry.ts";
import { ensureOpened, recordAccess, resolveLive } from "../streams/lifecycle.ts";
import { missingStream } from "../streams/missing-stream.ts";

const encoder = new TextEncoder();
/** The message a composed body that turned out empty is decided over (never appended). */
const SKIP_PROBE_BODY = "[0]";

export interface AppendInput {
  readonly name: string;
  readonly request: AppendRequest;
  readonly body: Uint8Array;
  readonly bodyText: string | null;
  /**
   * A body computed from the stream's state in the same synchronous step as the decision (a table write:
   * its changelog images depend on the writes decided before it). Called after the last await, so no other
   * append of the stream is decided between it and this one; its value replaces `body` and `bodyText`.
   */
  readonly compose?: () => ComposedBody | NothingToAppend | DomainError;
}

/** A composed body turned out empty (a table write whose ops change nothing): nothing is decided. */
export interface NothingToAppend {
  readonly skip: true;
}

/** A body composed at decision time, told what became of it. */
export interface ComposedBody {
  readonly bodyText: string;
  /** The decision appends it (called in the same synchronous step, before any other append is decided). */
  readonly onDecided: () => void;
  /** Durable and applied to the stream, in WAL order, before the answer: `[first, end)` are its bytes. */
  readonly onAcknowledged: (first: number, end: number) => void;
  /** It will never be acknowledged (the WAL write failed); whether it reached the store is unknown. */
  readonly onFailed: () => void;
}

export async function appendToStream(ctx: NodeContext, input: AppendInput): Promise<Reply> {
  if (ctx.stopped !== null) return errorReply(ctx.stopped);
  // The ack latency runs from here (the request's arrival at the node) to its WAL object being durable.
  const arrivedMs = ctx.meters.clockMs();
  const stream = await resolveLive(ctx, input.name);
  if (stream === undefined) return missingStream(ctx, input.name);
  if (stream.lifecycle === "soft-deleted") return errorReply(domainError("gone", "the stream was deleted"));
  if (stream.phase.kind === "handing-off") return afterHandOff(ctx, stream);
  const openError = await ensureOpened(ctx, stream);
  if (openError !== null) return errorReply(openError);
  if (stream.phase.kind === "removed") return errorReply(domainError("not_found", "no such stream"));
  if (ctx.stopped !== null) return errorReply(ctx.stopped);
  // A hand-off that began since the open (or ended with the stream moved away): no append is decided once
  // it has (ownership/hand-off.ts, step 1).
  if (stream.phase.kind !== "opened") return afterHandOff(ctx, stream);

  // From here to wal.append: no await, so this decision and the offsets it assigns are serialized.
  // Backpressure first (docs/limits.md): past MAX_WAL_QUEUE_BYTES nothing is decided, the client gets 503.
  const backlog = admitWalBytes(ctx.wal.queuedBytes, input.body.byteLength, ctx.settings.maxWalQueueBytes);
  if (backlog !== null) return errorReply(backlog);
  const nowMs = ctx.now();
  const composed = input.compose?.() ?? null;
  if (composed !== null && "code" in composed) return errorReply(composed);
  const skip = composed !== null && "skip" in composed;
  // Nothing to append: the decision is still taken (over a stand-in message) so that a repeated producer
  // seq is answered as the duplicate it is, and a stale epoch or a gap as refused; only an append is not made.
  const bodyText = composed === null ? input.bodyText : "skip" in composed ? SKIP_PROBE_BODY : composed.bodyText;
  const decided = stream.decided;
  // A producer id new to the stream is admitted only within the node's producer bytes (the sum is O(producers)).
  const newProducer = input.request.producer !== null && !decided.producers.has(input.request.producer.producerId);
  const nodeBytes = newProducer ? { held: ctx.registry.producerBytes(), max: ctx.settings.maxNodeProducerBytes } : undefined;
  const decision = decideAppend(
    {
      contentType: stream.config.contentType,
      eof: decided.eof,
      tailPositionBytes: decided.tail,
      producers: decided.producers,
      lastStreamSeq: decided.lastStreamSeq,
      maxJsonMessages: ctx.settings.maxJsonMessages,
      producerLimits: {
        maxProducers: ctx.settings.maxProducersPerStream,
        idleMs: ctx.settings.producerIdleMs,
        maxEpochStep: ctx.settings.maxProducerEpochStep,
        ...(nodeBytes === undefined ? {} : { nodeBytes }),
      },
    },
    input.request,
    bodyText,
    nowMs,
  );

  if (skip && (decision.kind === "append" || decision.kind === "close")) {
    // Answered once the appends decided before it are durable, at the tail they reached; the seq is not taken.
    const error = await settled(ctx, stream);
    return error !== null ? errorReply(error) : reply(204, { [HEADER.streamNextOffset]: formatOffset(stream.tail) });
  }
  switch (decision.kind) {
    case "reject":
    case "duplicate":
    case "already-closed": {
      const error = await settled(ctx, stream);
      if (error !== null) return errorReply(error);
      if (decision.kind === "reject") return errorReply(decision.error);
      const headers: Record<string, string> = { [HEADER.streamNextOffset]: formatOffset(stream.tail) };
      if (stream.eof) headers[HEADER.streamClosed] = "true";
      if (decision.kind === "duplicate") {
        headers[HEADER.producerEpoch] = String(decision.epoch);
        headers[HEADER.producerSeq] = String(decision.lastSeq);
      }
      return reply(204, headers);
    }
    case "append":
    case "close":
      break;
  }

  const composedBody = composed === null || "skip" in composed ? null : composed;
  if (decision.kind === "append") composedBody?.onDecided();
  const data =
    decision.kind === "append"
      ? decision.messages === null
        ? input.body
        : encoder.encode(encodeJsonMessages(decision.messages))
      : new Uint8Array(0);
  const close = decision.kind === "close" || decision.close;
  const producer = decision.producer;
  const meta: RecordMeta = {
    k: "append",
    at: nowMs,
    ...(producer === null ? {} : { p: [producer.producerId, producer.state.epoch, producer.state.lastSeq] as const }),
    ...(producer === null || producer.pruned.length === 0 ? {} : { x: producer.pruned }),
    ...(decision.kind === "append" && decision.lastStreamSeq !== null && decision.lastStreamSeq !== decided.lastStreamSeq
      ? { q: decision.lastStreamSeq }
      : {}),
  };
  const first = decided.tail;
  const ack = ctx.wal.append([
    {
      streamId: stream.id,
      streamEpoch: stream.epoch,
      firstOffset: first,
      flags: close ? RECORD_FLAG_EOF : 0,
      meta: encodeRecordMeta(meta),
      data,
    },
  ]);
  decided.tail = first + data.byteLength;
  decided.eof = close;
  if (producer !== null) {
    // In place, in the same step as the record (streams/recovery.ts replays `x` then `p` the same way).
    for (const producerId of producer.pruned) decided.producers.delete(producerId);
    decided.producers.set(producer.producerId, producer.state);
  }
  if (decision.kind === "append") decided.lastStreamSeq = decision.lastStreamSeq;

  let announced: Promise<void> = Promise.resolve();
  const applied = stream.pending.then(
    () => ack,
    () => ack,
  ).then(() => {
    // Not chained: the next append of the stream applies without waiting for this one's observers.
    announced = applyAcknowledged(ctx, stream, first, data, close);
    composedBody?.onAcknowledged(first, first + data.byteLength);
  });
  stream.pending = applied;
  try {
    await applied;
  } catch (error) {
    if (decision.kind === "append") composedBody?.onFailed();
    return errorReply(asDomainError(error));
  }
  observeAck(ctx.meters, arrivedMs, nowMs);
  await announced;
  recordAccess(ctx, stream, data.byteLength === 0 && close ? "close" : "append");
  const headers: Record<string, string> = { [HEADER.streamNextOffset]: formatOffset(first + data.byteLength) };
  if (close) headers[HEADER.streamClosed] = "true";
  if (producer !== null) {
    headers[HEADER.producerEpoch] = String(producer.state.epoch);
    headers[HEADER.producerSeq] = String(producer.state.lastSeq);
  }
  // 200 for an append with producer headers (APP-15); a close-only request answers 204 (APP-13).
  return reply(producer !== null && decision.kind === "append" ? 200 : 204, headers);
}

/**
 * An acknowledged record becomes readable, in WAL order, and wakes the stream's live readers. Resolves when
 * the observers are done with it (the answer waits for that).
 */
function applyAcknowledged(
  ctx: NodeContext,
  stream: StreamState,
  first: number,
  data: Uint8Array,
  close: boolean,
): Promise<void> {
  ctx.registry.pushRecord(stream, first, data);
  stream.tail = first + data.byteLength;
  if (close) stream.eof = true;
  return announce(ctx, stream);
}

