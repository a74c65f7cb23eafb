// Rows D1..D16 of docs/tables.md ("Definitions, rows and buckets").
import { describe, expect, test } from "vitest";
import {
  definitionJson,
  bucketKeyIsPrefixOfPrimaryKey,
  compareDefinitions,
  MAX_BUCKETS,
  MAX_COLUMNS,
  MAX_KEY_COLUMNS,
  parseTableDefinition,
  parseTableName,
  type TableDefinition,
} from "../../../src/core/tables/definition.ts";

const base = {
  columns: [
    { name: "tenant", type: "string" },
    { name: "id", type: "int" },
    { name: "score", type: "float" },
    { name: "doc", type: "json", nullable: true },
    { name: "active", type: "bool" },
  ],
  primaryKey: ["tenant", "id"],
  buckets: 8,
};

function parsed(body: unknown): TableDefinition {
  const result = parseTableDefinition(body);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function refusedField(body: unknown): unknown {
  const result = parseTableDefinition(body);
  expect(result).toMatchObject({ ok: false, error: { code: "invalid" } });
  return result.ok ? undefined : result.error.details?.["field"];
}

describe("table definitions", () => {
  test("D1: a definition is an object of known fields; an unknown field is named", () => {
    expect(refusedField([base])).toBe("body");
    expect(refusedField({ ...base, bukets: 3 })).toBe("bukets");
  });

  test("D2: columns are 1..MAX_COLUMNS distinct, well-named, typed columns; nullable defaults to false", () => {
    expect(parsed(base).columns[0]).toEqual({ name: "tenant", type: "string", nullable: false });
    expect(parsed(base).columns[3]).toEqual({ name: "doc", type: "json", nullable: true });
    expect(refusedField({ ...base, columns: [] })).toBe("columns");
    const many = Array.from({ length: MAX_COLUMNS + 1 }, (_, i) => ({ name: `c${i}`, type: "int" }));
    expect(refusedField({ columns: many, buckets: 1 })).toBe("columns");
    expect(parseTableDefinition({ columns: many.slice(0, MAX_COLUMNS), buckets: 1 }).ok).toBe(true);
    expect(refusedField({ columns: [{ name: "1a", type: "int" }], buckets: 1 })).toBe("columns[0].name");
    expect(refusedField({ columns: [{ name: "a-b", type: "int" }], buckets: 1 })).toBe("columns[0].name");
    expect(refusedField({ columns: [{ name: "x".repeat(65), type: "int" }], buckets: 1 })).toBe("columns[0].name");
    expect(refusedField({ columns: [{ name: "a", type: "int" }, { name: "a", type: "bool" }], buckets: 1 })).toBe("columns[1].name");
    expect(refusedField({ columns: [{ name: "a", type: "text" }], buckets: 1 })).toBe("columns[0].type");
    expect(refusedField({ columns: [{ name: "a", type: "int", nullable: "yes" }], buckets: 1 })).toBe("columns[0].nullable");
    expect(refusedField({ columns: [{ name: "a", type: "int", default: 1 }], buckets: 1 })).toBe("columns[0].default");
  });

  test("D3: without primaryKey the table is a log table", () => {
    const { primaryKey: _, ...log } = base;
    expect(parsed(log).primaryKey).toBeNull();
    expect(parsed(base).primaryKey).toEqual(["tenant", "id"]);
  });

  test("D4: key columns exist, are distinct, and number 1..MAX_KEY_COLUMNS", () => {
    expect(refusedField({ ...base, primaryKey: ["nope"] })).toBe("primaryKey[0]");
    expect(refusedField({ ...base, primaryKey: ["id", "id"] })).toBe("primaryKey[1]");
    expect(refusedField({ ...base, primaryKey: [] })).toBe("primaryKey");
    const many = Array.from({ length: MAX_KEY_COLUMNS + 1 }, (_, i) => ({ name: `k${i}`, type: "int" }));
    const names = many.map((column) => column.name);
    expect(refusedField({ columns: many, primaryKey: names, buckets: 1 })).toBe("primaryKey");
    expect(parseTableDefinition({ columns: many, primaryKey: names.slice(0, MAX_KEY_COLUMNS), buckets: 1 }).ok).toBe(true);
  });

  test.each([["score"], ["doc"]])("D5: a %s column (float or json) is not a key column", (name) => {
    expect(refusedField({ ...base, primaryKey: [name] })).toBe("primaryKey[0]");
    const { primaryKey: _, ...log } = base;
    expect(refusedField({ ...log, bucketKey: [name] })).toBe("bucketKey[0]");
  });

  test("D5: string, int and bool columns are key columns", () => {
    expect(parsed({ ...base, primaryKey: ["active", "tenant", "id"] }).primaryKey).toEqual(["active", "tenant", "id"]);
  });

  test("D6: a key column is not nullable", () => {
    const columns = [{ name: "id", type: "string", nullable: true }];
    expect(refusedField({ columns, primaryKey: ["id"], buckets: 1 })).toBe("primaryKey[0]");
    expect(refusedField({ columns, bucketKey: ["id"], buckets: 1 })).toBe("bucketKey[0]");
  });

  test("D7: the bucket key defaults to the primary key", () => {
    expect(parsed(base).bucketKey).toEqual(["tenant", "id"]);
  });

  test("D8: a keyed table's bucket key is a subset of its primary key", () => {
    expect(parsed({ ...base, bucketKey: ["tenant"] }).bucketKey).toEqual(["tenant"]);
    expect(refusedField({ ...base, bucketKey: ["active"] })).toBe("bucketKey");
  });

  test("D9: a log table may have no bucket key, or any key columns as one", () => {
    const { primaryKey: _, ...log } = base;
    expect(parsed(log).bucketKey).toBeNull();
    expect(parsed({ ...log, bucketKey: ["active"] }).bucketKey).toEqual(["active"]);
  });

  test("D10: the bucket key is a set, kept in primary-key order (log table: column order)", () => {
    expect(parsed({ ...base, bucketKey: ["id", "tenant"] }).bucketKey).toEqual(["tenant", "id"]);
    const { primaryKey: _, ...log } = base;
    expect(parsed({ ...log, bucketKey: ["active", "tenant"] }).bucketKey).toEqual(["tenant", "active"]);
  });

  test.each([0, MAX_BUCKETS + 1, 1.5, "8", null, undefined])("D11: %j buckets is refused", (buckets) => {
    expect(refusedField({ ...base, buckets })).toBe("buckets");
  });

  test.each([1, MAX_BUCKETS])("D11: %j buckets is accepted", (buckets) => {
    expect(parsed({ ...base, buckets }).buckets).toBe(buckets);
  });

  test("D12: the partition column exists and is a non-nullable string or int", () => {
    const { primaryKey: _, ...log } = base;
    expect(parsed({ ...log, partitionBy: "tenant" }).partitionBy).toBe("tenant");
    expect(parsed({ ...log, partitionBy: "id" }).partitionBy).toBe("id");
    expect(parsed(log).partitionBy).toBeNull();
    for (const name of ["active", "score", "doc", "nope", 3]) {
      expect(refusedField({ ...log, partitionBy: name })).toBe("partitionBy");
    }
    const nullable = { columns: [{ name: "day", type: "string", nullable: true }], buckets: 1, partitionBy: "day" };
    expect(refusedField(nullable)).toBe("partitionBy");
  });

  test("D13: a keyed table's partition column is in its primary key", () => {
    expect(parsed({ ...base, partitionBy: "tenant" }).partitionBy).toBe("tenant");
    const columns = [...base.columns, { name: "day", type: "string" }];
    expect(refusedField({ ...base, columns, partitionBy: "day" })).toBe("partitionBy");
  });

  test("D14: a table name is 1..128 of [A-Za-z0-9_-], starting with a letter or digit", () => {
    for (const name of ["orders", "Orders_2", "9-lives", "x".repeat(128)]) expect(parseTableName(name).ok).toBe(true);
    for (const name of ["", "-a", "_a", "a/b", "a b", "é", "x".repeat(129)]) {
      expect(parseTableName(name)).toMatchObject({ ok: false, error: { code: "invalid", details: { field: "name" } } });
    }
  });

  test("D15: the same definition with defaults spelled out or keys reordered is the same", () => {
    const spelled = {
      columns: base.columns.map((column) => ({ nullable: false, ...column })),
      primaryKey: ["tenant", "id"],
      bucketKey: ["id", "tenant"],
      buckets: 8,
    };
    expect(compareDefinitions(parsed(base), parsed(spelled))).toBe("same");
  });

  test("D15: the recorded form (definitionJson) parses back to the same definition", () => {
    for (const definition of [base, { ...base, partitionBy: "tenant" }, { columns: [{ name: "x", type: "json" }], buckets: 2 }]) {
      const first = parsed(definition);
      expect(parsed(definitionJson(first))).toEqual(first);
    }
  });

  test.each([
    ["buckets", { ...base, buckets: 9 }],
    ["bucket key", { ...base, bucketKey: ["tenant"] }],
    ["primary key order", { ...base, primaryKey: ["id", "tenant"] }],
    ["column order", { ...base, columns: [...base.columns].reverse() }],
    ["nullability", { ...base, columns: base.columns.map((c) => ({ ...c, nullable: true })).map((c, i) => (i < 2 ? { ...c, nullable: false } : c)) }],
    ["partitioning", { ...base, partitionBy: "tenant" }],
  ])("D15: a different %s is a different definition", (_, other) => {
    expect(compareDefinitions(parsed(base), parsed(other))).toBe("different");
  });

  test("D16: the bucket key is a prefix of the primary key only when it is its first columns", () => {
    expect(bucketKeyIsPrefixOfPrimaryKey(parsed(base))).toBe(true);
    expect(bucketKeyIsPrefixOfPrimaryKey(parsed({ ...base, bucketKey: ["tenant"] }))).toBe(true);
    expect(bucketKeyIsPrefixOfPrimaryKey(parsed({ ...base, bucketKey: ["id"] }))).toBe(false);
    const { primaryKey: _, ...log } = base;
    expect(bucketKeyIsPrefixOfPrimaryKey(parsed({ ...log, bucketKey: ["tenant"] }))).toBe(false);
  });
});
