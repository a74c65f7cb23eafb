// Partition segments (src/core/tables/partition-segment.ts; docs/tables.md, "Partitions in URLs"): the
// text after `/p/` is the partition column's value (table PS), and what it names in a table with some
// partitions, the old internal spelling included (table PO). Row by row, then the round trip.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { encodePartition } from "../../../src/core/tables/bucketing.ts";
import { parseTableDefinition } from "../../../src/core/tables/definition.ts";
import {
  bucketLabel,
  minOffsetFor,
  parsePartitionSegment,
  partitionColumnType,
  partitionSegmentMeaning,
  partitionSegmentOf,
  partitionValueOfKey,
} from "../../../src/core/tables/partition-segment.ts";
import { MAX_PARTITION_STRING_LENGTH, validateRow } from "../../../src/core/tables/rows.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const MAX = Number.MAX_SAFE_INTEGER;

describe("table PS: a partition segment as a value of the partition column", () => {
  test.each([
    ["PS1", "string", "2026-12-06", "2026-12-06"],
    ["PS1", "string", "eu/west side", "eu/west side"],
    ["PS1", "string", "42", "42"],
    ["PS1", "string", "s2026#]12#]06!", "s2026#]12#]06!"],
    ["PS1", "string", "x".repeat(MAX_PARTITION_STRING_LENGTH), "x".repeat(MAX_PARTITION_STRING_LENGTH)],
    ["PS3", "int", "0", 0],
    ["PS3", "int", "42", 42],
    ["PS3", "int", "-7", -7],
    ["PS3", "int", String(MAX), MAX],
    ["PS3", "int", String(-MAX), -MAX],
  ] as const)("%s: a %s column reads %j as %j", (_row, type, text, value) => {
    expect(parsePartitionSegment(type, text)).toEqual({ ok: true, value });
  });

  test.each([
    ["PS2", "string", "x".repeat(MAX_PARTITION_STRING_LENGTH + 1), "too_long"],
    ["PS4", "int", String(MAX + 1), "out_of_range"],
    ["PS4", "int", "-9007199254740993", "out_of_range"],
    ["PS4", "int", "1".repeat(400), "out_of_range"],
    ...["+1", "01", "-0", "1.0", "1e3", " 1", "1 ", "0x1", "abc", "", "-", encodePartition(42)].map((text) => ["PS5", "int", text, "not_an_int"] as const),
  ] as const)("%s: a %s column refuses %j as %s", (_row, type, text, reason) => {
    expect(parsePartitionSegment(type, text)).toMatchObject({ ok: false, error: { code: "invalid", details: { field: "partition", reason } } });
  });

  test("the partition column's type comes from the definition", () => {
    const columns = [{ name: "day", type: "string" }, { name: "n", type: "int" }];
    const of = (body: unknown) => {
      const definition = parseTableDefinition(body);
      if (!definition.ok) throw new Error(definition.error.message);
      return partitionColumnType(definition.value);
    };
    expect(of({ columns, buckets: 1, partitionBy: "day" })).toBe("string");
    expect(of({ columns, buckets: 1, partitionBy: "n" })).toBe("int");
    expect(of({ columns, buckets: 1 })).toBeNull();
  });

  test("round trip: every partition value's text reads back as the value, and its key is the value's key", () => {
    const stringTable = parseTableDefinition({ columns: [{ name: "p", type: "string" }], buckets: 1, partitionBy: "p" });
    if (!stringTable.ok) throw new Error("the definition parses");
    const stringValue = fc.string({ unit: "binary", minLength: 1, maxLength: MAX_PARTITION_STRING_LENGTH }).filter((value) => validateRow(stringTable.value, { p: value }).ok);
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.constantFrom(0, -1, MAX, -MAX)), (value) => {
        expect(parsePartitionSegment("int", partitionSegmentOf(value))).toEqual({ ok: true, value });
        // And through a URL: percent-encoded, decoded once (request-target.ts).
        expect(parsePartitionSegment("int", decodeURIComponent(encodeURIComponent(partitionSegmentOf(value))))).toEqual({ ok: true, value });
      }),
      { numRuns: propertyRuns(500), seed: 22 },
    );
    fc.assert(
      fc.property(stringValue, (value) => {
        const text = decodeURIComponent(encodeURIComponent(partitionSegmentOf(value)));
        expect(parsePartitionSegment("string", text)).toEqual({ ok: true, value });
      }),
      { numRuns: propertyRuns(500), seed: 22 },
    );
  });
});

describe("table PO: what a segment names in a table with some partitions", () => {
  const day = "2026-12-06";

  test("PO1: a value the table has is that partition", () => {
    expect(partitionSegmentMeaning("string", day, [day])).toEqual({ kind: "partition", value: day, key: encodePartition(day) });
    expect(partitionSegmentMeaning("int", "-3", [5, -3])).toEqual({ kind: "partition", value: -3, key: encodePartition(-3) });
  });

  test("PO1: the user's value wins even when the text is also another partition's internal key", () => {
    const both = [day, encodePartition(day)];
    expect(partitionSegmentMeaning("string", encodePartition(day), both)).toEqual({ kind: "partition", value: encodePartition(day), key: encodePartition(encodePartition(day)) });
  });

  test("PO2: the internal key of a partition the table has is not_found, naming the segment to write", () => {
    for (const [type, text, existing, segment] of [
      ["string", encodePartition(day), [day], day],
      ["string", encodePartition("eu/west side"), ["eu/west side"], "eu/west side"],
      ["int", encodePartition(42), [42], "42"],
      ["int", encodePartition(-7), [-7], "-7"],
    ] as const) {
      const meaning = partitionSegmentMeaning(type, text, existing);
      expect(meaning).toMatchObject({ kind: "refused", error: { code: "not_found", details: { reason: "internal_partition_key", partitionSegment: segment } } });
      if (meaning.kind === "refused") expect(meaning.error.message).toContain(`/p/${encodeURIComponent(segment)}/`);
    }
  });

  test("PO3: a value the table lacks is absent (its key all the same)", () => {
    expect(partitionSegmentMeaning("string", "2026-12-07", [day])).toEqual({ kind: "absent", value: "2026-12-07", key: encodePartition("2026-12-07") });
    expect(partitionSegmentMeaning("int", "6", [5])).toEqual({ kind: "absent", value: 6, key: encodePartition(6) });
    // An internal key of a partition the table does not have is just a string value.
    expect(partitionSegmentMeaning("string", encodePartition("other"), [day])).toMatchObject({ kind: "absent", value: encodePartition("other") });
  });

  test("PO4: a segment that is no value of the column is PS's invalid", () => {
    expect(partitionSegmentMeaning("int", "01", [1])).toMatchObject({ kind: "refused", error: { code: "invalid", details: { reason: "not_an_int" } } });
    expect(partitionSegmentMeaning("int", encodePartition(9), [5])).toMatchObject({ kind: "refused", error: { code: "invalid", details: { reason: "not_an_int" } } });
  });
});

describe("answers and minOffsets name a bucket by its partition's value", () => {
  test.each([
    [null, 3, "3"],
    ["2026-12-06", 1, "2026-12-06/1"],
    ["eu/west side", 0, "eu/west side/0"],
    [42, 1, "42/1"],
    [-7, 0, "-7/0"],
  ] as const)("bucketLabel: partition %j, bucket %i is %j", (value, bucket, label) => {
    const id = { partition: value === null ? null : encodePartition(value), bucket };
    expect(bucketLabel(id)).toBe(label);
    expect(partitionValueOfKey(id.partition)).toBe(value);
  });

  test("partitionValueOfKey refuses a text that is no partition key", () => {
    expect(() => partitionValueOfKey("2026-12-06")).toThrow(RangeError);
  });

  test.each([
    ["the value form", { "2026-12-06/1": "a" }, "a"],
    ["the old key form, when no value form is given", { [`${encodePartition("2026-12-06")}/1`]: "b" }, "b"],
    ["the value form over the old key form", { "2026-12-06/1": "a", [`${encodePartition("2026-12-06")}/1`]: "b" }, "a"],
    ["nothing for another bucket", { "2026-12-06/0": "a" }, undefined],
    ["nothing from the prototype", JSON.parse('{"__proto__": {"2026-12-06/1": "x"}}') as Record<string, unknown>, undefined],
  ] as const)("minOffsetFor reads %s", (_what, minOffsets, expected) => {
    expect(minOffsetFor(minOffsets, { partition: encodePartition("2026-12-06"), bucket: 1 })).toBe(expected);
  });
});
