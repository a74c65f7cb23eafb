// A mink table as an Iceberg table (docs/tiering.md, table TS; src/core/tiering/iceberg-schema.ts).
import { describe, expect, test } from "vitest";
import { definitionOf as definition } from "../../support/parse-definition.ts";
import { equalityFieldIds, icebergSchema, partitionSpec, partitionType, tieredColumns } from "../../../src/core/tiering/iceberg-schema.ts";


const everyType = definition({
  columns: [
    { name: "s", type: "string" },
    { name: "i", type: "int" },
    { name: "f", type: "float", nullable: true },
    { name: "b", type: "bool" },
    { name: "j", type: "json", nullable: true },
  ],
  buckets: 2,
});

describe("table TS: the tiered schema", () => {
  test("TS1: string→string, int→long, float→double, bool→boolean, json→string; nullable columns are optional", () => {
    const columns = tieredColumns(everyType).slice(0, 5);
    expect(columns.map((c) => [c.id, c.name, c.type, c.required])).toEqual([
      [1, "s", "string", true],
      [2, "i", "long", true],
      [3, "f", "double", false],
      [4, "b", "boolean", true],
      [5, "j", "string", false],
    ]);
  });

  test("TS2: mink adds _bucket (int) and _offset (long) after the table's columns, both required", () => {
    const added = tieredColumns(everyType).slice(5);
    expect(added.map((c) => [c.id, c.name, c.type, c.required, c.source.kind])).toEqual([
      [6, "_bucket", "int", true, "bucket"],
      [7, "_offset", "long", true, "offset"],
    ]);
  });

  test("TS3: a user column named _bucket or _offset keeps its name; mink's takes one more leading _", () => {
    const clash = definition({ columns: [{ name: "_bucket", type: "int" }, { name: "__bucket", type: "int" }, { name: "_offset", type: "string" }], buckets: 1 });
    const names = tieredColumns(clash).map((c) => c.name);
    expect(names).toEqual(["_bucket", "__bucket", "_offset", "___bucket", "__offset"]);
    expect(new Set(names).size).toBe(names.length);
  });

  test("TS4: a primary-key table names its key as identifier fields and equality ids; a log table has none", () => {
    const keyed = definition({ columns: [{ name: "a", type: "string" }, { name: "k", type: "int" }, { name: "v", type: "string" }], primaryKey: ["k", "a"], buckets: 1 });
    expect(equalityFieldIds(keyed)).toEqual([2, 1]);
    expect(icebergSchema(keyed)["identifier-field-ids"]).toEqual([2, 1]);
    expect(equalityFieldIds(everyType)).toEqual([]);
    expect(icebergSchema(everyType)).not.toHaveProperty("identifier-field-ids");
  });

  test("TS5: a partitioned table has an identity partition on its partition column (field id 1000); others are unpartitioned", () => {
    const partitioned = definition({ columns: [{ name: "v", type: "string" }, { name: "day", type: "int" }], buckets: 1, partitionBy: "day" });
    expect(partitionSpec(partitioned)).toEqual({ "spec-id": 0, fields: [{ "source-id": 2, "field-id": 1000, name: "day", transform: "identity" }] });
    expect(partitionType(partitioned)).toBe("long");
    expect(partitionSpec(everyType)).toEqual({ "spec-id": 0, fields: [] });
    expect(partitionType(everyType)).toBeNull();
  });
});
