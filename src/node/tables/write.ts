// A write to one bucket, at its leader (docs/tables.md, tables W and A): the ops are checked against the
// table, the core's write step turns them into changelog records reading through the batches in flight, and
// the records are appended to the bucket's stream as one JSON append, with the request's producer headers
// (exactly once per bucket). The write composes the append path's steps itself (paths/append.ts): reach the
// stream; then, in one synchronous step, the write step, the append's decision and its commit, so batches
// take their images in the order the stream takes their records; the tablet applies a batch only once the
// stream acknowledged it, in WAL order.
import { domainError } from "../../core/errors.ts";
import type { AppendRequest } from "../../core/protocol/append.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { encodeChangeRecord } from "../../core/tables/changelog.ts";
import { parseWriteBody } from "../../core/tables/requests.ts";
import { netChanges, takeAcknowledged } from "../../core/tables/tablet-apply.ts";
import { writeStep, type WriteOp } from "../../core/tables/tablet-write.ts";
import {
  acknowledge,
  admitBacklog,
  answerAtTail,
  answerUnappended,
  appends,
  commitAppend,
  decideOn,
  reachAppendable,
  type Appendable,
} from "../paths/append.ts";
import { errorReply, reply, unavailable, type Reply } from "../state/replies.ts";
import type { LoadedBucket, TableContext } from "./buckets.ts";
import { leadBucket, type BucketAddress, type LedBucket } from "./leader.ts";

/** The message a batch that changes nothing is decided over (never appended). */
const SKIP_PROBE_BODY = "[0]";

export interface BucketWriteInput extends BucketAddress {
  /** The JSON body, parsed: `{"ops": [...]}`. */
  readonly body: unknown;
  /** The raw body (its size counts toward the WAL backlog). */
  readonly bodyBytes: Uint8Array;
  /** The append's headers as parsed for a stream (producer headers; content type JSON). */
  readonly request: AppendRequest;
}

export async function writeBucket(ctx: TableContext, input: BucketWriteInput): Promise<Reply> {
  const led = await leadBucket(ctx, input);
  if ("kind" in led) return led;
  const { stream, bucket } = led;
  const ops = parseWriteBody(bucket.definition, input.body);
  if (!ops.ok) return errorReply(ops.error);
  const stray = ops.value.findIndex((op) => op.bucket !== input.bucket || op.partition !== input.partition);
  if (stray >= 0) {
    return errorReply(domainError("invalid", "an op of another bucket", { opIndex: stray, bucket: ops.value[stray]!.bucket }));
  }
  const target = await reachAppendable(ctx, stream.name);
  if (!("stream" in target)) return target;
  const batch = commitBatch(ctx, target, led, ops.value.map((op) => op.op), input);
  const appended = await batch.answer;
  if (appended.kind !== "reply") return appended;
  const nextOffset = appended.headers[HEADER.streamNextOffset] ?? null;
  // Not appended, with the producer's headers: a duplicate of a batch already written, answered as a stream
  // append's (204). Not appended without them: the ops changed nothing (the seq is not taken).
  if (batch.count === 0 && appended.headers[HEADER.producerSeq] !== undefined) return appended;
  // The partition as users know it (its value), not its internal key (docs/tables.md, "Partitions in URLs").
  const partition = input.partitionValue === null ? {} : { partition: input.partitionValue };
  const answer = { ...partition, bucket: input.bucket, leaderEpoch: stream.epoch, nextOffset, count: batch.count };
  const headers: Record<string, string> = { ...appended.headers, [HEADER.contentType]: "application/json" };
  return reply(200, headers, JSON.stringify(answer));
}

/** A batch's answer, and how many records it appended (0: none). */
interface CommittedBatch {
  readonly answer: Promise<Reply>;
  readonly count: number;
}

/**
 * The write step and the append's decision in one synchronous step (no await from the first check to the
 * commit), so batches take their images in the order the stream takes their records. The batch's records
 * are the append's body; the tablet applies them when the stream acknowledges the record, in WAL order.
 */
function commitBatch(ctx: TableContext, target: Appendable, led: LedBucket, ops: readonly WriteOp[], input: BucketWriteInput): CommittedBatch {
  const none = (answer: Reply | Promise<Reply>): CommittedBatch => ({ answer: Promise.resolve(answer), count: 0 });
  const backlog = admitBacklog(ctx, input.bodyBytes);
  if (backlog !== null) return none(errorReply(backlog));
  const nowMs = ctx.now();
  const { bucket } = led;
  // The bucket as loaded now: a failed write since the load makes the next request load it again.
  if (ctx.tables.current(led.stream) !== bucket) return none(errorReply(unavailable("the bucket is reloading; retry")));
  const step = writeStep(bucket.state, bucket.kind, ops);
  if (!step.ok) return none(errorReply(step.error));
  const { records, batchId } = step.value.batch;
  // Ops that change nothing: the decision is still taken (over a stand-in message) so that a repeated
  // producer seq is answered as the duplicate it is, and a stale epoch or a gap as refused; nothing is appended.
  const bodyText = records.length === 0 ? SKIP_PROBE_BODY : `[${records.map(({ record }) => encodeChangeRecord(record)).join(",")}]`;
  const decision = decideOn(ctx, target.stream, input.request, bodyText, nowMs);
  if (!appends(decision)) return none(answerUnappended(ctx, target.stream, decision));
  // Answered once the appends decided before it are durable, at the tail they reached; the seq is not taken.
  if (records.length === 0) return none(answerAtTail(ctx, target.stream));
  if (decision.kind === "append") bucket.state = step.value.state;
  const apply = (_first: number, end: number): void => applyAcknowledged(ctx, bucket, batchId, end);
  const committed = commitAppend(ctx, target.stream, decision, input.bodyBytes, nowMs, apply);
  const answer = acknowledge(ctx, target, committed).then((answered) => {
    // Never acknowledged (the WAL write failed; whether it reached the store is unknown): load the bucket again.
    if (answered.kind === "error" && decision.kind === "append") ctx.tables.forget(bucket.streamId);
    return answered;
  });
  return { answer, count: decision.kind === "append" ? records.length : 0 };
}

/** A batch the stream acknowledged: its records applied to the tablet with the new mark, in one transaction. */
function applyAcknowledged(ctx: TableContext, bucket: LoadedBucket, batchId: number, end: number): void {
  const taken = takeAcknowledged(bucket.state, batchId);
  const changes = taken.ok ? netChanges(taken.value.records) : taken;
  if (!taken.ok || !changes.ok) {
    // Not the oldest batch in flight: an invariant broke. Load the bucket again from its stream.
    ctx.log.log("node.error", { during: "table_apply", streamId: bucket.streamId, batchId });
    ctx.tables.forget(bucket.streamId);
    return;
  }
  bucket.state = taken.value.state;
  bucket.appliedPosition = end;
  bucket.tablet.apply(changes.value, { appliedOffset: taken.value.state.tablet.appliedOffset, appliedPosition: end });
  ctx.tables.appliedWaiters.notify(bucket.streamId);
}
