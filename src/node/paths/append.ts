// POST: append and/or close. The decision and the offset assignment happen in one synchronous step
// against the stream's decided state (which includes appends still in flight), so appends to one stream
// are decided one at a time and take offsets in order; the WAL writer batches them across streams. The
// answer waits until the WAL object holding the record landed (docs/architecture.md, "Fencing"); only then does the data
// become readable and live readers wake. Answers that do not append (duplicates, rejections) wait for
// the appends decided before them, so no answer ever reflects state that might still be lost.
// The steps are exported, so a caller with its own work inside the decision (a table write, tables/write.ts)
// composes them itself: reachAppendable (every await), then synchronously admitBacklog, decideOn and
// commitAppend (the record built and queued, its acknowledgement chained: streams/commit.ts), then acknowledge.
import { domainError, type DomainError } from "../../core/errors.ts";
import { decideAppend, type AppendDecision, type AppendRequest } from "../../core/protocol/append.ts";
import { admitWalBytes } from "../../core/protocol/bounds.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { encodeJsonMessages } from "../../core/protocol/json-mode.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";

import { afterHandOff, routeAtNode } from "./routing.ts";
import { announce, settled, type NodeContext } from "../context.ts";
import { asDomainError, errorReply, reply, type Reply } from "../state/replies.ts";
import type { RecordMeta } from "../state/record-meta.ts";
import { observeAck } from "../state/store-metrics.ts";
import type { StreamState } from "../state/stream-registry.ts";
import { commitRecord, walRecord } from "../streams/commit.ts";
import { ensureOpened, recordAccess, resolveLive } from "../streams/lifecycle.ts";
import { missingStream } from "../streams/missing-stream.ts";

const encoder = new TextEncoder();

export interface AppendInput {
  readonly name: string;
  readonly request: AppendRequest;
  readonly body: Uint8Array;
  readonly bodyText: string | null;
}

/**
 * POST: reach the stream (the awaits), then in one synchronous step decide and queue the record, then wait
 * for its acknowledgement. A table write (tables/write.ts) takes the same three steps with its own between.
 */
export async function appendToStream(ctx: NodeContext, input: AppendInput): Promise<Reply> {
  const target = await reachAppendable(ctx, input.name);
  if (!("stream" in target)) return target;
  // From here to commitAppend: no await, so this decision and the offsets it assigns are serialized.
  const backlog = admitBacklog(ctx, input.body);
  if (backlog !== null) return errorReply(backlog);
  const nowMs = ctx.now();
  const decision = decideOn(ctx, target.stream, input.request, input.bodyText, nowMs);
  if (!appends(decision)) return answerUnappended(ctx, target.stream, decision);
  return acknowledge(ctx, target, commitAppend(ctx, target.stream, decision, input.body, nowMs));
}

/** A stream this node decides appends of now, and when the request arrived (the ack latency starts there). */
export interface Appendable {
  readonly stream: StreamState;
  readonly arrivedMs: number;
}

/**
 * Every await before a decision: the stream resolved (expiry applied), opened by this incarnation, and still
 * opened here afterwards. Otherwise the answer (404, 410, 503, a hand-off's redirect).
 */
export async function reachAppendable(ctx: NodeContext, name: string, reloads = 1): Promise<Appendable | Reply> {
  if (ctx.stopped !== null) return errorReply(ctx.stopped);
  // The ack latency runs from here (the request's arrival at the node) to its WAL object being durable.
  const arrivedMs = ctx.meters.clockMs();
  const stream = await resolveLive(ctx, name);
  if (stream === undefined) return missingStream(ctx, name);
  if (stream.lifecycle === "soft-deleted") return errorReply(domainError("gone", "the stream was deleted"));
  if (stream.phase.kind === "handing-off") return afterHandOff(ctx, stream);
  const openError = await ensureOpened(ctx, stream);
  if (openError !== null) return errorReply(openError);
  if (stream.phase.kind === "removed") return errorReply(domainError("not_found", "no such stream"));
  if (ctx.stopped !== null) return errorReply(ctx.stopped);
  // Evicted while this awaited (streams/eviction.ts): the name's lookup reloads it, once.
  if (stream.phase.kind === "evicted" && reloads > 0) return (await routeAtNode(ctx, name)) ?? reachAppendable(ctx, name, reloads - 1);
  // A hand-off that began since the open (or ended with the stream moved away): no append is decided once
  // it has (ownership/hand-off.ts, step 1).
  if (stream.phase.kind !== "opened") return afterHandOff(ctx, stream);
  return { stream, arrivedMs };
}

/** Backpressure, before any decision (docs/limits.md): past MAX_WAL_QUEUE_BYTES nothing is decided, 503. */
export function admitBacklog(ctx: NodeContext, body: Uint8Array): DomainError | null {
  return admitWalBytes(ctx.wal.queuedBytes, body.byteLength, ctx.settings.maxWalQueueBytes);
}

type Appending = Extract<AppendDecision, { kind: "append" | "close" }>;
type Unappended = Exclude<AppendDecision, Appending>;

/** The decision appends a record (data and/or a close). */
export function appends(decision: AppendDecision): decision is Appending {
  return decision.kind === "append" || decision.kind === "close";
}

/** The core's append table over the stream's decided state (appends in flight included) and the node's limits. */
export function decideOn(ctx: NodeContext, stream: StreamState, request: AppendRequest, bodyText: string | null, nowMs: number): AppendDecision {
  const decided = stream.decided;
  // A producer id new to the stream is admitted only within the node's producer bytes (the sum is O(producers)).
  const newProducer = request.producer !== null && !decided.producers.has(request.producer.producerId);
  const nodeBytes = newProducer ? { held: ctx.registry.producerBytes(), max: ctx.settings.maxNodeProducerBytes } : undefined;
  return decideAppend(
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
    request,
    bodyText,
    nowMs,
  );
}

/** A decision that appends nothing, answered once the appends decided before it are durable. */
export async function answerUnappended(ctx: NodeContext, stream: StreamState, decision: Unappended): Promise<Reply> {
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

/** An append decided over a stand-in and not made: 204 at the tail the appends before it reached, once durable. */
export async function answerAtTail(ctx: NodeContext, stream: StreamState): Promise<Reply> {
  const error = await settled(ctx, stream);
  return error !== null ? errorReply(error) : reply(204, { [HEADER.streamNextOffset]: formatOffset(stream.tail) });
}

/** An append decided and committed: its bytes `[first, first + data.byteLength)`, applied once `applied` resolves. */
export interface CommittedAppend {
  readonly decision: Appending;
  readonly first: number;
  readonly data: Uint8Array;
  readonly close: boolean;
  readonly nowMs: number;
  /** Resolves once the record is durable and applied, in WAL order; rejects when the WAL write failed. */
  readonly applied: Promise<void>;
  /** The observers' work on the acknowledged change (once applied). */
  readonly announced: () => Promise<void>;
}

/**
 * In the caller's synchronous step, right after the decision: the record built and queued with the WAL
 * writer, its acknowledgement chained on the stream's `pending`, and the decided state moved past it.
 * `alsoApply` is what the caller applies with the record, in the same WAL order (a table's batch).
 */
export function commitAppend(
  ctx: NodeContext,
  stream: StreamState,
  decision: Appending,
  body: Uint8Array,
  nowMs: number,
  alsoApply?: (first: number, end: number) => void,
): CommittedAppend {
  const decided = stream.decided;
  const data =
    decision.kind === "append" ? (decision.messages === null ? body : encoder.encode(encodeJsonMessages(decision.messages))) : new Uint8Array(0);
  const close = decision.kind === "close" || decision.close;
  const first = decided.tail;
  const end = first + data.byteLength;
  const record = walRecord(stream, first, appendMeta(decision, decided.lastStreamSeq, nowMs), data, close);
  let announced: Promise<void> = Promise.resolve();
  const applied = commitRecord(ctx, stream, record, () => {
    // Not chained: the next append of the stream applies without waiting for this one's observers.
    announced = applyAcknowledged(ctx, stream, first, data, close);
    alsoApply?.(first, end);
  });
  decided.tail = end;
  decided.eof = close;
  const producer = decision.producer;
  if (producer !== null) {
    // In place, in the same step as the record (streams/recovery.ts replays `x` then `p` the same way).
    for (const producerId of producer.pruned) decided.producers.delete(producerId);
    decided.producers.set(producer.producerId, producer.state);
  }
  if (decision.kind === "append") decided.lastStreamSeq = decision.lastStreamSeq;
  return { decision, first, data, close, nowMs, applied, announced: () => announced };
}

/** What an append record's meta says: the producer it commits, the ids it pruned, a new Stream-Seq. */
function appendMeta(decision: Appending, lastStreamSeq: string | null, nowMs: number): RecordMeta {
  const producer = decision.producer;
  return {
    k: "append",
    at: nowMs,
    ...(producer === null ? {} : { p: [producer.producerId, producer.state.epoch, producer.state.lastSeq] as const }),
    ...(producer === null || producer.pruned.length === 0 ? {} : { x: producer.pruned }),
    ...(decision.kind === "append" && decision.lastStreamSeq !== null && decision.lastStreamSeq !== lastStreamSeq
      ? { q: decision.lastStreamSeq }
      : {}),
  };
}

/**
 * The answer to a committed append: once it is durable and applied (an error when the WAL write failed;
 * whether it reached the store is then unknown) and its observers are done.
 */
export async function acknowledge(ctx: NodeContext, target: Appendable, committed: CommittedAppend): Promise<Reply> {
  const { stream, arrivedMs } = target;
  const { decision, first, data, close, nowMs } = committed;
  try {
    await committed.applied;
  } catch (error) {
    return errorReply(asDomainError(error));
  }
  observeAck(ctx.meters, arrivedMs, nowMs);
  await committed.announced();
  recordAccess(ctx, stream, data.byteLength === 0 && close ? "close" : "append");
  const headers: Record<string, string> = { [HEADER.streamNextOffset]: formatOffset(first + data.byteLength) };
  if (close) headers[HEADER.streamClosed] = "true";
  const producer = decision.producer;
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
function applyAcknowledged(ctx: NodeContext, stream: StreamState, first: number, data: Uint8Array, close: boolean): Promise<void> {
  ctx.registry.pushRecord(stream, first, data);
  stream.tail = first + data.byteLength;
  if (close) stream.eof = true;
  return announce(ctx, stream);
}
