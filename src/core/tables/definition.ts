// Table definitions (rows D1..D16 of docs/tables.md, "Definitions, rows and buckets"): the JSON body of
// `PUT /v1/table/<name>` parsed into a canonical definition, and the comparison behind 201 / 200 / 409.
import { fail, ok, type Parsed } from "../protocol/parsed.ts";

const COLUMN_TYPES = ["string", "int", "float", "bool", "json"] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];
/** The types a key column (primary key, bucket key, partition) may have: each has one exact encoding. */
type KeyColumnType = "string" | "int" | "bool";

/** Most columns in one table (every row is checked against all of them). */
export const MAX_COLUMNS = 64;
/** Most columns in the primary key or the bucket key. */
export const MAX_KEY_COLUMNS = 8;
const MIN_BUCKETS = 1;
export const MAX_BUCKETS = 1024;
/** Longest column name; names are `[A-Za-z_][A-Za-z0-9_]*` so they are safe as SQLite identifiers. */
const MAX_COLUMN_NAME_LENGTH = 64;
/** Longest table name; names are `[A-Za-z0-9_-]`, starting with a letter or digit, so no `/` ever appears. */
export const MAX_TABLE_NAME_LENGTH = 128;

const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const TOP_LEVEL_FIELDS = new Set(["columns", "primaryKey", "bucketKey", "buckets", "partitionBy"]);
const COLUMN_FIELDS = new Set(["name", "type", "nullable"]);

export interface ColumnDefinition {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
}

/** The canonical form: every default filled in, the bucket key in primary-key (or column) order. */
export interface TableDefinition {
  readonly columns: readonly ColumnDefinition[];
  /** `null` for a log table. */
  readonly primaryKey: readonly string[] | null;
  /** `null` only for a log table without one: rows then go by a hash of the whole row (D9). */
  readonly bucketKey: readonly string[] | null;
  readonly buckets: number;
  readonly partitionBy: string | null;
}

/**
 * The canonical definition as the JSON a PUT would send: what the metadata log keeps and GET shows. Absent
 * parts are left out (not `null`), so it parses back to the same definition (D15: "same").
 */
export function definitionJson(definition: TableDefinition): Record<string, unknown> {
  return {
    columns: definition.columns.map((column) => ({ name: column.name, type: column.type, nullable: column.nullable })),
    ...(definition.primaryKey === null ? {} : { primaryKey: [...definition.primaryKey] }),
    ...(definition.bucketKey === null ? {} : { bucketKey: [...definition.bucketKey] }),
    buckets: definition.buckets,
    ...(definition.partitionBy === null ? {} : { partitionBy: definition.partitionBy }),
  };
}

/** D14: the name in `/v1/table/<name>`. */
export function parseTableName(name: string): Parsed<string> {
  if (name.length === 0 || name.length > MAX_TABLE_NAME_LENGTH || !TABLE_NAME.test(name)) {
    return invalid("name", `table name must be 1 to ${MAX_TABLE_NAME_LENGTH} of [A-Za-z0-9_-], starting with a letter or digit`);
  }
  return ok(name);
}

/** D1..D13: the request body, already JSON-parsed, into the canonical definition. */
export function parseTableDefinition(body: unknown): Parsed<TableDefinition> {
  if (!isPlainObject(body)) return invalid("body", "a table definition is a JSON object");
  const unknownField = Object.keys(body).find((key) => !TOP_LEVEL_FIELDS.has(key));
  if (unknownField !== undefined) return invalid(unknownField, `unknown field '${unknownField}'`);
  const columns = parseColumns(body["columns"]);
  if (!columns.ok) return columns;
  const byName = new Map(columns.value.map((column) => [column.name, column]));
  const primaryKey = parseKeyList(body["primaryKey"], "primaryKey", byName);
  if (!primaryKey.ok) return primaryKey;
  const bucketKey = parseBucketKey(body["bucketKey"], primaryKey.value, columns.value, byName);
  if (!bucketKey.ok) return bucketKey;
  const buckets = body["buckets"]; // D11
  if (typeof buckets !== "number" || !Number.isInteger(buckets) || buckets < MIN_BUCKETS || buckets > MAX_BUCKETS) {
    return invalid("buckets", `buckets must be an integer from ${MIN_BUCKETS} to ${MAX_BUCKETS}`);
  }
  const partitionBy = parsePartitionBy(body["partitionBy"], primaryKey.value, byName);
  if (!partitionBy.ok) return partitionBy;
  return ok({
    columns: columns.value,
    primaryKey: primaryKey.value,
    bucketKey: bucketKey.value,
    buckets,
    partitionBy: partitionBy.value,
  });
}

/** D15: a repeated PUT with the same canonical definition is 200, a different one 409. */
export function compareDefinitions(existing: TableDefinition, requested: TableDefinition): "same" | "different" {
  return canonicalJson(existing) === canonicalJson(requested) ? "same" : "different";
}

/** The definition as one JSON text with a fixed field order (for storage and for comparison). */
function canonicalJson(definition: TableDefinition): string {
  return JSON.stringify({
    columns: definition.columns.map(({ name, type, nullable }) => ({ name, type, nullable })),
    primaryKey: definition.primaryKey,
    bucketKey: definition.bucketKey,
    buckets: definition.buckets,
    partitionBy: definition.partitionBy,
  });
}

/**
 * D16: the bucket key is exactly the first k primary-key columns, so a prefix of the primary key that
 * covers them (and the partition column, if any) names one bucket: the prefix lookup asks one leader.
 */
export function bucketKeyIsPrefixOfPrimaryKey(definition: TableDefinition): boolean {
  const { primaryKey, bucketKey } = definition;
  if (primaryKey === null || bucketKey === null) return false;
  return bucketKey.every((name, index) => primaryKey[index] === name);
}

function isKeyColumnType(type: ColumnType): type is KeyColumnType {
  return type === "string" || type === "int" || type === "bool";
}

function parseColumns(raw: unknown): Parsed<ColumnDefinition[]> {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_COLUMNS) {
    return invalid("columns", `columns must be an array of 1 to ${MAX_COLUMNS} columns`);
  }
  const columns: ColumnDefinition[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of raw.entries()) {
    const field = `columns[${index}]`;
    if (!isPlainObject(entry)) return invalid(field, "a column is a JSON object");
    const unknownField = Object.keys(entry).find((key) => !COLUMN_FIELDS.has(key));
    if (unknownField !== undefined) return invalid(`${field}.${unknownField}`, `unknown field '${unknownField}'`);
    const { name, type, nullable } = entry;
    if (typeof name !== "string" || name.length > MAX_COLUMN_NAME_LENGTH || !COLUMN_NAME.test(name)) {
      return invalid(`${field}.name`, `a column name is 1 to ${MAX_COLUMN_NAME_LENGTH} of [A-Za-z0-9_], not starting with a digit`);
    }
    if (seen.has(name)) return invalid(`${field}.name`, `column '${name}' is defined twice`);
    seen.add(name);
    if (typeof type !== "string" || !(COLUMN_TYPES as readonly string[]).includes(type)) {
      return invalid(`${field}.type`, `a column type is one of ${COLUMN_TYPES.join(", ")}`);
    }
    if (nullable !== undefined && typeof nullable !== "boolean") {
      return invalid(`${field}.nullable`, "nullable is true or false");
    }
    columns.push({ name, type: type as ColumnType, nullable: nullable ?? false });
  }
  return ok(columns);
}

/** D4..D6: a key list: distinct existing columns of a key type, not nullable. `undefined` is no key. */
function parseKeyList(raw: unknown, field: string, byName: ReadonlyMap<string, ColumnDefinition>): Parsed<string[] | null> {
  if (raw === undefined) return ok(null);
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_KEY_COLUMNS) {
    return invalid(field, `${field} must be an array of 1 to ${MAX_KEY_COLUMNS} column names`);
  }
  const names: string[] = [];
  for (const [index, name] of raw.entries()) {
    const at = `${field}[${index}]`;
    const column = typeof name === "string" ? byName.get(name) : undefined;
    if (column === undefined) return invalid(at, `${field} names a column that is not defined`);
    if (names.includes(column.name)) return invalid(at, `column '${column.name}' appears twice in ${field}`);
    if (!isKeyColumnType(column.type)) {
      return invalid(at, `${field} column '${column.name}' must be string, int or bool, not ${column.type}`);
    }
    if (column.nullable) return invalid(at, `${field} column '${column.name}' must not be nullable`);
    names.push(column.name);
  }
  return ok(names);
}

/** D7..D10: default the primary key; a subset of it; canonical order = primary-key (or column) order. */
function parseBucketKey(
  raw: unknown,
  primaryKey: readonly string[] | null,
  columns: readonly ColumnDefinition[],
  byName: ReadonlyMap<string, ColumnDefinition>,
): Parsed<string[] | null> {
  const parsed = parseKeyList(raw, "bucketKey", byName);
  if (!parsed.ok || parsed.value === null) return parsed.ok ? ok(primaryKey === null ? null : [...primaryKey]) : parsed;
  const chosen = new Set(parsed.value);
  if (primaryKey === null) return ok(columns.map((column) => column.name).filter((name) => chosen.has(name)));
  const outside = parsed.value.find((name) => !primaryKey.includes(name));
  if (outside !== undefined) return invalid("bucketKey", `bucket key column '${outside}' is not in the primary key`);
  return ok(primaryKey.filter((name) => chosen.has(name)));
}

/** D12, D13: one existing, non-nullable string or int column; in the primary key of a keyed table. */
function parsePartitionBy(
  raw: unknown,
  primaryKey: readonly string[] | null,
  byName: ReadonlyMap<string, ColumnDefinition>,
): Parsed<string | null> {
  if (raw === undefined) return ok(null);
  const column = typeof raw === "string" ? byName.get(raw) : undefined;
  if (column === undefined) return invalid("partitionBy", "partitionBy names a column that is not defined");
  if ((column.type !== "string" && column.type !== "int") || column.nullable) {
    return invalid("partitionBy", `partition column '${column.name}' must be a non-nullable string or int`);
  }
  if (primaryKey !== null && !primaryKey.includes(column.name)) {
    return invalid("partitionBy", `partition column '${column.name}' must be in the primary key`);
  }
  return ok(column.name);
}

function invalid<T = never>(field: string, message: string): Parsed<T> {
  return fail("invalid", message, { field });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
