// The bodies of table requests (docs/tables.md, table Q): write ops, lookup keys and a prefix, checked
// against the table's definition and resolved to encoded keys and buckets. The router splits a write by
// these buckets and a leader checks that every op of a bucket-addressed write is its own, so both sides
// and the TypeScript client split the same way (bucketOf over the same key).
import { fail, ok, type Parsed } from "../protocol/parsed.ts";
import { bucketOf, partitionKey } from "./bucketing.ts";
import { bucketKeyIsPrefixOfPrimaryKey, isPlainObject, MAX_KEY_COLUMNS, type TableDefinition } from "./definition.ts";
import { encodeKey, type KeyValue } from "./key-encoding.ts";
import { primaryKeyOf, validateRow, type Row } from "./rows.ts";
import { MAX_LOOKUP_KEYS, MAX_SCAN_LIMIT } from "./tablet-read.ts";
import { MAX_OPS_PER_BATCH, type WriteOp } from "./tablet-write.ts";

/** A bucket of a table: its partition's key (encodePartition; null when the table is not partitioned) and its number. */
export interface BucketId {
  readonly partition: string | null;
  readonly bucket: number;
}

/** One op of a write, checked: its core op and its bucket. */
export interface BucketOp extends BucketId {
  readonly op: WriteOp;
}

/** A key of a lookup: encoded, and the bucket that holds it. */
export interface BucketKey extends BucketId {
  readonly key: string;
}

/** One text per bucket of a table, for maps (its partition by key): `<bucket>` or `<partition key>/<bucket>`. Answers and `minOffsets` use bucketLabel (partition-segment.ts). */
export function bucketIdText(id: BucketId): string {
  return id.partition === null ? String(id.bucket) : `${id.partition}/${id.bucket}`;
}

/** Buckets in partition-key order, then bucket order (the order a split write's parts go out in). */
export function compareBucketIds(a: BucketId, b: BucketId): number {
  if (a.partition !== b.partition) return (a.partition ?? "") < (b.partition ?? "") ? -1 : 1;
  return a.bucket - b.bucket;
}

/** Where a row (or a key as a partial row holding the primary key) goes: its partition and bucket. */
function placeOf(definition: TableDefinition, row: Row): BucketId {
  return { partition: partitionKey(definition, row), bucket: bucketOf(definition, row) };
}

/** The default page of a prefix scan. */
const DEFAULT_SCAN_LIMIT = 100;
/** Longest cursor: an encoded key of MAX_KEY_COLUMNS strings of MAX_KEY_STRING_LENGTH (2,562 characters each). */
const MAX_CURSOR_LENGTH = MAX_KEY_COLUMNS * 2_600;

/**
 * Q3: an object of exactly the given key columns, each valid for its column (a partial row), as a tuple
 * in `columns` order.
 */
function parseKeyObject(definition: TableDefinition, raw: unknown, columns: readonly string[], field: string): Parsed<KeyValue[]> {
  if (!isPlainObject(raw)) return fail("invalid", `${field} is a JSON object of key columns`, { field });
  const extra = Object.keys(raw).find((name) => !columns.includes(name));
  if (extra !== undefined) return fail("invalid", `'${extra}' is not a key column here`, { field: `${field}.${extra}` });
  const tuple: KeyValue[] = [];
  for (const name of columns) {
    const column = definition.columns.find((c) => c.name === name);
    const value: unknown = Object.hasOwn(raw, name) ? raw[name] : undefined;
    // Key columns are non-nullable string, int or bool: check as a one-column row.
    const checked = column === undefined ? null : validateRow({ ...definition, columns: [column] }, { [name]: value });
    if (checked === null || !checked.ok) return fail("invalid", `key column '${name}' is missing or not valid`, { field: `${field}.${name}` });
    tuple.push(checked.value[name] as KeyValue);
  }
  return ok(tuple);
}

function keyRow(columns: readonly string[], tuple: readonly KeyValue[]): Row {
  return Object.fromEntries(columns.map((name, i) => [name, tuple[i]!]));
}

/** Q1: one op `{upsert: row}`, `{delete: key}` or `{append: row}`; the kind must suit the table (W7 is the core's). */
function parseOp(definition: TableDefinition, raw: unknown, index: number): Parsed<BucketOp> {
  const field = `ops[${index}]`;
  if (!isPlainObject(raw) || Object.keys(raw).length !== 1) {
    return fail("invalid", `${field} is an object with one of upsert, delete, append`, { field, opIndex: index });
  }
  const [kind] = Object.keys(raw) as [string];
  const primaryKey = definition.primaryKey;
  if (kind === "delete") {
    if (primaryKey === null) return fail("invalid", "a log table takes append ops only", { field, opIndex: index });
    const tuple = parseKeyObject(definition, raw[kind], primaryKey, `${field}.delete`);
    if (!tuple.ok) return tuple;
    return ok({ ...placeOf(definition, keyRow(primaryKey, tuple.value)), op: { delete: encodeKey(tuple.value) } });
  }
  if (kind !== "upsert" && kind !== "append") return fail("invalid", `unknown op '${kind}'`, { field, opIndex: index });
  if ((kind === "upsert") !== (primaryKey !== null)) {
    const reason = primaryKey === null ? "a log table takes append ops only" : "a primary-key table takes upsert and delete ops only";
    return fail("invalid", reason, { field, opIndex: index });
  }
  const row = validateRow(definition, raw[kind]);
  if (!row.ok) return fail("invalid", row.error.message, { ...row.error.details, opIndex: index });
  const place = placeOf(definition, row.value);
  if (kind === "append") return ok({ ...place, op: { append: row.value } });
  return ok({ ...place, op: { upsert: row.value, key: encodeKey(primaryKeyOf(definition, row.value)!) } });
}

/** Q1-Q2: `{"ops": [...]}`, 1 to MAX_OPS_PER_BATCH ops. */
export function parseWriteBody(definition: TableDefinition, body: unknown): Parsed<BucketOp[]> {
  if (!isPlainObject(body) || !Array.isArray(body["ops"]) || Object.keys(body).length !== 1) {
    return fail("invalid", 'a write is {"ops": [...]}', { field: "ops" });
  }
  const raw: unknown[] = body["ops"];
  if (raw.length === 0) return fail("invalid", "a write has at least one op", { field: "ops" });
  if (raw.length > MAX_OPS_PER_BATCH) {
    return fail("too_large", "too many ops in one write", { limit: "MAX_OPS_PER_BATCH", max: MAX_OPS_PER_BATCH });
  }
  const ops: BucketOp[] = [];
  for (const [index, op] of raw.entries()) {
    const parsed = parseOp(definition, op, index);
    if (!parsed.ok) return parsed;
    ops.push(parsed.value);
  }
  return ok(ops);
}

/** Q5: `keys` of a lookup, 1 to MAX_LOOKUP_KEYS primary keys of a primary-key table. */
export function parseLookupKeys(definition: TableDefinition, raw: unknown): Parsed<BucketKey[]> {
  const primaryKey = definition.primaryKey;
  if (primaryKey === null) return fail("invalid", "a log table has no keys to look up (read its changelog)", { field: "keys" });
  if (!Array.isArray(raw) || raw.length === 0) return fail("invalid", "keys is a non-empty array", { field: "keys" });
  if (raw.length > MAX_LOOKUP_KEYS) return fail("too_large", "too many keys in one lookup", { limit: "MAX_LOOKUP_KEYS", max: MAX_LOOKUP_KEYS });
  const keys: BucketKey[] = [];
  for (const [index, value] of (raw as unknown[]).entries()) {
    const tuple = parseKeyObject(definition, value, primaryKey, `keys[${index}]`);
    if (!tuple.ok) return tuple;
    keys.push({ ...placeOf(definition, keyRow(primaryKey, tuple.value)), key: encodeKey(tuple.value) });
  }
  return ok(keys);
}

export interface PrefixQuery extends BucketId {
  /** The encoded prefix: every key of the rows asked for starts with it (K4). */
  readonly prefix: string;
  readonly limit: number;
  readonly after: string | null;
}

/**
 * What a prefix must hold, said right when the bucket key is the whole primary key (then there is no range:
 * "the first 1 to 1" reads as a typo): every column, named.
 */
function prefixColumnsRule(fewest: number, primaryKey: readonly string[]): string {
  if (fewest < primaryKey.length) return `prefix holds the first ${fewest} to ${primaryKey.length} primary-key columns`;
  const names = primaryKey.map((name) => `'${name}'`).join(", ");
  return primaryKey.length === 1 ? `prefix holds the primary-key column ${names}` : `prefix holds all ${primaryKey.length} primary-key columns (${names})`;
}

/**
 * Q6-Q7: `{prefix, limit?, after?}` where `prefix` holds the first k primary-key columns, k covering the
 * bucket key (D16) and the partition column (Q8), so one bucket answers. `after` is a cursor a page gave (an
 * encoded key).
 */
export function parsePrefixBody(definition: TableDefinition, body: unknown): Parsed<PrefixQuery> {
  const primaryKey = definition.primaryKey;
  if (primaryKey === null || !bucketKeyIsPrefixOfPrimaryKey(definition)) {
    return fail("invalid", "prefix scans need a primary key whose first columns are the bucket key", { field: "prefix" });
  }
  if (!isPlainObject(body)) return fail("invalid", "a prefix scan is a JSON object", { field: "body" });
  const extra = Object.keys(body).find((name) => name !== "prefix" && name !== "limit" && name !== "after");
  if (extra !== undefined) return fail("invalid", `unknown field '${extra}'`, { field: extra });
  const given = isPlainObject(body["prefix"]) ? Object.keys(body["prefix"]).length : -1;
  const bucketKeyLength = definition.bucketKey?.length ?? primaryKey.length;
  if (given < bucketKeyLength || given > primaryKey.length) {
    return fail("invalid", prefixColumnsRule(bucketKeyLength, primaryKey), { field: "prefix" });
  }
  const columns = primaryKey.slice(0, given);
  if (definition.partitionBy !== null && !columns.includes(definition.partitionBy)) {
    return fail("invalid", `prefix must hold the partition column '${definition.partitionBy}'`, { field: "prefix" });
  }
  const tuple = parseKeyObject(definition, body["prefix"], columns, "prefix");
  if (!tuple.ok) return tuple;
  const limit = body["limit"] ?? DEFAULT_SCAN_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_SCAN_LIMIT) {
    return fail("invalid", `limit must be an integer from 1 to ${MAX_SCAN_LIMIT}`, { field: "limit" });
  }
  const after = body["after"] ?? null;
  if (after !== null && (typeof after !== "string" || after.length > MAX_CURSOR_LENGTH)) return fail("invalid", "after is a cursor a page gave", { field: "after" });
  const prefix = encodeKey(tuple.value);
  return ok({ ...placeOf(definition, keyRow(columns, tuple.value)), prefix, limit, after });
}
