// A write to one bucket, at its leader (docs/tables.md, tables W and A): the ops are checked against the
// table, the core's write step turns them into changelog records reading through the batches in flight, and
// the records are appended to the bucket's stream as one JSON append, with the request's producer headers
// (exactly once per bucket). The step runs inside the append's decision (paths/append.ts, `compose`), so
// batches take their images in the order the stream takes their records; the tablet applies a batch only
// once the stream acknowledged it, in WAL order.
import { domainError } from "../../core/errors.ts";
import type { AppendRequest } from "../../core/protocol/append.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { encodeChangeRecord } from "../../core/tables/changelog.ts";
import { parseWriteBody } from "../../core/tables/requests.ts";
import { netChanges, takeAcknowledged } from "../../core/tables/tablet-apply.ts";
import { writeStep } from "../../core/tables/tablet-write.ts";
import { appendToStream, type ComposedBody, type NothingToAppend } from "../paths/append.ts";
import { errorReply, reply, unavailable, type Reply } from "../state/replies.ts";
import type { LoadedBucket, TableContext } from "./buckets.ts";
import { leadBucket, type BucketAddress } from "./leader.ts";

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
  let count = 0;
  let decided = false;
  const compose = (): ComposedBody | NothingToAppend | ReturnType<typeof domainError> => {
    // The bucket as loaded now: a failed write since the load makes the next request load it again.
    const current = ctx.tables.current(stream);
    if (current !== bucket) return unavailable("the bucket is reloading; retry");
    const step = writeStep(bucket.state, bucket.kind, ops.value.map((op) => op.op));
    if (!step.ok) return step.error;
    const { records, batchId } = step.value.batch;
    if (records.length === 0) return { skip: true };
    count = records.length;
    return {
      bodyText: `[${records.map(({ record }) => encodeChangeRecord(record)).join(",")}]`,
      onDecided: () => {
        bucket.state = step.value.state;
        decided = true;
      },
      onAcknowledged: (_first, end) => applyAcknowledged(ctx, bucket, batchId, end),
      onFailed: () => ctx.tables.forget(bucket.streamId),
    };
  };
  const name = stream.name;
  const appended = await appendToStream(ctx, { name, request: input.request, body: input.bodyBytes, bodyText: null, compose });
  if (appended.kind !== "reply") return appended;
  const nextOffset = appended.headers[HEADER.streamNextOffset] ?? null;
  // Not appended, with the producer's headers: a duplicate of a batch already written, answered as a stream
  // append's (204). Not appended without them: the ops changed nothing (the seq is not taken).
  if (!decided && appended.headers[HEADER.producerSeq] !== undefined) return appended;
  // The partition as users know it (its value), not its internal key (docs/tables.md, "Partitions in URLs").
  const partition = input.partitionValue === null ? {} : { partition: input.partitionValue };
  const answer = { ...partition, bucket: input.bucket, leaderEpoch: stream.epoch, nextOffset, count: decided ? count : 0 };
  const headers: Record<string, string> = { ...appended.headers, [HEADER.contentType]: "application/json" };
  return reply(200, headers, JSON.stringify(answer));
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
