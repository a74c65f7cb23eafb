// One table as the client sees it: create, describe and drop at the service origin; writes split by
// bucket and sent to each bucket's leader with its producer headers (exactly once across retries);
// lookups and prefix scans asked of the leader that holds the keys.
import { HEADER } from "../core/protocol/headers.ts";
import { encodePartition } from "../core/tables/bucketing.ts";
import { bucketPath } from "../core/tables/bucket-paths.ts";
import { parseTableDefinition } from "../core/tables/definition.ts";
import { bucketLabel, partitionValueOfKey } from "../core/tables/partition-segment.ts";
import { bucketIdText, compareBucketIds, type BucketId } from "../core/tables/requests.ts";
import type { Row } from "../core/tables/rows.ts";
import { MAX_LOOKUP_KEYS, MAX_SCAN_LIMIT } from "../core/tables/tablet-read.ts";
import { BucketProducer } from "./bucket-producer.ts";
import { invalidInput, localRefusal, TableClientError, TableWriteError, type BucketWriteResult } from "./errors.ts";
import { LeaderCache } from "./leader-cache.ts";
import { allBounded, MAX_PARALLEL_BUCKETS, settleBounded } from "./parallel.ts";
import { callLeader, callTable, checkBucket, tableUrl, type Answer, type ClientContext } from "./requests.ts";
import { bucketsOfKeys, checkPrefix, splitOps, type BucketPart, type WriteOp } from "./split.ts";
import { parseBucketWrite, parseDescription, parseLookupRows, parsePrefixPage, type PrefixPage, type TableDescription } from "./wire.ts";

/** Per bucket, the offset a read must wait for: `{"<bucket>": "<offset>"}` (`"<partition value>/<bucket>"` in a partitioned table, bucketLabel). */
export type MinOffsets = Readonly<Record<string, string>>;

export interface WriteResult {
  readonly buckets: readonly BucketWriteResult[];
  /** Pass to lookup for read-your-writes: each written bucket's offset after this write. */
  readonly minOffsets: MinOffsets;
}

export interface CreateResult {
  /** False when the table existed already with the same definition. */
  readonly created: boolean;
  readonly table: TableDescription;
}

const STATUS_CREATED = 201;
const STATUS_DUPLICATE = 204;

export class TableHandle {
  readonly name: string;
  readonly #context: ClientContext;
  readonly #cache: LeaderCache;
  readonly #producerId: (bucket: number) => string;
  readonly #producerEpoch: number;
  /** By bucketIdText: a bucket of each partition is its own stream, with its own producer. */
  #producers = new Map<string, BucketProducer>();

  constructor(context: ClientContext, name: string, producer: { readonly clientId: string; readonly epoch: number }) {
    this.name = name;
    this.#context = context;
    this.#cache = new LeaderCache(() => this.#fetchDescription());
    this.#producerId = (bucket) => `${producer.clientId}-${name}-b${bucket}`;
    this.#producerEpoch = producer.epoch;
  }

  /** PUT the definition: 201 created, 200 the same one again; another one is `conflict`. */
  async create(definition: unknown): Promise<CreateResult> {
    const parsed = parseTableDefinition(definition);
    if (!parsed.ok) throw localRefusal(parsed.error);
    const answer = await callTable(this.#context, { method: "PUT", url: tableUrl(this.#context, this.name), body: definition }, "idempotent");
    const table = parseDescription(answer.body);
    this.#cache.remember(table);
    return { created: answer.status === STATUS_CREATED, table };
  }

  async describe(): Promise<TableDescription> {
    const table = await this.#fetchDescription();
    this.#cache.remember(table);
    return table;
  }

  /** Drops the table; the producers start over, since a table created again has new bucket streams. */
  async drop(): Promise<void> {
    await callTable(this.#context, { method: "DELETE", url: tableUrl(this.#context, this.name) }, "refusals-only");
    this.#cache.forget();
    this.#producers = new Map();
  }

  /**
   * Writes `ops`, atomically per bucket: every bucket's part goes to its leader, buckets in parallel.
   * When some parts fail, rejects with a TableWriteError listing the parts written and the parts failed.
   */
  async write(ops: readonly WriteOp[]): Promise<WriteResult> {
    const split = [...splitOps(await this.#cache.definition(), ops).values()].sort((a, b) => compareBucketIds(a.id, b.id));
    await this.#addPartitions(split.filter((part) => part.ops.some((op) => !("delete" in op))));
    // Deletes in a partition the table does not have change nothing: that part is not sent.
    const parts = split.filter((part) => this.#cache.has(part.id));
    const outcomes = await settleBounded(parts, MAX_PARALLEL_BUCKETS, (part) => this.#writeBucket(part.id, part.ops));
    const written: BucketWriteResult[] = [];
    const failed: { partition: string | number | null; bucket: number; error: TableClientError }[] = [];
    const minOffsets: Record<string, string> = {};
    outcomes.forEach((outcome, index) => {
      const { id } = parts[index]!;
      if (outcome.status === "fulfilled") {
        written.push(outcome.value);
        if (outcome.value.nextOffset !== null) minOffsets[bucketLabel(id)] = outcome.value.nextOffset;
      } else {
        failed.push({ partition: partitionValueOfKey(id.partition), bucket: id.bucket, error: asClientError(outcome.reason) });
      }
    });
    if (failed.length > 0) throw new TableWriteError(written, failed);
    return { buckets: written, minOffsets };
  }

  /** Every partition these parts go to, known: the table described again, and a partition still missing added. */
  async #addPartitions(parts: readonly BucketPart[]): Promise<void> {
    if (parts.every((part) => this.#cache.has(part.id))) return;
    await this.#cache.reload();
    const missing = new Map<string, string | number>();
    for (const part of parts) if (!this.#cache.has(part.id) && part.partitionValue !== null) missing.set(part.id.partition!, part.partitionValue);
    for (const value of missing.values()) {
      const answer = await callTable(this.#context, { method: "POST", url: tableUrl(this.#context, this.name, "/partitions"), body: { value } }, "idempotent");
      this.#cache.remember(parseDescription(answer.body));
    }
  }

  /** Whether these buckets are known, after describing the table again if some are not (a partition added elsewhere). */
  async #known(ids: readonly BucketId[]): Promise<(id: BucketId) => boolean> {
    if (!ids.every((id) => this.#cache.has(id))) await this.#cache.reload();
    return (id) => this.#cache.has(id);
  }

  /** One answer per key, in the order asked: the row, or null when no row has that key. */
  async lookup(keys: readonly Readonly<Record<string, unknown>>[], options: { readonly minOffsets?: MinOffsets } = {}): Promise<(Row | null)[]> {
    const placed = bucketsOfKeys(await this.#cache.definition(), keys);
    const known = await this.#known(placed.map((entry) => entry.id));
    // A key of a partition the table does not have has no row: it is answered null without asking.
    const chunks = chunkByBucket(placed.map((entry) => (known(entry.id) ? entry.id : null)), MAX_LOOKUP_KEYS);
    const answers = new Array<Row | null>(keys.length).fill(null);
    await allBounded(chunks, MAX_PARALLEL_BUCKETS, async ({ bucket, indexes }) => {
      const minOffset = options.minOffsets?.[bucketLabel(bucket)];
      const body = { keys: indexes.map((index) => placed[index]!.key), ...(minOffset === undefined ? {} : { minOffset }) };
      const answer = await callLeader(this.#context, this.#cache, { table: this.name, bucket, action: "lookup" }, body);
      parseLookupRows(answer.body, indexes.length).forEach((row, position) => {
        answers[indexes[position]!] = row;
      });
    });
    return answers;
  }

  /** One page of rows whose primary key starts with `prefix` (the first columns of the key), in key order. */
  async prefix(prefix: Readonly<Record<string, unknown>>, options: { readonly limit?: number; readonly after?: string } = {}): Promise<PrefixPage> {
    const { limit, after } = options;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_SCAN_LIMIT)) {
      throw invalidInput(`limit must be an integer from 1 to ${MAX_SCAN_LIMIT}`, { field: "limit" });
    }
    const checked = checkPrefix(await this.#cache.definition(), prefix);
    const body = { prefix: checked.prefix, ...(limit === undefined ? {} : { limit }), ...(after === undefined ? {} : { after }) };
    const id = checked.id;
    if (id !== null && !(await this.#known([id]))(id)) return { rows: [], cursor: null };
    const answer: Answer = id === null
      ? await callTable(this.#context, { method: "POST", url: tableUrl(this.#context, this.name, "/prefix"), body }, "idempotent")
      : await callLeader(this.#context, this.#cache, { table: this.name, bucket: id, action: "prefix" }, body);
    return parsePrefixPage(answer.body);
  }

  /** Where bucket `bucket`'s changelog (of partition `partition` in a partitioned table) is read as a Durable Stream. */
  changelogUrl(bucket: number, partition: string | number | null = null): string {
    const id = { partition: partition === null ? null : encodePartition(partition), bucket: checkBucket(bucket) };
    return `${this.#context.baseUrl}${bucketPath(this.name, id)}/changelog`;
  }

  async #fetchDescription(): Promise<TableDescription> {
    const answer = await callTable(this.#context, { method: "GET", url: tableUrl(this.#context, this.name) }, "idempotent");
    return parseDescription(answer.body);
  }

  async #writeBucket(bucket: BucketId, ops: readonly unknown[]): Promise<BucketWriteResult> {
    const producer = this.#producerFor(bucket);
    // The producer settles the batch on any 2xx; reading the body comes after, so a body of the wrong
    // shape cannot make the producer reuse a seq the leader has taken.
    const answer = await producer.enqueue(
      (headers) => callLeader(this.#context, this.#cache, { table: this.name, bucket, action: "write" }, { ops }, headers),
      // The leader echoes Producer-Seq when the batch took it; a batch that changed nothing appended nothing.
      (settled) => settled.status === STATUS_DUPLICATE || settled.headers.get(HEADER.producerSeq) !== null,
    );
    if (answer.status === STATUS_DUPLICATE) {
      const { leaderEpoch } = await this.#cache.leaderOf(bucket);
      return { partition: partitionValueOfKey(bucket.partition), bucket: bucket.bucket, leaderEpoch, nextOffset: answer.headers.get(HEADER.streamNextOffset), count: ops.length, duplicate: true };
    }
    return { ...parseBucketWrite(answer.body), duplicate: false };
  }

  #producerFor(bucket: BucketId): BucketProducer {
    const key = bucketIdText(bucket);
    let producer = this.#producers.get(key);
    if (producer === undefined) {
      // Producer ids need not name the partition: producers are per stream, and each partition's bucket is its own.
      producer = new BucketProducer(this.#producerId(bucket.bucket), this.#producerEpoch);
      this.#producers.set(key, producer);
    }
    return producer;
  }
}

/** Key positions grouped by bucket (null: not asked), each group cut into requests of at most `maxKeys` keys. */
function chunkByBucket(buckets: readonly (BucketId | null)[], maxKeys: number): { bucket: BucketId; indexes: number[] }[] {
  const groups = new Map<string, { bucket: BucketId; indexes: number[] }>();
  buckets.forEach((bucket, index) => {
    if (bucket === null) return;
    const key = bucketIdText(bucket);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { bucket, indexes: [index] });
    else group.indexes.push(index);
  });
  const chunks: { bucket: BucketId; indexes: number[] }[] = [];
  for (const { bucket, indexes } of groups.values()) {
    for (let start = 0; start < indexes.length; start += maxKeys) chunks.push({ bucket, indexes: indexes.slice(start, start + maxKeys) });
  }
  return chunks;
}

/** A bucket's failure as the client reports it; anything else is a bug here, thrown as it is. */
function asClientError(reason: unknown): TableClientError {
  if (reason instanceof TableClientError) return reason;
  throw reason;
}
