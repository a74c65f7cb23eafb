// Table requests of a partitioned table (src/core/tables/requests.ts, table Q): every op, lookup key and
// prefix names its bucket as (partition key, bucket), the partition key being encodePartition of the row's
// partition value, the bucket bucketOf over its bucket key as in an unpartitioned table; a prefix must hold
// the partition column (Q8), so one bucket of one partition answers it.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { bucketOf, encodePartition } from "../../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../../src/core/tables/definition.ts";
import { bucketIdText, parseLookupKeys, parsePrefixBody, parseWriteBody } from "../../../src/core/tables/requests.ts";
import { propertyRuns } from "../../support/property-runs.ts";

function definition(body: unknown): TableDefinition {
  const result = parseTableDefinition(body);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** Partitioned by the string `region`, the first primary-key column; bucketed by region and id. */
const byRegion = definition({
  columns: [{ name: "region", type: "string" }, { name: "id", type: "string" }, { name: "seq", type: "int" }, { name: "v", type: "int", nullable: true }],
  primaryKey: ["region", "id", "seq"],
  bucketKey: ["region", "id"],
  buckets: 8,
  partitionBy: "region",
});
/** Partitioned by the int `day`, the second primary-key column: a prefix of `id` alone leaves it out. */
const byDay = definition({
  columns: [{ name: "id", type: "string" }, { name: "day", type: "int" }, { name: "v", type: "int", nullable: true }],
  primaryKey: ["id", "day"],
  bucketKey: ["id"],
  buckets: 4,
  partitionBy: "day",
});
/** A log table partitioned by `day`. */
const logByDay = definition({ columns: [{ name: "day", type: "int" }, { name: "m", type: "string" }], partitionBy: "day", buckets: 4 });
const unpartitioned = definition({ columns: [{ name: "id", type: "string" }], primaryKey: ["id"], buckets: 4 });

/** Partition values: any string with a URL spelling (R3b). */
const region = fc.oneof(fc.constantFrom("eu", "us", "eu/west", "5", "?#%", "日本"), fc.string({ minLength: 1, maxLength: 12 }).filter(hasUrlSpelling));
const id = fc.string({ maxLength: 12 });

function hasUrlSpelling(value: string): boolean {
  return value !== "." && value !== ".." && !/[\u0000-\u001f\u007f]/.test(value);
}
const seq = fc.integer({ min: -1000, max: 1000 });

function parsed<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe("table Q: requests of a partitioned table", () => {
  test("Q1-Q2: every op of a write carries its row's partition key and bucket", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(region, id, seq, fc.boolean()), { minLength: 1, maxLength: 20 }), (rows) => {
        const ops = rows.map(([r, i, s, del]) => (del ? { delete: { region: r, id: i, seq: s } } : { upsert: { region: r, id: i, seq: s, v: 1 } }));
        const result = parsed(parseWriteBody(byRegion, { ops }));
        expect(result.map((op) => ({ partition: op.partition, bucket: op.bucket }))).toEqual(
          rows.map(([r, i, s]) => ({ partition: encodePartition(r), bucket: bucketOf(byRegion, { region: r, id: i, seq: s, v: null }) })),
        );
      }),
      { numRuns: propertyRuns(300), seed: 11 },
    );
  });

  test("Q1: an int partition's key is the int's encoding, not a string's; a log table's appends carry theirs", () => {
    const [upsert, remove] = parsed(parseWriteBody(byDay, { ops: [{ upsert: { id: "a", day: 5, v: 1 } }, { delete: { id: "a", day: 6 } }] }));
    expect(upsert).toMatchObject({ partition: encodePartition(5), bucket: bucketOf(byDay, { id: "a", day: 5, v: 1 }) });
    expect(upsert!.partition).not.toBe(encodePartition("5"));
    expect(remove).toMatchObject({ partition: encodePartition(6), bucket: bucketOf(byDay, { id: "a", day: 6, v: null }) });
    // Same bucket key, other day: same bucket number, another partition.
    expect(remove!.bucket).toBe(upsert!.bucket);
    const [append] = parsed(parseWriteBody(logByDay, { ops: [{ append: { day: -3, m: "x" } }] }));
    expect(append).toMatchObject({ partition: encodePartition(-3), bucket: bucketOf(logByDay, { day: -3, m: "x" }) });
    // An unpartitioned table's ops have no partition.
    expect(parsed(parseWriteBody(unpartitioned, { ops: [{ upsert: { id: "a" } }] }))[0]?.partition).toBeNull();
  });

  test("Q1: a row without its partition value, or with one of the wrong type, is invalid", () => {
    expect(parseWriteBody(byDay, { ops: [{ upsert: { id: "a", day: "5" } }] })).toMatchObject({ ok: false, error: { code: "invalid", details: { field: "day" } } });
    expect(parseWriteBody(byDay, { ops: [{ delete: { id: "a" } }] })).toMatchObject({ ok: false, error: { code: "invalid", details: { field: "ops[0].delete.day" } } });
  });

  test("Q5: every lookup key carries its partition key and bucket", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(region, id, seq), { minLength: 1, maxLength: 20 }), (keys) => {
        const result = parsed(parseLookupKeys(byRegion, keys.map(([r, i, s]) => ({ region: r, id: i, seq: s }))));
        expect(result.map((k) => ({ partition: k.partition, bucket: k.bucket }))).toEqual(
          keys.map(([r, i, s]) => ({ partition: encodePartition(r), bucket: bucketOf(byRegion, { region: r, id: i, seq: s, v: null }) })),
        );
      }),
      { numRuns: propertyRuns(300), seed: 12 },
    );
    // The same id on two days: two keys, two partitions.
    const [five, six] = parsed(parseLookupKeys(byDay, [{ id: "a", day: 5 }, { id: "a", day: 6 }]));
    expect([five?.partition, six?.partition]).toEqual([encodePartition(5), encodePartition(6)]);
    expect(five?.key).not.toBe(six?.key);
    expect(bucketIdText(five!)).toBe(`${encodePartition(5)}/${five!.bucket}`);
    expect(bucketIdText({ partition: null, bucket: 3 })).toBe("3");
  });

  test("Q6-Q7: a prefix holding the partition column names the partition and the bucket of its rows", () => {
    fc.assert(
      fc.property(region, id, seq, (r, i, s) => {
        const bucket = bucketOf(byRegion, { region: r, id: i, seq: s, v: null });
        expect(parsed(parsePrefixBody(byRegion, { prefix: { region: r, id: i } }))).toMatchObject({ partition: encodePartition(r), bucket });
        expect(parsed(parsePrefixBody(byRegion, { prefix: { region: r, id: i, seq: s } }))).toMatchObject({ partition: encodePartition(r), bucket });
      }),
      { numRuns: propertyRuns(300), seed: 13 },
    );
  });

  test("Q6: a prefix of the wrong length names the range of columns, or every column when the bucket key is the whole primary key", () => {
    const message = (table: TableDefinition, prefix: object): string => {
      const refused = parsePrefixBody(table, { prefix });
      return refused.ok ? "" : refused.error.message;
    };
    expect(message(byRegion, { region: "eu" })).toBe("prefix holds the first 2 to 3 primary-key columns");
    expect(message(unpartitioned, {})).toBe("prefix holds the primary-key column 'id'");
    const wholeKey = definition({ columns: [{ name: "a", type: "string" }, { name: "b", type: "int" }], primaryKey: ["a", "b"], buckets: 2 });
    expect(message(wholeKey, { a: "x" })).toBe("prefix holds all 2 primary-key columns ('a', 'b')");
  });

  test("Q8: a prefix without the partition column is invalid", () => {
    const refused = parsePrefixBody(byDay, { prefix: { id: "a" } });
    expect(refused).toMatchObject({ ok: false, error: { code: "invalid", details: { field: "prefix" } } });
    expect(refused.ok ? "" : refused.error.message).toContain("partition column 'day'");
    // With it, the same table answers from one bucket of one partition.
    expect(parsed(parsePrefixBody(byDay, { prefix: { id: "a", day: 7 } }))).toMatchObject({ partition: encodePartition(7), bucket: bucketOf(byDay, { id: "a", day: 7, v: null }) });
    // Unpartitioned: a prefix of the bucket key alone is enough.
    expect(parsed(parsePrefixBody(unpartitioned, { prefix: { id: "a" } }))).toMatchObject({ partition: null });
  });
});
