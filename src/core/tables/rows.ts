// Rows (rows R1..R9 and R3b of docs/tables.md): a row object checked against its table's definition, returned in
// canonical form (every column, definition order, a missing nullable column as null), and the key tuples
// it carries.
import { nestsDeeperThan } from "../json-depth.ts";
import { fail, ok, type Parsed } from "../protocol/parsed.ts";
import { isPlainObject, type ColumnDefinition, type TableDefinition } from "./definition.ts";
import type { KeyValue } from "./key-encoding.ts";

/** Longest string value, in UTF-16 code units. */
export const MAX_STRING_VALUE_LENGTH = 65_536;
/** Longest string in a key column (primary key, bucket key), in code units: keys are indexed and sent often. */
export const MAX_KEY_STRING_LENGTH = 512;
/** Longest partition value, in code units: it is part of every bucket stream name of its partition. */
export const MAX_PARTITION_STRING_LENGTH = 128;
/** Largest json value, as the length of its JSON text in code units. */
export const MAX_JSON_VALUE_LENGTH = 65_536;
/** Deepest json value, in levels of arrays and objects: checked before anything walks it recursively. */
export const MAX_JSON_VALUE_DEPTH = 64;

type RowValue = JsonValue;
type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };
/** A checked row: one entry per column, in definition order. */
export type Row = Readonly<Record<string, RowValue>>;

/** R1..R8: the row in canonical form, or `invalid` naming the column in `details.field`. */
export function validateRow(definition: TableDefinition, raw: unknown): Parsed<Row> {
  if (!isPlainObject(raw)) return fail("invalid", "a row is a JSON object", { field: "row" });
  const byName = new Set(definition.columns.map((column) => column.name));
  const unknownColumn = Object.keys(raw).find((key) => !byName.has(key));
  if (unknownColumn !== undefined) {
    return fail("invalid", `unknown column '${unknownColumn}'`, { field: unknownColumn });
  }
  const keyColumns = new Set([...(definition.primaryKey ?? []), ...(definition.bucketKey ?? [])]);
  const entries: [string, RowValue][] = [];
  for (const column of definition.columns) {
    // Own properties only: a column may be named like an Object.prototype member (`constructor`).
    const value: unknown = Object.hasOwn(raw, column.name) ? raw[column.name] : undefined;
    const maxStringLength = column.name === definition.partitionBy
      ? MAX_PARTITION_STRING_LENGTH
      : keyColumns.has(column.name) ? MAX_KEY_STRING_LENGTH : MAX_STRING_VALUE_LENGTH;
    const problem = checkValue(column, value, maxStringLength) ?? (column.name === definition.partitionBy ? partitionProblem(value) : null);
    if (problem !== null) return fail("invalid", `column '${column.name}' ${problem}`, { field: column.name });
    entries.push([column.name, (value ?? null) as RowValue]);
  }
  // fromEntries defines own properties, so even a column named `__proto__` stays a plain entry.
  return ok(Object.fromEntries(entries));
}

/** R9: the primary key tuple of a checked row of a keyed table (null for a log table). */
export function primaryKeyOf(definition: TableDefinition, row: Row): KeyValue[] | null {
  return definition.primaryKey === null ? null : tupleOf(definition.primaryKey, row);
}

/** R9: the bucket key tuple of a checked row (null for a log table without a bucket key). */
export function bucketKeyOf(definition: TableDefinition, row: Row): KeyValue[] | null {
  return definition.bucketKey === null ? null : tupleOf(definition.bucketKey, row);
}

function tupleOf(names: readonly string[], row: Row): KeyValue[] {
  // Key columns are non-nullable string, int or bool (definition.ts), so a checked row holds a KeyValue.
  return names.map((name) => row[name] as KeyValue);
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * R3b: a partition value is written in URLs (`/p/<value>/`, docs/tables.md "Partitions in URLs"), so it must
 * have a URL spelling: not empty, not `.` or `..`, no control character (request-target.ts RT1 refuses
 * those segments) and no unpaired surrogate (it has no UTF-8, so no percent-encoding).
 */
function partitionProblem(value: unknown): string | null {
  if (typeof value !== "string") return null;
  if (value === "" || value === "." || value === "..") return "must not be empty, '.' or '..' (a partition value is a URL path segment)";
  if (/[\u0000-\u001f\u007f]/.test(value)) return "must not contain control characters (a partition value is a URL path segment)";
  return UNPAIRED_SURROGATE.test(value) ? "must not contain an unpaired surrogate (a partition value is a URL path segment)" : null;
}

/** Why the value does not fit the column, or null when it does. */
function checkValue(column: ColumnDefinition, value: unknown, maxStringLength: number): string | null {
  if (value === undefined || value === null) return column.nullable ? null : "is required (not nullable)";
  switch (column.type) {
    case "string":
      if (typeof value !== "string") return "must be a string";
      return value.length > maxStringLength ? `must be at most ${maxStringLength} characters` : null;
    case "int":
      return Number.isSafeInteger(value) ? null : "must be an integer within ±(2^53-1)";
    case "float":
      return typeof value === "number" && Number.isFinite(value) ? null : "must be a finite number";
    case "bool":
      return typeof value === "boolean" ? null : "must be true or false";
    case "json":
      if (nestsDeeperThan(value, MAX_JSON_VALUE_DEPTH)) return `must nest at most ${MAX_JSON_VALUE_DEPTH} levels deep (MAX_JSON_VALUE_DEPTH)`;
      return JSON.stringify(value).length > MAX_JSON_VALUE_LENGTH
        ? `must be at most ${MAX_JSON_VALUE_LENGTH} characters of JSON`
        : null;
  }
}
