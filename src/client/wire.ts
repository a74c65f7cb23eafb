// The answers of the table API as the client reads them: each body checked for the fields the client
// uses (the server is a separate program; a body of the wrong shape is `bad_response`, never a crash
// later), the canonical definition parsed by the same core function the server uses.
import type { Row } from "../core/tables/rows.ts";
import { isPlainObject, parseTableDefinition, type TableDefinition } from "../core/tables/definition.ts";
import { badResponse, type TableClientError } from "./errors.ts";

/** One bucket of `GET /v1/table/<name>`: its leader and how far its stream and tablet are. */
export interface BucketInfo {
  /** The partition's value in a partitioned table; null otherwise. */
  readonly partition: string | number | null;
  readonly bucket: number;
  readonly leader: string | null;
  /** The leader's own address (`http://host/n/<node>`); bucket-addressed requests go under it. */
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number;
  readonly nextOffset: string | null;
  readonly rows: number | null;
  readonly snapshotOffset: string | null;
}

export interface TableDescription {
  readonly name: string;
  readonly definition: TableDefinition;
  readonly buckets: readonly BucketInfo[];
}

export interface TableSummary {
  readonly name: string;
  /** All buckets, of every partition. */
  readonly buckets: number;
  /** How many partitions a partitioned table has; null for a table without partitions. */
  readonly partitions: number | null;
  readonly kind: "primary-key" | "log";
}

/** The facts of a `not_leader` answer's details: who leads the bucket now. */
export interface LeaderFacts {
  readonly leader: string;
  readonly leaderAddr: string;
  readonly leaderEpoch: number;
}

export interface PrefixPage {
  readonly rows: readonly Row[];
  /** The `after` of the next page; null on the last page. */
  readonly cursor: string | null;
}

type Fields = Record<string, unknown>;

function object(body: unknown, what: string): Fields {
  if (!isPlainObject(body)) throw shape(`${what} is not a JSON object`);
  return body;
}

function shape(message: string): TableClientError {
  return badResponse(`unexpected answer: ${message}`, null);
}

function field<T>(fields: Fields, name: string, check: (value: unknown) => value is T, what: string): T {
  const value = fields[name];
  if (!check(value)) throw shape(`${what}.${name} is missing or of the wrong type`);
  return value;
}

const isString = (value: unknown): value is string => typeof value === "string";
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === "string";
const isCountOrNull = (value: unknown): value is number | null => value === null || isCount(value);
const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
const isRow = (value: unknown): value is Row => isPlainObject(value);

export function parseDescription(body: unknown): TableDescription {
  const fields = object(body, "table");
  // The canonical form spells absent keys as null; the parser takes them absent.
  const rawDefinition = Object.fromEntries(Object.entries(object(fields["definition"], "table.definition")).filter(([, value]) => value !== null));
  const definition = parseTableDefinition(rawDefinition);
  if (!definition.ok) throw shape(`table.definition: ${definition.error.message}`);
  const buckets = field(fields, "buckets", isArray, "table").map((entry, index) => parseBucketInfo(entry, `table.buckets[${index}]`));
  // Without partitions: one entry per bucket in bucket order. With them: a partition's entries together, in bucket order.
  const partitioned = definition.value.partitionBy !== null;
  const count = definition.value.buckets;
  const wellFormed = partitioned
    ? buckets.length % count === 0 && buckets.every((entry, index) => entry.partition !== null && entry.bucket === index % count && entry.partition === buckets[index - entry.bucket]!.partition)
    : buckets.length === count && buckets.every((entry, index) => entry.partition === null && entry.bucket === index);
  if (!wellFormed) throw shape("table.buckets is not one entry per bucket (of each partition), in bucket order");
  return { name: field(fields, "name", isString, "table"), definition: definition.value, buckets };
}

function parseBucketInfo(body: unknown, what: string): BucketInfo {
  const fields = object(body, what);
  const partition = fields["partition"];
  if (partition !== undefined && typeof partition !== "string" && !Number.isSafeInteger(partition)) throw shape(`${what}.partition is neither a string nor an int`);
  return {
    partition: (partition ?? null) as string | number | null,
    bucket: field(fields, "bucket", isCount, what),
    leader: field(fields, "leader", isStringOrNull, what),
    leaderAddr: field(fields, "leaderAddr", isStringOrNull, what),
    leaderEpoch: field(fields, "leaderEpoch", isCount, what),
    nextOffset: fields["nextOffset"] === undefined ? null : field(fields, "nextOffset", isStringOrNull, what),
    rows: fields["rows"] === undefined ? null : field(fields, "rows", isCountOrNull, what),
    snapshotOffset: fields["snapshotOffset"] === undefined ? null : field(fields, "snapshotOffset", isStringOrNull, what),
  };
}

export function parseTableList(body: unknown): TableSummary[] {
  const tables = field(object(body, "list"), "tables", isArray, "list");
  return tables.map((entry, index) => {
    const what = `list.tables[${index}]`;
    const fields = object(entry, what);
    const kind = fields["kind"];
    if (kind !== "primary-key" && kind !== "log") throw shape(`${what}.kind is neither primary-key nor log`);
    const partitions = fields["partitions"] === undefined ? null : field(fields, "partitions", isCountOrNull, what);
    return { name: field(fields, "name", isString, what), buckets: field(fields, "buckets", isCount, what), partitions, kind };
  });
}

/** The 200 body of a bucket-addressed write (`partition`: the partition's value, in a partitioned table). */
export function parseBucketWrite(body: unknown): { partition: string | number | null; bucket: number; leaderEpoch: number; nextOffset: string; count: number } {
  const fields = object(body, "write");
  const partition = fields["partition"];
  if (partition !== undefined && typeof partition !== "string" && !Number.isSafeInteger(partition)) throw shape("write.partition is neither a string nor an int");
  return {
    partition: (partition ?? null) as string | number | null,
    bucket: field(fields, "bucket", isCount, "write"),
    leaderEpoch: field(fields, "leaderEpoch", isCount, "write"),
    nextOffset: field(fields, "nextOffset", isString, "write"),
    count: field(fields, "count", isCount, "write"),
  };
}

/** A lookup's rows: exactly one answer (a row or null) per key asked. */
export function parseLookupRows(body: unknown, expected: number): (Row | null)[] {
  const rows = field(object(body, "lookup"), "rows", isArray, "lookup");
  if (rows.length !== expected) throw shape(`lookup answered ${rows.length} rows for ${expected} keys`);
  return rows.map((row, index) => {
    if (row !== null && !isRow(row)) throw shape(`lookup.rows[${index}] is neither a row nor null`);
    return row;
  });
}

export function parsePrefixPage(body: unknown): PrefixPage {
  const fields = object(body, "prefix");
  const rows = field(fields, "rows", isArray, "prefix");
  if (!rows.every(isRow)) throw shape("prefix.rows holds something that is not a row");
  return { rows, cursor: field(fields, "cursor", isStringOrNull, "prefix") };
}

/** The details of a `not_leader` answer, or null when they are missing (the caller re-describes). */
export function leaderFactsOf(details: Readonly<Record<string, unknown>> | undefined): LeaderFacts | null {
  if (details === undefined) return null;
  const { leader, leaderAddr, leaderEpoch } = details;
  if (typeof leader !== "string" || typeof leaderAddr !== "string" || !isCount(leaderEpoch)) return null;
  return { leader, leaderAddr, leaderEpoch };
}
