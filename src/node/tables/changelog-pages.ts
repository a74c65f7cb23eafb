// A bucket's changelog read at its leader for the tiering round (docs/tiering.md): the acknowledged records
// of the bucket's stream from a byte position, read from the stream (its tail cache and stream objects, as a
// changelog GET reads them), never from the tablet in memory. At most about `maxBytes` per call (whole
// messages; a message larger than that alone), so a round's read is bounded.
import { domainError } from "../../core/errors.ts";
import { decodeJsonMessages } from "../../core/protocol/json-mode.ts";
import type { Result } from "../../core/result.ts";
import { encodePartition } from "../../core/tables/bucketing.ts";
import type { PartitionValue } from "../../core/tables/bucketing.ts";
import { readPage } from "../paths/read.ts";
import type { TableContext } from "./buckets.ts";
import { leadBucket } from "./leader.ts";

const decoder = new TextDecoder();

export interface ChangelogPage {
  /** Each record's JSON text, in stream order. */
  readonly messages: readonly string[];
  /** The byte position after the last message (the next read starts there). */
  readonly endPosition: number;
  /** The read reached the stream's tail as it was when the read began. */
  readonly atTail: boolean;
}

export async function readBucketChangelog(
  ctx: TableContext,
  bucket: { table: string; partition: PartitionValue | null; bucket: number },
  fromPosition: number,
  maxBytes: number,
): Promise<Result<ChangelogPage>> {
  const address = {
    table: bucket.table,
    partition: bucket.partition === null ? null : encodePartition(bucket.partition),
    partitionValue: bucket.partition,
    bucket: bucket.bucket,
    pathAndQuery: "",
  };
  const led = await leadBucket(ctx, address);
  if ("kind" in led) {
    const error = led.kind === "error" ? led.error : domainError("unavailable", "this node does not lead the bucket now", { reason: led.kind === "redirect" ? "not_leader" : "reply" });
    return { ok: false, error };
  }
  const { stream } = led;
  const tail = stream.tail;
  if (!Number.isSafeInteger(fromPosition) || fromPosition < 0 || fromPosition > tail) {
    return { ok: false, error: domainError("invalid", "the position is not within the bucket's stream", { fromPosition, tail }) };
  }
  const messages: string[] = [];
  let at = fromPosition;
  while (at < tail && at - fromPosition < maxBytes) {
    const page = await readPage(ctx, stream, at);
    if (page.end <= at) break;
    messages.push(...decodeJsonMessages(decoder.decode(page.bytes)));
    at = page.end;
  }
  return { ok: true, value: { messages, endPosition: at, atTail: at >= tail } };
}
