// Ops, keys and prefixes checked and placed in buckets with the core's own functions (validateRow,
// bucketOf, partitionKey), so the client's split is the server's: a row, a delete's key and a lookup's key
// land in the same bucket of the same partition however they are sent. A refusal here is `invalid` and
// nothing is sent.
import { bucketKeyIsPrefixOfPrimaryKey, type TableDefinition } from "../core/tables/definition.ts";
import { bucketOf, partitionKey, partitionValue } from "../core/tables/bucketing.ts";
import { bucketIdText, type BucketId } from "../core/tables/requests.ts";
import { validateRow, type Row } from "../core/tables/rows.ts";
import { MAX_OPS_PER_BATCH } from "../core/tables/tablet-write.ts";
import { invalidInput, localRefusal, TableClientError } from "./errors.ts";

type Input = Readonly<Record<string, unknown>>;

/** One op of a write: `upsert` and `delete` (by primary key) in a primary-key table, `append` in a log table. */
export type WriteOp = { readonly upsert: Input } | { readonly delete: Input } | { readonly append: Input };

/** An op as it goes on the wire: its row or key in the core's canonical form. */
type WireOp = { readonly upsert: Row } | { readonly delete: Row } | { readonly append: Row };

/** The ops of one bucket, and the partition's value (null without partitions) for adding the partition. */
export interface BucketPart {
  readonly id: BucketId;
  readonly partitionValue: string | number | null;
  readonly ops: WireOp[];
}

/** The ops of each bucket (by bucketIdText), in the order they were given (the order a bucket applies them in). */
export function splitOps(definition: TableDefinition, ops: readonly WriteOp[]): Map<string, BucketPart> {
  const parts = new Map<string, BucketPart>();
  ops.forEach((op, opIndex) => {
    const { wire, row } = checkOp(definition, op, opIndex);
    const id = placeOf(definition, row);
    const key = bucketIdText(id);
    const part = parts.get(key) ?? { id, partitionValue: partitionValue(definition, row), ops: [] };
    part.ops.push(wire);
    parts.set(key, part);
  });
  for (const [key, part] of parts) {
    if (part.ops.length > MAX_OPS_PER_BATCH) {
      throw new TableClientError({
        code: "too_large",
        message: `bucket ${key} would get ${part.ops.length} ops, more than ${MAX_OPS_PER_BATCH} in one batch`,
        status: null,
        retryable: false,
        details: { limit: "MAX_OPS_PER_BATCH", max: MAX_OPS_PER_BATCH, ...part.id },
      });
    }
  }
  return parts;
}

/** Where a checked row (or a key, a partial row holding the primary key) goes. */
function placeOf(definition: TableDefinition, row: Row): BucketId {
  return { partition: partitionKey(definition, row), bucket: bucketOf(definition, row) };
}

/** The op on the wire, and the row (or key) that places it. */
function checkOp(definition: TableDefinition, op: WriteOp, opIndex: number): { wire: WireOp; row: Row } {
  const isLog = definition.primaryKey === null;
  if ("append" in op) {
    if (!isLog) throw invalidInput("a primary-key table takes upsert and delete ops only", { opIndex });
    const row = checked(validateRow(definition, op.append), { opIndex });
    return { wire: { append: row }, row };
  }
  if (isLog) throw invalidInput("a log table takes append ops only", { opIndex });
  if ("upsert" in op) {
    const row = checked(validateRow(definition, op.upsert), { opIndex });
    return { wire: { upsert: row }, row };
  }
  if ("delete" in op) {
    const key = checkKey(definition, op.delete, { opIndex });
    return { wire: { delete: key }, row: key };
  }
  throw invalidInput("an op is one of upsert, delete, append", { opIndex });
}

/**
 * A primary key given as an object of exactly the key columns, checked by validateRow over the key columns
 * alone (types, lengths, no other column); the bucket key is part of the primary key, so bucketOf reads it.
 */
function checkKey(definition: TableDefinition, raw: Input, where: Readonly<Record<string, number>>): Row {
  const primaryKey = definition.primaryKey;
  if (primaryKey === null) throw invalidInput("a log table has no primary key to look up", where);
  return checked(validateRow(onlyColumns(definition, primaryKey), raw), where);
}

/** Each key's bucket, in request order. */
export function bucketsOfKeys(definition: TableDefinition, keys: readonly Input[]): { key: Row; id: BucketId }[] {
  return keys.map((raw, index) => {
    const key = checkKey(definition, raw, { index });
    return { key, id: placeOf(definition, key) };
  });
}

/**
 * A prefix: the first k primary-key columns, checked. Its bucket when it names one (the bucket key is the
 * first columns of the primary key and the prefix covers them, and the partition column), else null: the
 * table-level route decides.
 */
export function checkPrefix(definition: TableDefinition, raw: Input): { prefix: Row; id: BucketId | null } {
  const primaryKey = definition.primaryKey;
  if (primaryKey === null) throw invalidInput("a log table has no primary key to scan by");
  const given = Object.keys(raw);
  const columns = primaryKey.slice(0, given.length);
  if (given.length === 0 || given.length > primaryKey.length || !columns.every((name) => Object.hasOwn(raw, name))) {
    throw invalidInput(`a prefix is the first columns of the primary key (${primaryKey.join(", ")})`, { field: "prefix" });
  }
  const prefix = checked(validateRow(onlyColumns(definition, columns), raw), null);
  const bucketKey = definition.bucketKey ?? [];
  const coversPartition = definition.partitionBy === null || columns.includes(definition.partitionBy);
  const namesOne = bucketKeyIsPrefixOfPrimaryKey(definition) && bucketKey.length <= columns.length && coversPartition;
  return { prefix, id: namesOne ? placeOf(definition, prefix) : null };
}

/** The definition narrowed to some of its columns (keys, bucket count and partitioning unchanged). */
function onlyColumns(definition: TableDefinition, names: readonly string[]): TableDefinition {
  return { ...definition, columns: definition.columns.filter((column) => names.includes(column.name)) };
}

/** The checked value, or the core's refusal with where it was (`opIndex` of an op, `index` of a key). */
function checked(parsed: ReturnType<typeof validateRow>, where: Readonly<Record<string, number>> | null): Row {
  if (parsed.ok) return parsed.value;
  const error = localRefusal(parsed.error);
  if (where === null) throw error;
  const position = Object.entries(where).map(([name, value]) => `${name} ${value}`).join(", ");
  throw new TableClientError({
    code: error.code,
    message: `${position}: ${error.message}`,
    status: null,
    retryable: false,
    details: { ...error.details, ...where },
  });
}
