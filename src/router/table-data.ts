// The table-addressed data requests at the router (docs/tables.md, "HTTP API"): `write`, `lookup` and
// `prefix`, split by bucket (partition and number, table Q) and sent to the leaders (table-parts.ts),
// never redirected. A write to a partition value the table has not seen yet first has the coordinator add
// the partition (AddPartition); a lookup or scan of such a partition finds nothing without asking anyone.
import { domainError } from "../core/errors.ts";
import type { TableLookup } from "../core/meta/view.ts";
import { isPlainObject, type TableDefinition } from "../core/tables/definition.ts";
import { minOffsetFor, partitionValueOfKey } from "../core/tables/partition-segment.ts";
import { bucketIdText, compareBucketIds, parseLookupKeys, parsePrefixBody, parseWriteBody, type BucketId } from "../core/tables/requests.ts";
import type { Env } from "../env.ts";
import { errorResponse } from "../http/responses.ts";
import { askCoordinator } from "./table-coordinator.ts";
import { cachedTable, json, retryHeaders } from "./table-common.ts";
import { bucketsById, sendParts, type Part, type PartAnswer } from "./table-parts.ts";

/** New partitions one write may add (each is a metadata log command): more is 413, split the write. */
const MAX_NEW_PARTITIONS_PER_WRITE = 16;

/** POST write: split by bucket, each part to its leader; atomic per bucket, not across buckets. */
export async function writeTable(env: Env, origin: string, headers: Headers, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const ops = parseWriteBody(definition, body);
  if (!ops.ok) return errorResponse(ops.error);
  const raw = body["ops"] as unknown[];
  const groups = new Map<string, { id: BucketId; ops: unknown[]; firstOp: number }>();
  ops.value.forEach((op, i) => {
    const key = bucketIdText(op);
    const group = groups.get(key) ?? { id: { partition: op.partition, bucket: op.bucket }, ops: [], firstOp: i };
    group.ops.push(raw[i]);
    groups.set(key, group);
  });
  // Deletes in a partition the table does not have change nothing: such a part is not sent, nor its partition added.
  const known = bucketsById(table);
  const needed = [...groups.values()].filter((g) => known.has(bucketIdText(g.id)) || g.ops.some((op) => !isDelete(op)));
  const added = await addMissingPartitions(env, table, definition, needed.map((g) => ({ id: g.id, rawOp: g.ops.find((op) => !isDelete(op)) ?? raw[g.firstOp] })));
  if (added instanceof Response) return added;
  const parts = needed.sort((a, b) => compareBucketIds(a.id, b.id)).map((g): Part => ({ ...g.id, body: { ops: g.ops } }));
  const answers = await sendParts(env, origin, added, added.table!.name, "write", parts, headers);
  const done = answers.filter((a): a is PartAnswer & { ok: true } => a.ok).map((a) => a.body);
  const failed = answers.filter((a): a is PartAnswer & { ok: false } => !a.ok);
  if (failed.length === 0) return json(200, { buckets: done });
  const first = failed[0]!;
  // Each failed part names its partition as users know it (its value), as the leaders' answers do.
  const failures = failed.map((f) => ({ ...(f.partition === null ? {} : { partition: partitionValueOfKey(f.partition) }), bucket: f.bucket, error: f.error }));
  return json(first.status, { buckets: done, failed: failures, error: first.error }, retryHeaders(first));
}

/**
 * The table with every partition these parts name: the missing ones added by the coordinator (at most
 * MAX_NEW_PARTITIONS_PER_WRITE), then the table looked up again; or the error answer.
 */
async function addMissingPartitions(env: Env, table: TableLookup, definition: TableDefinition, parts: readonly { id: BucketId; rawOp: unknown }[]): Promise<TableLookup | Response> {
  const column = definition.partitionBy;
  if (column === null) return table;
  const known = bucketsById(table);
  const missing = new Map<string, string | number>();
  for (const { id, rawOp } of parts) {
    if (id.partition !== null && !known.has(bucketIdText(id))) missing.set(id.partition, partitionValueOf(rawOp, column));
  }
  if (missing.size === 0) return table;
  if (missing.size > MAX_NEW_PARTITIONS_PER_WRITE) {
    return errorResponse(domainError("too_large", "the write adds too many new partitions at once", { limit: "MAX_NEW_PARTITIONS_PER_WRITE", max: MAX_NEW_PARTITIONS_PER_WRITE }));
  }
  const name = table.table!.name;
  for (const value of missing.values()) {
    const answer = await askCoordinator(env, (node) => node.addPartition(name, value));
    if (!answer.ok) return errorResponse(answer.error);
  }
  return cachedTable(env, name, true);
}

function isDelete(op: unknown): boolean {
  return isPlainObject(op) && Object.hasOwn(op, "delete");
}

/** The partition column's value in a checked op (`{upsert: row}`, `{append: row}` or `{delete: key}`). */
function partitionValueOf(rawOp: unknown, column: string): string | number {
  const inner = isPlainObject(rawOp) ? Object.values(rawOp)[0] : undefined;
  return (isPlainObject(inner) ? inner[column] : undefined) as string | number;
}

/**
 * POST lookup: keys grouped by bucket, each group asked of its leader, the rows put back in request order.
 * `minOffsets` is keyed by bucketLabel: `"<bucket>"`, or `"<partition value>/<bucket>"` in a partition
 * (minOffsetFor also reads the old `"<partition key>/<bucket>"`).
 */
export async function lookupRows(env: Env, origin: string, headers: Headers, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const keys = parseLookupKeys(definition, body["keys"]);
  if (!keys.ok) return errorResponse(keys.error);
  const minOffsets = isPlainObject(body["minOffsets"]) ? body["minOffsets"] : {};
  const raw = body["keys"] as unknown[];
  const known = bucketsById(table);
  const groups = new Map<string, { id: BucketId; at: number[] }>();
  keys.value.forEach((key, i) => {
    const text = bucketIdText(key);
    // A partition the table does not have holds no row: its keys stay null.
    if (!known.has(text)) return;
    const group = groups.get(text) ?? { id: { partition: key.partition, bucket: key.bucket }, at: [] };
    group.at.push(i);
    groups.set(text, group);
  });
  const list = [...groups];
  const parts = list.map(([, { id, at }]): Part => ({
    ...id,
    body: { keys: at.map((i) => raw[i]), ...minOffsetOf(minOffsets, id) },
  }));
  const answers = await sendParts(env, origin, table, table.table!.name, "lookup", parts, headers);
  const failed = answers.find((a) => !a.ok);
  if (failed !== undefined && !failed.ok) return json(failed.status, { error: failed.error }, retryHeaders(failed));
  const rows: unknown[] = new Array(raw.length).fill(null);
  answers.forEach((answer, p) => {
    const found = answer.ok ? ((answer.body as { rows?: unknown[] } | null)?.rows ?? []) : [];
    list[p]![1].at.forEach((i, k) => (rows[i] = found[k] ?? null));
  });
  return json(200, { rows });
}

function minOffsetOf(minOffsets: Record<string, unknown>, id: BucketId): { minOffset?: unknown } {
  const offset = minOffsetFor(minOffsets, id);
  return offset === undefined ? {} : { minOffset: offset };
}

/** POST prefix: the one bucket the prefix names answers (a partition the table does not have: no rows). */
export async function prefixRows(env: Env, origin: string, headers: Headers, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const { minOffset: _minOffset, ...query } = body;
  const parsed = parsePrefixBody(definition, query);
  if (!parsed.ok) return errorResponse(parsed.error);
  const id: BucketId = { partition: parsed.value.partition, bucket: parsed.value.bucket };
  if (!bucketsById(table).has(bucketIdText(id))) return json(200, { rows: [], cursor: null });
  const [answer] = await sendParts(env, origin, table, table.table!.name, "prefix", [{ ...id, body }], headers);
  if (answer === undefined || !answer.ok) return json(answer?.status ?? 503, { error: answer?.ok === false ? answer.error : null }, answer === undefined ? {} : retryHeaders(answer));
  return json(200, answer.body);
}
