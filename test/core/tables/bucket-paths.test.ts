// Bucket paths (src/core/tables/bucket-paths.ts; docs/tables.md, "Partitions in URLs"): `/v1/table/<t>/bucket/<i>/<op>`
// and `/v1/table/<t>/p/<percent-encoded partition value>/bucket/<i>/<op>`. What bucketPath builds,
// parseBucketPath reads back (also after a URL parser has seen it, as a node gets it): the partition as
// the value's text, which partition-segment.ts resolves; anything else is null.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { bucketPath, parseBucketPath } from "../../../src/core/tables/bucket-paths.ts";
import { encodePartition } from "../../../src/core/tables/bucketing.ts";
import { MAX_BUCKETS, MAX_TABLE_NAME_LENGTH, parseTableDefinition } from "../../../src/core/tables/definition.ts";
import { partitionSegmentOf } from "../../../src/core/tables/partition-segment.ts";
import { MAX_PARTITION_STRING_LENGTH, validateRow } from "../../../src/core/tables/rows.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const OPS = ["write", "lookup", "prefix", "changelog"] as const;

const tableName = fc.stringMatching(new RegExp(`^[A-Za-z0-9][A-Za-z0-9_-]{0,${MAX_TABLE_NAME_LENGTH - 1}}$`));
/** Characters that mean something in a URL or in the key encoding, and some outside ASCII. */
const awkward = fc.constantFrom("/", "%", "?", "#", "&", "+", " ", "!", "~", ".", "\\", "%2F", "é", "日", "😀", "\u0000", "\ud800", "a", "Z", "0");
const partitionValue = fc.oneof(
  fc.maxSafeInteger(),
  fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.string({ unit: awkward, maxLength: 32 }).map((s) => s.slice(0, MAX_PARTITION_STRING_LENGTH)),
  fc.string({ unit: "binary", maxLength: MAX_PARTITION_STRING_LENGTH }).map((s) => s.slice(0, MAX_PARTITION_STRING_LENGTH)),
).filter(isPartitionValue);

const byValue = parseTableDefinition({ columns: [{ name: "s", type: "string" }, { name: "n", type: "int" }], buckets: 1, partitionBy: "s" });
const byInt = parseTableDefinition({ columns: [{ name: "s", type: "string" }, { name: "n", type: "int" }], buckets: 1, partitionBy: "n" });

/** A value a partition column takes (R3, R3b): the ones bucket paths must spell. */
function isPartitionValue(value: string | number): boolean {
  if (!byValue.ok || !byInt.ok) throw new Error("the test definitions parse");
  return typeof value === "number" ? validateRow(byInt.value, { s: "x", n: value }).ok : validateRow(byValue.value, { s: value, n: 0 }).ok;
}
const bucket = fc.integer({ min: 0, max: MAX_BUCKETS - 1 });

/** The path as a node sees it: the pathname of the URL the request was sent to. */
const asReceived = (path: string): string => new URL(`http://127.0.0.1:8787/n/a${path}`).pathname.replace(/^\/n\/a/, "");

describe("bucket paths", () => {
  test("a bucket path round trips: table, partition value's text (or null) and bucket, for every op", () => {
    fc.assert(
      fc.property(tableName, fc.option(partitionValue, { nil: null }), bucket, fc.constantFrom(...OPS), (table, value, i, op) => {
        const partition = value === null ? null : encodePartition(value);
        const path = `${bucketPath(table, { partition, bucket: i })}/${op}`;
        const expected = { table, partition: value === null ? null : partitionSegmentOf(value), bucket: i, op };
        expect(parseBucketPath(path)).toEqual(expected);
        expect(parseBucketPath(asReceived(path))).toEqual(expected);
        // One segment per part: nothing of the value leaks a `/`, `?` or `#` into the path.
        expect(path.split("/")).toHaveLength(partition === null ? 7 : 9);
        expect(path).not.toMatch(/[?#]/);
      }),
      { numRuns: propertyRuns(1000), seed: 17 },
    );
  });

  test("the forms the docs give: the partition as users write it, percent-encoded", () => {
    expect(bucketPath("orders", { partition: null, bucket: 3 })).toBe("/v1/table/orders/bucket/3");
    expect(bucketPath("events", { partition: encodePartition("2026-12-06"), bucket: 1 })).toBe("/v1/table/events/p/2026-12-06/bucket/1");
    expect(bucketPath("orders", { partition: encodePartition("eu/west side"), bucket: 0 })).toBe("/v1/table/orders/p/eu%2Fwest%20side/bucket/0");
    expect(bucketPath("d", { partition: encodePartition(-42), bucket: 0 })).toBe("/v1/table/d/p/-42/bucket/0");
    expect(parseBucketPath("/v1/table/orders/p/eu%2Fwest%20side/bucket/0/lookup")).toEqual({ table: "orders", partition: "eu/west side", bucket: 0, op: "lookup" });
    expect(parseBucketPath("/v1/table/d/p/5/bucket/1023/changelog")).toEqual({ table: "d", partition: "5", bucket: 1023, op: "changelog" });
    // The int 5 and the string "5" are two partitions of two tables (a table has one partition type): one spelling.
    expect(bucketPath("d", { partition: encodePartition(5), bucket: 0 })).toBe(bucketPath("d", { partition: encodePartition("5"), bucket: 0 }));
  });

  test("a partition that is no partition key has no path: bucketPath refuses to build one", () => {
    expect(() => bucketPath("d", { partition: "2026-12-06", bucket: 0 })).toThrow(RangeError);
  });

  test("a table name that is not one is refused", () => {
    for (const table of ["-t", "_t", "t%2Fx", "t.x", "t%20x", "%E0%A4%A", "t".repeat(MAX_TABLE_NAME_LENGTH + 1)]) {
      expect(parseBucketPath(`/v1/table/${table}/bucket/0/write`)).toBeNull();
      expect(parseBucketPath(`/v1/table/${table}/p/${encodePartition(1)}/bucket/0/write`)).toBeNull();
    }
    expect(parseBucketPath("/v1/table//bucket/0/write")).toBeNull();
    expect(parseBucketPath(`/v1/table/${"t".repeat(MAX_TABLE_NAME_LENGTH)}/bucket/0/write`)).not.toBeNull();
  });

  test("a bucket that is not a canonical number below MAX_BUCKETS is refused", () => {
    for (const i of [String(MAX_BUCKETS), "1025", "99999999999999999999", "01", "00", "-1", "+1", "1e3", "0x1", " 1", "", "%31"]) {
      expect(parseBucketPath(`/v1/table/t/bucket/${i}/write`)).toBeNull();
      expect(parseBucketPath(`/v1/table/t/p/${encodePartition(1)}/bucket/${i}/write`)).toBeNull();
    }
    expect(parseBucketPath(`/v1/table/t/bucket/${MAX_BUCKETS - 1}/write`)?.bucket).toBe(MAX_BUCKETS - 1);
    expect(parseBucketPath("/v1/table/t/bucket/0/write")?.bucket).toBe(0);
  });

  test("any non-empty partition segment is read as text (the definition decides what it names, table PS)", () => {
    for (const segment of ["abc", "5", "s", "i12", `${encodePartition(1)}x`, "s%2F!", "seu%23_west!", "%252F"]) {
      expect(parseBucketPath(`/v1/table/t/p/${segment}/bucket/0/write`)?.partition).toBe(decodeURIComponent(segment));
    }
    // An empty segment, or a partition without `p/`.
    expect(parseBucketPath("/v1/table/t/p//bucket/0/write")).toBeNull();
    expect(parseBucketPath("/v1/table/t/x/bucket/0/write")).toBeNull();
    expect(parseBucketPath("/v1/table/t/q/x/bucket/0/write")).toBeNull();
  });

  test("bad percent-encoding in the partition segment is refused, not thrown", () => {
    for (const segment of ["%", "%2", "%ZZ", "s%E0%A4%A!", "s%FF!", "%C0%AF"]) {
      expect(() => parseBucketPath(`/v1/table/t/p/${segment}/bucket/0/write`)).not.toThrow();
      expect(parseBucketPath(`/v1/table/t/p/${segment}/bucket/0/write`)).toBeNull();
    }
  });

  test("an unknown or missing op is refused", () => {
    for (const tail of ["delete", "WRITE", "write/", "writes", "", "lookup/x"]) {
      expect(parseBucketPath(`/v1/table/t/bucket/0/${tail}`)).toBeNull();
      expect(parseBucketPath(`/v1/table/t/p/${encodePartition("x")}/bucket/0/${tail}`)).toBeNull();
    }
    expect(parseBucketPath("/v1/table/t/bucket/0")).toBeNull();
    expect(parseBucketPath("/v1/table/t")).toBeNull();
    expect(parseBucketPath("/v1/stream/t/bucket/0/write")).toBeNull();
  });
});
