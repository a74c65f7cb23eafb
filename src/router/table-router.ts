// The table API at the router (docs/tables.md, "HTTP API"): `PUT|GET|DELETE /v1/table/<name>`,
// `GET /v1/table`, and the table-addressed `write`, `lookup` and `prefix`, split by bucket and sent to the
// leaders (table-data.ts), never redirected; `POST /v1/table/<name>/partitions` adds a partition;
// bucket-addressed requests (`/v1/table/<name>[/p/<partition value>]/bucket/<i>/...`)
// go to the bucket's leader as they are. A create is the coordinator's: the router asks its local node,
// and the lease holder when that node is not it.
import { Hono, type Context } from "hono";
import { workerLog } from "../log/logger.ts";
import { domainError } from "../core/errors.ts";
import type { TableLookup } from "../core/meta/view.ts";
import type { JsonValue } from "../core/meta/json.ts";
import { compareDefinitions, definitionJson, isPlainObject, parseTableDefinition, parseTableName, type TableDefinition } from "../core/tables/definition.ts";
import { bucketIdText, type BucketId } from "../core/tables/requests.ts";
import { checkBucketTarget, type BucketPath } from "../core/tables/bucket-paths.ts";
import { partitionColumnType, partitionSegmentMeaning } from "../core/tables/partition-segment.ts";
import { MAX_TABLE_WRITE_BYTES } from "../core/tables/tablet-write.ts";
import { formatTarget } from "../core/protocol/request-target.ts";
import { pathBelowNode, targetOf } from "../http/request-target.ts";
import { validateRow } from "../core/tables/rows.ts";
import { type Env, metaLogClient, streamNodeClient } from "../env.ts";
import { errorResponse } from "../http/responses.ts";
import { declaredLength, readAtMost } from "../subscriptions/bounded-read.ts";
import { routerSettings, toNode, wakeNodes } from "./router.ts";
import { askCoordinator } from "./table-coordinator.ts";
import { cachedTable, json, tables } from "./table-common.ts";
import { lookupRows, prefixRows, writeTable } from "./table-data.ts";
import { leadersOf, tableDescription, tableList } from "./table-describe.ts";
import { bucketsById } from "./table-parts.ts";
import type { Result } from "../core/result.ts";

type Ctx = Context<{ Bindings: Env }>;

/** A definition is small (the metadata log keeps it in every snapshot): bodies of PUT are bounded by this. */
const MAX_DEFINITION_BODY_BYTES = 64 * 1024;

export function tableRoutes(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.get("/", async (c) => json(200, await tableList(c.env)));
  app.put("/:name", (c) => withName(c, (name) => createTable(c, name)));
  app.get("/:name", (c) => withName(c, (name) => describeTable(c.env, name, 200)));
  app.delete("/:name", (c) => withName(c, (name) => dropTable(c, name)));
  const data = (handle: typeof writeTable, maxBytes?: number) => (c: Ctx) =>
    withTable(c, (table, definition, body) => handle(c.env, new URL(c.req.url).origin, c.req.raw.headers, table, definition, body), maxBytes);
  app.post("/:name/write", data(writeTable, MAX_TABLE_WRITE_BYTES));
  app.post("/:name/lookup", data(lookupRows));
  app.post("/:name/prefix", data(prefixRows));
  app.post("/:name/partitions", (c) => withTable(c, (table, definition, body) => addPartition(c, table, definition, body)));
  app.all("/:name/bucket/:bucket/:op", (c) => withName(c, (name) => toLeader(c, name)));
  app.all("/:name/p/:partition/bucket/:bucket/:op", (c) => withName(c, (name) => toLeader(c, name)));
  return app;
}

async function withName(c: Ctx, handle: (name: string) => Promise<Response>): Promise<Response> {
  const target = targetOf(c.req.raw);
  const name = parseTableName("table" in target ? target.table : "");
  if (!name.ok) return errorResponse(name.error);
  await wakeNodes(c.env);
  return handle(name.value);
}

/** A table-addressed request: the table from the cache, its definition, and the JSON body. */
async function withTable(
  c: Ctx,
  handle: (table: TableLookup, definition: TableDefinition, body: Record<string, unknown>) => Promise<Response>,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<Response> {
  return withName(c, async (name) => {
    const body = await jsonBody(c, Math.min(routerSettings(c.env).maxBodyBytes, maxBytes));
    if (!body.ok) return errorResponse(body.error);
    const table = await cachedTable(c.env, name);
    if (table.table === null) return errorResponse(domainError("not_found", "no such table", { table: name }));
    const definition = parseTableDefinition(table.table.definition);
    if (!definition.ok) return errorResponse(domainError("unavailable", "the table's recorded definition does not parse"));
    if (!isPlainObject(body.value)) return errorResponse(domainError("invalid", "the body is a JSON object", { field: "body" }));
    return handle(table, definition.value, body.value);
  });
}

async function jsonBody(c: Ctx, maxBytes: number): Promise<Result<unknown>> {
  const read = await readAtMost(c.req.raw.body, maxBytes, { declaredBytes: declaredLength(c.req.raw.headers), drainBytes: maxBytes * 4 });
  if (!read.ok) return { ok: false, error: domainError("too_large", "the request body is over the size limit", { maxBytes }) };
  try {
    return { ok: true, value: JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(read.bytes)) as unknown };
  } catch {
    return { ok: false, error: domainError("invalid", "the body is not JSON", { field: "body" }) };
  }
}

/** PUT: 201 created, 200 the same definition again, 409 another one (D15, TB2, TB3). */
async function createTable(c: Ctx, name: string): Promise<Response> {
  const body = await jsonBody(c, MAX_DEFINITION_BODY_BYTES);
  if (!body.ok) return errorResponse(body.error);
  const definition = parseTableDefinition(body.value);
  if (!definition.ok) return errorResponse(definition.error);
  const meta = metaLogClient(c.env.META_LOG);
  const existing = await meta.lookupTable(name);
  if (existing.table !== null) return answerExisting(c, name, existing, definition.value);
  const recorded = definitionJson(definition.value) as JsonValue;
  // A partitioned table has no bucket of its own: each partition brings the definition's count (AddPartition).
  const buckets = definition.value.partitionBy === null ? definition.value.buckets : 0;
  const answer = await askCoordinator(c.env, (node) => node.createTable(name, recorded, buckets));
  tables(c.env).invalidate(name);
  if (answer.ok) return describeTable(c.env, name, answer.value.created ? 201 : 200);
  if (answer.error.code === "conflict") {
    const again = await meta.lookupTable(name);
    if (again.table !== null) return answerExisting(c, name, again, definition.value);
  }
  return errorResponse(answer.error);
}

/**
 * POST /v1/table/<name>/partitions `{"value": v}`: the partition of value v, added by the coordinator when
 * the table does not have it (AddPartition; 201, else 200), answered as GET /v1/table/<name>. Writes
 * through the router add partitions themselves; the client adds one before its first bucket-addressed write.
 */
async function addPartition(c: Ctx, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const column = definition.columns.find((col) => col.name === definition.partitionBy);
  if (column === undefined) return errorResponse(domainError("invalid", "the table is not partitioned", { reason: "not_partitioned" }));
  const value = body["value"];
  if (Object.keys(body).length !== 1 || !validateRow({ ...definition, columns: [column] }, { [column.name]: value }).ok) {
    return errorResponse(domainError("invalid", `a partition is {"value": v}, v a value of column '${column.name}'`, { field: "value" }));
  }
  const name = table.table!.name;
  const answer = await askCoordinator(c.env, (node) => node.addPartition(name, value as string | number));
  tables(c.env).invalidate(name);
  return answer.ok ? describeTable(c.env, name, answer.value.created ? 201 : 200) : errorResponse(answer.error);
}

async function answerExisting(c: Ctx, name: string, existing: TableLookup, requested: TableDefinition): Promise<Response> {
  const recorded = parseTableDefinition(existing.table?.definition);
  if (recorded.ok && compareDefinitions(recorded.value, requested) === "same") return describeTable(c.env, name, 200);
  return errorResponse(domainError("conflict", "a table of that name exists with another definition", { reason: "definition_differs", table: name }));
}

/** GET: the definition and, per bucket, its leader, leader epoch, next offset, rows and snapshot offset. */
async function describeTable(env: Env, name: string, status: number): Promise<Response> {
  const described = await tableDescription(env, name);
  return described === null ? errorResponse(domainError("not_found", "no such table", { table: name })) : json(status, described);
}

/**
 * DELETE: DropTable (the table and its bucket streams leave the log: table-addressed requests stop at once),
 * then every leader removes its copies of the buckets' streams and their tablets. A leader that does not
 * answer keeps a stale copy, which it forgets when the view shows another stream under the name.
 */
async function dropTable(c: Ctx, name: string): Promise<Response> {
  const meta = metaLogClient(c.env.META_LOG);
  const lookup = await meta.lookupTable(name);
  if (lookup.table === null) return errorResponse(domainError("not_found", "no such table", { table: name }));
  const dropped = await meta.propose({ type: "DropTable", name });
  tables(c.env).invalidate(name);
  if (!dropped.ok) return errorResponse(dropped.error);
  await Promise.all(
    [...leadersOf(lookup)].map(async ([leader, ids]) => {
      try {
        await streamNodeClient(c.env.STREAM_NODE, leader).dropBuckets(ids);
      } catch (error) {
        workerLog.log("worker.error", { during: "table_drop", target: leader }, error);
      }
    }),
  );
  return json(204, null);
}

/**
 * The bucket a bucket path names, its partition segment resolved by the cached definition (table PO); null
 * when the cache cannot say (no such table or partition, a segment that is no value, the old spelling):
 * the local node then answers, from the metadata log itself.
 */
function bucketOfPath(table: TableLookup, path: BucketPath): BucketId | null {
  if (path.partition === null) return { partition: null, bucket: path.bucket };
  const definition = table.table === null ? null : parseTableDefinition(table.table.definition);
  const type = definition?.ok === true ? partitionColumnType(definition.value) : null;
  if (type === null) return null;
  const existing = table.buckets.flatMap((b) => (b.partition === null ? [] : [b.partition]));
  const meaning = partitionSegmentMeaning(type, path.partition, existing);
  return meaning.kind === "partition" ? { partition: meaning.key, bucket: path.bucket } : null;
}

/**
 * A bucket-addressed request through the router: to the bucket's leader, as it is (its answer comes back
 * as it is); a path that names no bucket goes to the local node, which answers it (404, not_leader).
 */
async function toLeader(c: Ctx, name: string): Promise<Response> {
  const url = new URL(c.req.url);
  const target = targetOf(c.req.raw);
  const path = target.kind === "bucket" ? checkBucketTarget(target) : null;
  const table = await cachedTable(c.env, name);
  const id = path === null ? null : bucketOfPath(table, path);
  const leader = id === null ? undefined : bucketsById(table).get(bucketIdText(id))?.leaderNode?.id;
  const nodeId = leader ?? routerSettings(c.env).localNodeId;
  const atNode = target.kind === "bucket" ? formatTarget({ ...target, node: nodeId }) : `/n/${encodeURIComponent(nodeId)}${pathBelowNode(target)}`;
  return toNode(c.env, nodeId, new Request(`${url.origin}${atNode}${url.search}`, c.req.raw));
}
