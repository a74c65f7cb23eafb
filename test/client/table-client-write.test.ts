// Writes through the table client against the fake service: the split by bucket is the core's, each
// bucket's part goes to its leader with producer headers, a lost answer is written once, and producer
// refusals (a seq gap) surface instead of being papered over.
import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS, TableClientError, TableWriteError } from "../../src/client/index.ts";
import { bucketOf } from "../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";
import { validateRow } from "../../src/core/tables/rows.ts";
import { error, nodeAddr, offsetOf } from "./fake-table-service.ts";
import { CLIENT_ID, EVENTS, ITEMS, START_MS, harness, writesSeen } from "./harness.ts";

function definitionOf(body: unknown): TableDefinition {
  const parsed = parseTableDefinition(body);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

function expectedBucket(definition: TableDefinition, row: Record<string, unknown>): number {
  const checked = validateRow(definition, row);
  if (!checked.ok) throw new Error(checked.error.message);
  return bucketOf(definition, checked.value);
}

const items = (count: number, from = 0): { upsert: { id: string; v: number } }[] =>
  Array.from({ length: count }, (_, index) => ({ upsert: { id: `item-${from + index}`, v: from + index } }));

describe("splitting a write by bucket", () => {
  it("sends every row to the leader of the bucket bucketOf gives it, one request per bucket", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const ops = items(60);
    const result = await table.write(ops);

    const definition = definitionOf(ITEMS);
    const writes = writesSeen(service);
    expect(new Set(writes.map((write) => write.bucket)).size).toBe(writes.length);
    for (const write of writes) {
      const leader = service.bucketOfTable("items", write.bucket).leader;
      expect(write.url).toBe(`${nodeAddr(leader)}/v1/table/items/bucket/${write.bucket}/write`);
    }
    for (const { upsert } of ops) {
      const bucket = expectedBucket(definition, upsert);
      expect([...service.bucketOfTable("items", bucket).rows.values()]).toContainEqual(upsert);
    }
    expect(writes.length).toBeGreaterThan(1);
    expect(result.buckets.reduce((sum, part) => sum + part.count, 0)).toBe(ops.length);
    for (const part of result.buckets) {
      expect(result.minOffsets[String(part.bucket)]).toBe(offsetOf(service.bucketOfTable("items", part.bucket).records.length));
    }
  });

  it("places a delete by its primary key in the bucket of the row it deletes", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    await table.write(items(20));
    await table.write(Array.from({ length: 20 }, (_, index) => ({ delete: { id: `item-${index}` } })));
    const left = [...service.tables.get("items")!.buckets].reduce((sum, bucket) => sum + bucket.rows.size, 0);
    expect(left).toBe(0);
  });

  it("refuses a row the core refuses before anything is sent, naming the op", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const sentBefore = service.seen.length;
    const refusal = await table.write([...items(2), { upsert: { id: 7 } }]).catch((caught: unknown) => caught);
    expect(refusal).toBeInstanceOf(TableClientError);
    expect(refusal).toMatchObject({ code: "invalid", status: null, details: { field: "id", opIndex: 2 } });
    const append = await table.write([{ append: { id: "x" } }]).catch((caught: unknown) => caught);
    expect(append).toMatchObject({ code: "invalid", details: { opIndex: 0 } });
    expect(service.seen.length).toBe(sentBefore);
  });
});

describe("producer headers per bucket", () => {
  it("gives each bucket its own producer id, the client's epoch, and seq 0, 1, 2 for its batches", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    for (let round = 0; round < 3; round++) await table.write([{ upsert: { id: "same", v: round } }]);
    const writes = writesSeen(service);
    const bucket = writes[0]!.bucket;
    expect(writes.map(({ producer, epoch, seq }) => ({ producer, epoch, seq }))).toEqual(
      [0, 1, 2].map((seq) => ({ producer: `${CLIENT_ID}-items-b${bucket}`, epoch: START_MS, seq })),
    );
  });

  it("sends one bucket's batches one at a time in seq order, and different buckets in parallel", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    await table.write(items(40));
    // One write: its buckets were in flight together.
    expect(service.maxInFlight).toBeGreaterThan(1);
    await Promise.all(Array.from({ length: 4 }, (_, round) => table.write(items(40, (round + 1) * 40))));
    // Concurrent writes: still never two batches of one bucket at once.
    expect(service.maxInFlightPerProducer).toBe(1);
    const seqsByProducer = new Map<string, number[]>();
    for (const write of writesSeen(service)) seqsByProducer.set(write.producer, [...(seqsByProducer.get(write.producer) ?? []), write.seq]);
    expect(seqsByProducer.size).toBeGreaterThan(1);
    for (const seqs of seqsByProducer.values()) expect(seqs).toEqual(seqs.map((_, index) => index));
    const stored = [...service.tables.get("items")!.buckets].reduce((sum, bucket) => sum + bucket.rows.size, 0);
    expect(stored).toBe(200);
  });
});

describe("exactly once across a lost answer", () => {
  it("sends the batch again with the same seq; the leader answers 204 and holds each row once", async () => {
    const { service, client } = harness();
    const table = client.table("events");
    await table.create(EVENTS);
    service.fault((request) => request.url.endsWith("/write"), "drop-answer", 1);
    const ops = Array.from({ length: 12 }, (_, n) => ({ append: { source: "s", n } }));
    const result = await table.write(ops);

    const writes = writesSeen(service);
    const retried = writes.filter((write) => write.bucket === writes[0]!.bucket);
    expect(retried.map((write) => write.seq)).toEqual([0, 0]);
    const stored = service.tables.get("events")!.buckets.flatMap((bucket) => bucket.records.map((record) => record.row));
    expect(stored.map((row) => row["n"]).sort((a, b) => Number(a) - Number(b))).toEqual(ops.map((op) => op.append.n));
    expect(result.buckets.find((part) => part.bucket === retried[0]!.bucket)).toMatchObject({ duplicate: true });

    // The seq moved on once: the bucket's next batch is seq 1, and it is written.
    const bucket = retried[0]!.bucket;
    const next = Array.from({ length: 100 }, (_, index) => ({ source: "s", n: 100 + index })).find((row) => expectedBucket(definitionOf(EVENTS), row) === bucket)!;
    const recordsBefore = service.bucketOfTable("events", bucket).records.length;
    await table.write([{ append: next }]);
    expect(writesSeen(service).at(-1)).toMatchObject({ bucket, seq: 1 });
    expect(service.bucketOfTable("events", bucket).records.length).toBe(recordsBefore + 1);
  });

  it("after giving up with the outcome unknown, starts the bucket's producer at a new epoch from seq 0", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    service.fault((request) => request.url.endsWith("/write"), "drop-answer", MAX_ATTEMPTS);
    const lost = await table.write([{ upsert: { id: "k", v: 1 } }]).catch((caught: unknown) => caught);
    expect(lost).toBeInstanceOf(TableWriteError);
    expect(lost).toMatchObject({ code: "network_error", outcomeUnknown: true });

    await table.write([{ upsert: { id: "k", v: 2 } }]);
    const writes = writesSeen(service);
    expect(writes.length).toBe(MAX_ATTEMPTS + 1);
    expect(writes.slice(0, MAX_ATTEMPTS).every((write) => write.epoch === START_MS && write.seq === 0)).toBe(true);
    expect(writes.at(-1)).toMatchObject({ epoch: START_MS + 1, seq: 0 });
    expect([...service.bucketOfTable("items", writes[0]!.bucket).rows.values()]).toEqual([{ id: "k", v: 2 }]);
  });
});

describe("producer refusals surface", () => {
  it("a seq gap is a producer_seq_gap error with the expected seq, and the next write does not jump to it", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const bucket = expectedBucket(definitionOf(ITEMS), { id: "k", v: 0 });
    for (let round = 0; round < 3; round++) await table.write([{ upsert: { id: "k", v: round } }]);
    // The bucket's stream lost track of the last two batches (seq 1 and 2): it expects seq 1 again.
    service.setProducer("items", bucket, `${CLIENT_ID}-items-b${bucket}`, { epoch: START_MS, nextSeq: 1 });

    for (let round = 0; round < 2; round++) {
      const refused = await table.write([{ upsert: { id: "k", v: 10 + round } }]).catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(TableWriteError);
      expect(refused).toMatchObject({ code: "producer_seq_gap", status: 409, retryable: false, outcomeUnknown: false, details: { expectedSeq: 1 } });
    }
    expect(writesSeen(service).map((write) => write.seq)).toEqual([0, 1, 2, 3, 3]);
    expect([...service.bucketOfTable("items", bucket).rows.values()]).toEqual([{ id: "k", v: 2 }]);
  });

  it("a write some buckets refuse is a TableWriteError with the parts written and the parts failed", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const refusedBucket = 3;
    service.fault((request) => request.url.endsWith(`/bucket/${refusedBucket}/write`), () => error(400, "invalid", "refused"), 1);
    const ops = items(40);
    const refused = await table.write(ops).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(TableWriteError);
    const { written, failed } = refused as TableWriteError;
    expect(failed.map((part) => [part.bucket, part.error.code])).toEqual([[refusedBucket, "invalid"]]);
    const writtenBuckets = new Set(writesSeen(service).map((write) => write.bucket));
    writtenBuckets.delete(refusedBucket);
    expect(written.map((part) => part.bucket)).toEqual([...writtenBuckets].sort((a, b) => a - b));
    expect(service.bucketOfTable("items", refusedBucket).rows.size).toBe(0);
  });
});
