// Rows B1..B7 and A1..A5 of docs/tables.md ("Definitions, rows and buckets").
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { MAX_STREAM_NAME_LENGTH, parseStreamName } from "../../../src/core/protocol/stream-name.ts";
import { assignBuckets } from "../../../src/core/tables/assignment.ts";
import { bucketOf, bucketStreamName, encodePartition, fnv1a32, parseBucketStreamName, decodePartitionKey, partitionKey, partitionValue } from "../../../src/core/tables/bucketing.ts";
import { MAX_BUCKETS, MAX_TABLE_NAME_LENGTH, parseTableDefinition, type TableDefinition } from "../../../src/core/tables/definition.ts";
import { MAX_PARTITION_STRING_LENGTH } from "../../../src/core/tables/rows.ts";
import { propertyRuns } from "../../support/property-runs.ts";

function definition(body: unknown): TableDefinition {
  const result = parseTableDefinition(body);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const keyed = definition({
  columns: [{ name: "id", type: "string" }, { name: "n", type: "int" }, { name: "doc", type: "json", nullable: true }],
  primaryKey: ["id"],
  buckets: 8,
});
const log = definition({ columns: [{ name: "m", type: "string" }, { name: "doc", type: "json", nullable: true }], buckets: 8 });

describe("bucketing", () => {
  test("B1: FNV-1a 32 over UTF-8 matches the published test vectors", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    // U+00E9 is the two bytes c3 a9; a lone surrogate hashes as U+FFFD (ef bf bd).
    expect(fnv1a32("\u00e9")).toBe(Math.imul(Math.imul(0x811c9dc5 ^ 0xc3, 0x01000193) >>> 0 ^ 0xa9, 0x01000193) >>> 0);
    expect(fnv1a32("\ud800")).toBe(fnv1a32("\ufffd"));
  });

  test("B2: the bucket depends only on the bucket key, and is within range", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer(), fc.integer(), (id, n1, n2) => {
        const bucket = bucketOf(keyed, { id, n: n1, doc: null });
        expect(bucketOf(keyed, { id, n: n2, doc: { n2 } })).toBe(bucket);
        expect(bucket).toBeGreaterThanOrEqual(0);
        expect(bucket).toBeLessThan(keyed.buckets);
      }),
      { numRuns: propertyRuns(500), seed: 13 },
    );
  });

  test("B2: 10,000 distinct keys spread over 8 buckets within 20% of even", () => {
    const expectEven = (keys: readonly string[]): void => {
      const counts = new Array<number>(8).fill(0);
      for (const id of keys) counts[bucketOf(keyed, { id, n: 0, doc: null })]! += 1;
      for (const count of counts) expect(Math.abs(count - keys.length / 8)).toBeLessThan(keys.length / 8 / 5);
    };
    expectEven(Array.from({ length: 10_000 }, (_, i) => `user-${i}`));
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 16 }), { minLength: 10_000, maxLength: 10_000 }), expectEven),
      { numRuns: propertyRuns(3), seed: 13 },
    );
  });

  test("B3: a log table without a bucket key hashes the whole row; json key order does not matter", () => {
    const a = bucketOf(log, { m: "x", doc: { a: 1, b: [2, { c: 3, d: 4 }] } });
    expect(bucketOf(log, { m: "x", doc: { b: [2, { d: 4, c: 3 }], a: 1 } })).toBe(a);
    const buckets = new Set(Array.from({ length: 64 }, (_, i) => bucketOf(log, { m: `message ${i}`, doc: null })));
    expect(buckets.size).toBe(8);
  });

  test("B4: the partition is the partition column's value, keyed by its key encoding (the string '5' and the int 5 differ)", () => {
    const byDay = definition({ columns: [{ name: "day", type: "int" }, { name: "m", type: "string" }], partitionBy: "day", buckets: 2 });
    expect(partitionValue(byDay, { day: 20261202, m: "x" })).toBe(20261202);
    expect(partitionKey(byDay, { day: 20261202, m: "x" })).toBe(encodePartition(20261202));
    expect(partitionKey(log, { m: "x", doc: null })).toBeNull();
    expect(encodePartition(5)).not.toBe(encodePartition("5"));
  });

  test("B4: a partition key decodes back to its value (the string \"5\" and the int 5 apart); any other text gives null", () => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.constantFrom(Number.MIN_SAFE_INTEGER, -1, 0, 1), fc.string({ maxLength: MAX_PARTITION_STRING_LENGTH, unit: "binary" })), (value) => {
        expect(decodePartitionKey(encodePartition(value))).toBe(value);
      }),
      { numRuns: propertyRuns(500), seed: 7 },
    );
    expect(decodePartitionKey(encodePartition("5"))).toBe("5");
    expect(decodePartitionKey(encodePartition(5))).toBe(5);
    for (const text of ["", "s", "sab", "i12", "x!", "s/!", "s#a!", "s~0030!", "i40000000000000", "2026-12-06"]) expect(decodePartitionKey(text)).toBeNull();
  });

  test("B5: bucket streams live under the reserved __ds segment, which the stream API refuses", () => {
    expect(bucketStreamName("orders", null, 3)).toBe("__ds/table/orders/b/3");
    expect(bucketStreamName("orders", encodePartition("eu/west"), 0)).toBe("__ds/table/orders/p/seu#_west!/b/0");
    expect(parseStreamName(bucketStreamName("orders", encodePartition(5), 1)).ok).toBe(false);
  });

  test("B5: a bucket stream's name gives back its table, partition key and bucket; any other name gives null", () => {
    for (const [table, partition, bucket] of [["t", null, 0], ["Orders_2-x", null, 1023], ["9", encodePartition("eu/west ~!"), 7], ["d", encodePartition(-3), 0]] as const) {
      expect(parseBucketStreamName(bucketStreamName(table, partition, bucket))).toEqual({ table, partition, bucket });
    }
    for (const name of ["t/b/0", "__ds/table/t/b/01", "__ds/table/t/b/1024x", "__ds/table/-t/b/0", "__ds/table/t/p//b/0", "__ds/table/t/p/a/b/c/b/0"]) {
      expect(parseBucketStreamName(name)).toBeNull();
    }
  });

  test("B6: two (table, partition, bucket) never share a stream name", () => {
    const table = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,8}$/);
    const partition = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 6 }));
    const place = fc.tuple(table, partition, fc.integer({ min: 0, max: MAX_BUCKETS - 1 }));
    fc.assert(
      fc.property(place, place, (a, b) => {
        const name = ([t, p, i]: typeof a): string => bucketStreamName(t, p === null ? null : encodePartition(p), i);
        expect(name(a) === name(b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
      { numRuns: propertyRuns(2000), seed: 13 },
    );
  });

  test("B7: the longest bucket stream name fits the stream name bound", () => {
    const name = bucketStreamName("t".repeat(MAX_TABLE_NAME_LENGTH), encodePartition("\uffff".repeat(MAX_PARTITION_STRING_LENGTH)), MAX_BUCKETS - 1);
    expect(name.length).toBeLessThanOrEqual(MAX_STREAM_NAME_LENGTH);
  });
});

describe("bucket assignment", () => {
  test("A1: bucket i goes to live node (i + start) % n, nodes sorted by id", () => {
    const result = assignBuckets(5, ["n3", "n1", "n2"], 0);
    expect(result).toEqual({
      ok: true,
      value: [{ bucket: 0, node: "n1" }, { bucket: 1, node: "n2" }, { bucket: 2, node: "n3" }, { bucket: 3, node: "n1" }, { bucket: 4, node: "n2" }],
    });
  });

  test("A2: start is floor(nowMs / 1000) % n, so consecutive seconds begin on consecutive nodes", () => {
    const first = (nowMs: number): string | undefined => {
      const result = assignBuckets(1, ["a", "b", "c"], nowMs);
      return result.ok ? result.value[0]?.node : undefined;
    };
    expect([first(0), first(999), first(1000), first(2500), first(3000), first(4000)]).toEqual(["a", "a", "b", "c", "a", "b"]);
  });

  test("A3: every bucket is assigned once and no node leads two more than another", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_BUCKETS }),
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (buckets, nodes, nowMs) => {
          const result = assignBuckets(buckets, nodes, nowMs);
          if (!result.ok) throw new Error("refused");
          expect(result.value.map((a) => a.bucket)).toEqual(Array.from({ length: buckets }, (_, i) => i));
          const perNode = nodes.map((node) => result.value.filter((a) => a.node === node).length);
          expect(Math.max(...perNode) - Math.min(...perNode)).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: propertyRuns(300), seed: 13 },
    );
  });

  test("A4: no live node is unavailable (retry), not an empty assignment", () => {
    expect(assignBuckets(4, [], 0)).toMatchObject({ ok: false, error: { code: "unavailable", details: { reason: "no_live_node" } } });
  });

  test("A5: the order of the live list and duplicates in it do not change the assignment", () => {
    expect(assignBuckets(6, ["b", "a", "b", "c"], 7000)).toEqual(assignBuckets(6, ["a", "b", "c"], 7000));
  });
});
