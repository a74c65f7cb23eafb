// Rows R1..R9 and K1..K5 of docs/tables.md ("Definitions, rows and buckets").
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseTableDefinition, type TableDefinition } from "../../../src/core/tables/definition.ts";
import { encodeKey, type KeyValue } from "../../../src/core/tables/key-encoding.ts";
import {
  bucketKeyOf,
  MAX_JSON_VALUE_DEPTH,
  MAX_JSON_VALUE_LENGTH,
  MAX_KEY_STRING_LENGTH,
  MAX_PARTITION_STRING_LENGTH,
  MAX_STRING_VALUE_LENGTH,
  primaryKeyOf,
  validateRow,
} from "../../../src/core/tables/rows.ts";
import { propertyRuns } from "../../support/property-runs.ts";

function definition(body: unknown): TableDefinition {
  const result = parseTableDefinition(body);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const table = definition({
  columns: [
    { name: "tenant", type: "string" },
    { name: "id", type: "int" },
    { name: "name", type: "string" },
    { name: "score", type: "float", nullable: true },
    { name: "doc", type: "json", nullable: true },
    { name: "active", type: "bool" },
    { name: "constructor", type: "int", nullable: true },
  ],
  primaryKey: ["tenant", "id"],
  bucketKey: ["tenant"],
  partitionBy: "tenant",
  buckets: 4,
});
const good = { tenant: "acme", id: 7, name: "x", active: true };

function field(raw: unknown): unknown {
  const result = validateRow(table, raw);
  expect(result).toMatchObject({ ok: false, error: { code: "invalid" } });
  return result.ok ? undefined : result.error.details?.["field"];
}

describe("rows", () => {
  test("R1: a row is an object of defined columns; an unknown column is named", () => {
    expect(field([good])).toBe("row");
    expect(field({ ...good, extra: 1 })).toBe("extra");
    expect(field(JSON.parse('{"tenant":"a","id":1,"name":"x","active":true,"__proto__":{}}'))).toBe("__proto__");
  });

  test("R2: a non-nullable column is required; a nullable one may be missing or null", () => {
    expect(field({ tenant: "a", id: 1, active: true })).toBe("name");
    expect(field({ ...good, name: null })).toBe("name");
    expect(validateRow(table, { ...good, score: null }).ok).toBe(true);
    expect(validateRow(table, good).ok).toBe(true);
  });

  test("R3: strings are bounded; key and partition strings more tightly", () => {
    expect(field({ ...good, name: 5 })).toBe("name");
    expect(validateRow(table, { ...good, name: "n".repeat(MAX_STRING_VALUE_LENGTH) }).ok).toBe(true);
    expect(field({ ...good, name: "n".repeat(MAX_STRING_VALUE_LENGTH + 1) })).toBe("name");
    expect(validateRow(table, { ...good, tenant: "t".repeat(MAX_PARTITION_STRING_LENGTH) }).ok).toBe(true);
    expect(field({ ...good, tenant: "t".repeat(MAX_PARTITION_STRING_LENGTH + 1) })).toBe("tenant");
    const keyed = definition({ columns: [{ name: "k", type: "string" }], primaryKey: ["k"], buckets: 1 });
    expect(validateRow(keyed, { k: "k".repeat(MAX_KEY_STRING_LENGTH) }).ok).toBe(true);
    expect(validateRow(keyed, { k: "k".repeat(MAX_KEY_STRING_LENGTH + 1) }).ok).toBe(false);
  });

  test.each([
    ["", false],
    [".", false],
    ["..", false],
    ["a\u0000b", false],
    ["tab\there", false],
    ["\u007f", false],
    ["x\ud800", false],
    ["\udc00x", false],
    ["...", true],
    [".a", true],
    ["eu/west side", true],
    ["s2026#]12#]06!", true],
    ["😀", true],
  ] as const)("R3b: a partition string needs a URL spelling: %j accepted %s", (tenant, accepted) => {
    if (accepted) expect(validateRow(table, { ...good, tenant }).ok).toBe(true);
    else expect(field({ ...good, tenant })).toBe("tenant");
    // Only the partition column: any other string column takes the same text.
    expect(validateRow(table, { ...good, name: tenant }).ok).toBe(true);
  });

  test.each([1.5, 2 ** 53, -(2 ** 53), "1", true, Number.NaN])("R4: %j is not an int", (id) => {
    expect(field({ ...good, id })).toBe("id");
  });

  test("R4: safe integers, negative ones too, are ints", () => {
    for (const id of [0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) expect(validateRow(table, { ...good, id }).ok).toBe(true);
  });

  test("R5: a float is a finite number", () => {
    expect(validateRow(table, { ...good, score: 3 }).ok).toBe(true);
    expect(validateRow(table, { ...good, score: -0.25 }).ok).toBe(true);
    for (const score of [Infinity, Number.NaN, "1.5"]) expect(field({ ...good, score })).toBe("score");
  });

  test("R6: a bool is true or false", () => {
    for (const active of [1, "true", null]) expect(field({ ...good, active })).toBe("active");
  });

  test("R7: json takes any JSON value up to MAX_JSON_VALUE_LENGTH of text", () => {
    for (const doc of [{ a: [1, { b: null }] }, [1, 2], "s", 0, false]) expect(validateRow(table, { ...good, doc }).ok).toBe(true);
    const justFits = "d".repeat(MAX_JSON_VALUE_LENGTH - 2);
    expect(validateRow(table, { ...good, doc: justFits }).ok).toBe(true);
    expect(field({ ...good, doc: `${justFits}d` })).toBe("doc");
  });

  test("R7: a json value nesting deeper than MAX_JSON_VALUE_DEPTH is invalid, naming the limit, even a million levels deep", () => {
    const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));
    expect(validateRow(table, { ...good, doc: nested(MAX_JSON_VALUE_DEPTH) }).ok).toBe(true);
    for (const depth of [MAX_JSON_VALUE_DEPTH + 1, 1_000_000]) {
      const result = validateRow(table, { ...good, doc: nested(depth) });
      expect(result).toMatchObject({ ok: false, error: { code: "invalid", details: { field: "doc" } } });
      if (!result.ok) expect(result.error.message).toContain("MAX_JSON_VALUE_DEPTH");
    }
  });

  test("R8: the checked row has every column in definition order, missing nullable ones as null", () => {
    const result = validateRow(table, { active: false, name: "n", id: 2, tenant: "t", constructor: 4 });
    expect(result.ok && Object.entries(result.value)).toEqual([
      ["tenant", "t"], ["id", 2], ["name", "n"], ["score", null], ["doc", null], ["active", false], ["constructor", 4],
    ]);
    const missing = validateRow(table, good);
    expect(missing.ok && missing.value["constructor"]).toBeNull();
  });

  test("R9: the primary key and the bucket key are tuples in key order", () => {
    const result = validateRow(table, good);
    if (!result.ok) throw new Error("row refused");
    expect(primaryKeyOf(table, result.value)).toEqual(["acme", 7]);
    expect(bucketKeyOf(table, result.value)).toEqual(["acme"]);
    const log = definition({ columns: [{ name: "m", type: "string" }], buckets: 2 });
    expect(primaryKeyOf(log, { m: "x" })).toBeNull();
    expect(bucketKeyOf(log, { m: "x" })).toBeNull();
  });
});

const keyValue = fc.oneof(
  fc.boolean(),
  fc.oneof(fc.integer(), fc.constantFrom(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, -1, 0), fc.maxSafeInteger()),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: fc.constantFrom("\u0000", "\u002f", "\u0030", "!", "#", "~", "\u007d", "\u007e", "a", "\uffff"), maxLength: 6 }),
);

/** The tuple order the encoding must reproduce: per element, bool < int < string by the tag, then by value. */
function compareTuples(a: readonly KeyValue[], b: readonly KeyValue[]): number {
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const x = a[index] as KeyValue;
    const y = b[index] as KeyValue;
    const rank = (v: KeyValue): number => (typeof v === "boolean" ? 0 : typeof v === "number" ? 1 : 2);
    if (rank(x) !== rank(y)) return rank(x) - rank(y);
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

const sign = (n: number): number => Math.sign(n);
const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const PROPERTY = { numRuns: propertyRuns(2000), seed: 13 };

describe("key encoding", () => {
  test("K1: false sorts before true", () => {
    expect(encodeKey([false]) < encodeKey([true])).toBe(true);
  });

  test("K2: ints sort by numeric order, negatives first", () => {
    const ints = [Number.MIN_SAFE_INTEGER, -256, -1, 0, 1, 15, 16, 2 ** 40, Number.MAX_SAFE_INTEGER];
    const encoded = ints.map((n) => encodeKey([n]));
    expect([...encoded].sort()).toEqual(encoded);
    expect(new Set(encoded).size).toBe(ints.length);
    expect(() => encodeKey([2 ** 53])).toThrow(RangeError);
  });

  test("K2: neighbouring ints encode apart and in order, as the exact value + 2^53 in 14 hex digits", () => {
    const exact = (n: number): string => `i${(BigInt(n) + 2n ** 53n).toString(16).padStart(14, "0")}`;
    for (const n of [0, 1, 2, 3, 2 ** 52 - 1, 2 ** 52, 2 ** 52 + 1, Number.MAX_SAFE_INTEGER, -1, Number.MIN_SAFE_INTEGER]) {
      expect(encodeKey([n])).toBe(exact(n));
    }
    fc.assert(
      fc.property(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER - 1 }), (n) => {
        expect(encodeKey([n])).toBe(exact(n));
        expect(encodeKey([n]) < encodeKey([n + 1])).toBe(true);
      }),
      PROPERTY,
    );
  });

  test("K3: strings sort by code unit, a prefix first", () => {
    const strings = ["", "\u0000", "\u0000\u0000", "!", "/", "0", "a", "ab", "b", "}", "~", "\u00e9", "\ud83d\ude00", "\uffff"];
    const encoded = strings.map((s) => encodeKey([s]));
    expect([...encoded].sort()).toEqual(encoded);
  });

  test("K1..K4: the order of encodings is the order of key tuples", () => {
    fc.assert(
      fc.property(fc.array(keyValue, { maxLength: 4 }), fc.array(keyValue, { maxLength: 4 }), (a, b) => {
        expect(sign(byCodeUnit(encodeKey(a), encodeKey(b)))).toBe(sign(compareTuples(a, b)));
      }),
      PROPERTY,
    );
  });

  test("K4: the encoding of a prefix of a tuple is a prefix of its encoding", () => {
    fc.assert(
      fc.property(fc.array(keyValue, { maxLength: 4 }), fc.array(keyValue, { maxLength: 4 }), (a, b) => {
        expect(encodeKey([...a, ...b]).startsWith(encodeKey(a))).toBe(true);
      }),
      PROPERTY,
    );
  });

  test("K5: the encoding is injective and printable ASCII", () => {
    fc.assert(
      fc.property(fc.array(keyValue, { maxLength: 4 }), fc.array(keyValue, { maxLength: 4 }), (a, b) => {
        expect(encodeKey(a) === encodeKey(b)).toBe(compareTuples(a, b) === 0);
        expect(encodeKey(a)).toMatch(/^[\x21-\x7e]*$/);
      }),
      PROPERTY,
    );
  });
});
