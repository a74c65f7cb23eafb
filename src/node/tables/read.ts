// Reads of one bucket at its leader (docs/tables.md, table R): lookups and prefix scans over the applied
// tablet only (never a batch in flight, so never a row the stream has not acknowledged), after waiting,
// bounded, until the bucket has applied up to `minOffset` (read your writes: an offset a write answered).
import { domainError } from "../../core/errors.ts";
import { isPlainObject } from "../../core/tables/definition.ts";
import { parseOffset } from "../../core/protocol/offsets.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { parseLookupKeys, parsePrefixBody } from "../../core/tables/requests.ts";
import { ready } from "../../core/tables/tablet-read.ts";
import { errorReply, reply, unavailable, type Reply } from "../state/replies.ts";
import type { StreamState } from "../state/stream-registry.ts";
import type { LoadedBucket, TableContext } from "./buckets.ts";
import { leadBucket, type BucketAddress } from "./leader.ts";

/** How long a read waits for its bucket to apply up to `minOffset` before it is answered 503. */
const MIN_OFFSET_WAIT_MS = 10_000;

export interface BucketReadInput extends BucketAddress {
  /** The JSON body, parsed. */
  readonly body: unknown;
}

const JSON_HEADERS = { [HEADER.contentType]: "application/json" };

/** `{"keys": [...], "minOffset"?: offset}` → `{"rows": [row | null, ...]}`, answer i for key i. */
export async function lookupBucket(ctx: TableContext, input: BucketReadInput): Promise<Reply> {
  const led = await leadBucket(ctx, input);
  if ("kind" in led) return led;
  const { bucket, stream } = led;
  if (!isPlainObject(input.body)) return errorReply(domainError("invalid", 'a lookup is {"keys": [...]}', { field: "body" }));
  const keys = parseLookupKeys(bucket.definition, input.body["keys"]);
  if (!keys.ok) return errorReply(keys.error);
  const stray = keys.value.findIndex((key) => key.bucket !== input.bucket || key.partition !== input.partition);
  if (stray >= 0) return errorReply(domainError("invalid", "a key of another bucket", { keyIndex: stray, bucket: keys.value[stray]!.bucket }));
  const waited = await waitApplied(ctx, stream, bucket, input.body["minOffset"]);
  if (waited !== null) return waited;
  const rows = keys.value.map(({ key }) => bucket.tablet.get(key) ?? null);
  return reply(200, JSON_HEADERS, JSON.stringify({ rows }));
}

/** `{"prefix": {...}, "limit"?, "after"?, "minOffset"?}` → `{"rows": [...], "cursor": string | null}`. */
export async function prefixBucket(ctx: TableContext, input: BucketReadInput): Promise<Reply> {
  const led = await leadBucket(ctx, input);
  if ("kind" in led) return led;
  const { bucket, stream } = led;
  const { minOffset, ...body } = isPlainObject(input.body) ? input.body : { minOffset: undefined };
  const query = parsePrefixBody(bucket.definition, isPlainObject(input.body) ? body : input.body);
  if (!query.ok) return errorReply(query.error);
  if (query.value.bucket !== input.bucket || query.value.partition !== input.partition) return errorReply(domainError("invalid", "a prefix of another bucket", { bucket: query.value.bucket }));
  const waited = await waitApplied(ctx, stream, bucket, minOffset);
  if (waited !== null) return waited;
  const { prefix, after, limit } = query.value;
  const page = bucket.tablet.scan(prefix, after, limit + 1);
  const rows = page.slice(0, limit);
  const cursor = page.length > limit ? rows[rows.length - 1]!.key : null;
  return reply(200, JSON_HEADERS, JSON.stringify({ rows: rows.map(({ row }) => row), cursor }));
}

/** R7: null once the bucket has applied up to `minOffset` (absent: at once); else the reply (400, 503). */
async function waitApplied(ctx: TableContext, stream: StreamState, bucket: LoadedBucket, minOffset: unknown): Promise<Reply | null> {
  if (minOffset === undefined || minOffset === null) return null;
  const position = typeof minOffset === "string" ? parseOffset(minOffset) : null;
  if (position === null) return errorReply(domainError("invalid", "minOffset is an offset a write answered", { field: "minOffset" }));
  const deadlineMs = ctx.now() + MIN_OFFSET_WAIT_MS;
  while (!ready(bucket.appliedPosition, position)) {
    const leftMs = deadlineMs - ctx.now();
    if (leftMs <= 0 || ctx.tables.current(stream) !== bucket) {
      return errorReply(unavailable("the bucket has not applied up to minOffset yet; retry", { appliedOffset: bucket.appliedPosition }));
    }
    if ((await ctx.tables.appliedWaiters.wait(bucket.streamId, leftMs)) === "shutdown") return errorReply(unavailable("the node is stopping; retry"));
  }
  return null;
}
