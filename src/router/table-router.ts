// The table API at the router (docs/tables.md, "HTTP API"): `PUT|GET|DELETE /v1/table/<name>`,
// `GET /v1/table`, and the table-addressed `write`, `lookup` and `prefix`, split by bucket and sent to the
// leaders (table-parts.ts), never redirected; bucket-addressed requests (`/v1/table/<name>/bucket/<i>/...`)
// go to the bucket's leader as they are. A create is the coordinator's: the router asks its local node,
// and the lease holder when that node is not it.
import { Hono, type Context } from "hono";
import { workerLog } from "../log/logger.ts";
import { domainError, type DomainError } from "../core/errors.ts";
import type { TableLookup } from "../core/meta/view.ts";
import { formatOffset } from "../core/protocol/offsets.ts";
import type { JsonValue } from "../core/meta/json.ts";
import { compareDefinitions, definitionJson, isPlainObject, parseTableDefinition, parseTableName, type TableDefinition } from "../core/tables/definition.ts";
import { parseLookupKeys, parsePrefixBody, parseWriteBody } from "../core/tables/requests.ts";
import { type Env, metaLogClient, streamNodeClient } from "../env.ts";
import { errorResponse } from "../http/responses.ts";
import { withSecurityHeaders } from "../http/security-headers.ts";
import { declaredLength, readAtMost } from "../subscriptions/bounded-read.ts";
import type { BucketInfo } from "../ports/stream-node-client.ts";
import { routerSettings, toNode, wakeNodes } from "./router.ts";
import { TableCache } from "./table-cache.ts";
import { sendParts, type PartAnswer } from "./table-parts.ts";

type Ctx = Context<{ Bindings: Env }>;

/** How long GET /v1/table/<name> waits for the leaders' figures (a late leader's buckets show null). */
const BUCKET_INFO_TIMEOUT_MS = 2_000;
/** A definition is small (the metadata log keeps it in every snapshot): bodies of PUT are bounded by this. */
const MAX_DEFINITION_BODY_BYTES = 64 * 1024;

let cache: TableCache | null = null;

function tables(env: Env): TableCache {
  cache ??= new TableCache(routerSettings(env).viewCacheTtlMs, () => Date.now());
  return cache;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const all = withSecurityHeaders(new Headers({ "content-type": "application/json", "cache-control": "no-store", ...headers }));
  return new Response(status === 204 ? null : JSON.stringify(body), { status, headers: all });
}

export function tableRoutes(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.get("/", async (c) => json(200, await tableList(c.env)));
  app.put("/:name", (c) => withName(c, (name) => createTable(c, name)));
  app.get("/:name", (c) => withName(c, (name) => describeTable(c.env, new URL(c.req.url).origin, name, 200)));
  app.delete("/:name", (c) => withName(c, (name) => dropTable(c, name)));
  app.post("/:name/write", (c) => withTable(c, (table, definition, body) => writeTable(c, table, definition, body)));
  app.post("/:name/lookup", (c) => withTable(c, (table, definition, body) => lookupTable(c, table, definition, body)));
  app.post("/:name/prefix", (c) => withTable(c, (table, definition, body) => prefixTable(c, table, definition, body)));
  app.all("/:name/bucket/:bucket/:op", (c) => withName(c, (name) => toLeader(c, name)));
  return app;
}

async function withName(c: Ctx, handle: (name: string) => Promise<Response>): Promise<Response> {
  const name = parseTableName(c.req.param("name") ?? "");
  if (!name.ok) return errorResponse(name.error);
  await wakeNodes(c.env);
  return handle(name.value);
}

/** A table-addressed request: the table from the cache, its definition, and the JSON body. */
async function withTable(c: Ctx, handle: (table: TableLookup, definition: TableDefinition, body: Record<string, unknown>) => Promise<Response>): Promise<Response> {
  return withName(c, async (name) => {
    const body = await jsonBody(c, routerSettings(c.env).maxBodyBytes);
    if ("code" in body) return errorResponse(body);
    const table = await tables(c.env).lookup(name, (n) => metaLogClient(c.env.META_LOG).lookupTable(n));
    if (table.table === null) return errorResponse(domainError("not_found", "no such table", { table: name }));
    const definition = parseTableDefinition(table.table.definition);
    if (!definition.ok) return errorResponse(domainError("unavailable", "the table's recorded definition does not parse"));
    if (!isPlainObject(body.value)) return errorResponse(domainError("invalid", "the body is a JSON object", { field: "body" }));
    return handle(table, definition.value, body.value);
  });
}

async function jsonBody(c: Ctx, maxBytes: number): Promise<{ value: unknown } | DomainError> {
  const read = await readAtMost(c.req.raw.body, maxBytes, { declaredBytes: declaredLength(c.req.raw.headers), drainBytes: maxBytes * 4 });
  if (!read.ok) return domainError("too_large", "the request body is over the size limit", { maxBytes });
  try {
    return { value: JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(read.bytes)) as unknown };
  } catch {
    return domainError("invalid", "the body is not JSON", { field: "body" });
  }
}

/** PUT: 201 created, 200 the same definition again, 409 another one (D15, TB2, TB3). */
async function createTable(c: Ctx, name: string): Promise<Response> {
  const body = await jsonBody(c, MAX_DEFINITION_BODY_BYTES);
  if ("code" in body) return errorResponse(body);
  const definition = parseTableDefinition(body.value);
  if (!definition.ok) return errorResponse(definition.error);
  if (definition.value.partitionBy !== null) {
    return errorResponse(domainError("invalid", "partitioned tables are not supported yet", { field: "partitionBy" }));
  }
  const meta = metaLogClient(c.env.META_LOG);
  const existing = await meta.lookupTable(name);
  if (existing.table !== null) return answerExisting(c, name, existing, definition.value);
  const settings = routerSettings(c.env);
  let nodeId = settings.localNodeId;
  for (let hop = 0; ; hop++) {
    const recorded = definitionJson(definition.value) as JsonValue;
    const answer = await streamNodeClient(c.env.STREAM_NODE, nodeId).createTable(name, recorded, definition.value.buckets);
    tables(c.env).invalidate(name);
    if (answer.ok) return describeTable(c.env, new URL(c.req.url).origin, name, answer.created ? 201 : 200);
    const holder = answer.error.details?.["holder"];
    // Not the coordinator: ask the lease holder (once; a lease moving meanwhile is a 503 to retry).
    if (answer.error.code === "fenced" && typeof holder === "string" && holder !== nodeId && hop === 0 && settings.nodeIds.includes(holder)) {
      nodeId = holder;
      continue;
    }
    if (answer.error.code === "conflict") {
      const again = await meta.lookupTable(name);
      if (again.table !== null) return answerExisting(c, name, again, definition.value);
    }
    return errorResponse(answer.error.code === "fenced" ? domainError("unavailable", "no coordinator right now; retry", answer.error.details) : answer.error);
  }
}

async function answerExisting(c: Ctx, name: string, existing: TableLookup, requested: TableDefinition): Promise<Response> {
  const recorded = parseTableDefinition(existing.table?.definition);
  if (recorded.ok && compareDefinitions(recorded.value, requested) === "same") return describeTable(c.env, new URL(c.req.url).origin, name, 200);
  return errorResponse(domainError("conflict", "a table of that name exists with another definition", { reason: "definition_differs", table: name }));
}

/** GET: the definition and, per bucket, its leader, leader epoch, next offset, rows and snapshot offset. */
async function describeTable(env: Env, _origin: string, name: string, status: number): Promise<Response> {
  const described = await tableDescription(env, name);
  return described === null ? errorResponse(domainError("not_found", "no such table", { table: name })) : json(status, described);
}

/** What GET /v1/table/<name> answers (also GET /admin/tables/<name>); null when there is no such table. */
export async function tableDescription(env: Env, name: string): Promise<TableDescription | null> {
  const lookup = await metaLogClient(env.META_LOG).lookupTable(name);
  if (lookup.table === null) return null;
  const infos = await bucketInfos(env, lookup);
  const definition = parseTableDefinition(lookup.table.definition);
  return {
    name,
    definition: definition.ok ? definitionJson(definition.value) : lookup.table.definition,
    buckets: lookup.buckets.map((bucket) => {
      const info = infos.get(bucket.streamId);
      const newest = bucket.snapshots.at(-1);
      return {
        bucket: bucket.bucket,
        leader: bucket.leaderNode?.id ?? null,
        leaderAddr: bucket.leaderNode?.addr ?? null,
        leaderEpoch: bucket.stream?.epoch ?? null,
        nextOffset: info?.nextOffset ?? null,
        rows: info?.rows ?? null,
        snapshotOffset: newest === undefined ? null : formatOffset(newest.coveredPosition),
      };
    }),
  };
}

interface BucketDescription {
  readonly bucket: number;
  readonly leader: string | null;
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number | null;
  readonly nextOffset: string | null;
  readonly rows: number | null;
  readonly snapshotOffset: string | null;
}

export interface TableDescription {
  readonly name: string;
  readonly definition: unknown;
  readonly buckets: readonly BucketDescription[];
}

/** GET /v1/table (also GET /admin/tables): every table, its bucket count and kind. */
export async function tableList(env: Env): Promise<{ tables: { name: string; buckets: number; kind: "primary-key" | "log" }[] }> {
  const listing = await metaLogClient(env.META_LOG).listTables();
  return {
    tables: listing.tables.map((table) => ({
      name: table.name,
      buckets: table.buckets,
      // The recorded form leaves an absent primary key out (definitionJson).
      kind: isPlainObject(table.definition) && Array.isArray(table.definition["primaryKey"]) ? "primary-key" : "log",
    })),
  };
}

/** Snapshots every primary-key bucket of the table now, at its leader (`mink table snapshot`). */
export async function snapshotTable(env: Env, name: string): Promise<{ bucket: number; coveredOffset: string | null; error: string | null }[] | null> {
  const lookup = await metaLogClient(env.META_LOG).lookupTable(name);
  if (lookup.table === null) return null;
  const definition = parseTableDefinition(lookup.table.definition);
  if (definition.ok && definition.value.primaryKey === null) {
    // A log table keeps no tablet: its changelog is all there is.
    return lookup.buckets.map((bucket) => ({ bucket: bucket.bucket, coveredOffset: null, error: "log_table" }));
  }
  const byLeader = leadersOf(lookup);
  const results = new Map<string, { coveredOffset: string | null; error: string | null }>();
  await Promise.all(
    [...byLeader].map(async ([leader, ids]) => {
      for (const { streamId, coveredOffset, error } of await streamNodeClient(env.STREAM_NODE, leader).snapshotBuckets(ids)) {
        results.set(streamId, { coveredOffset, error });
      }
    }),
  );
  return lookup.buckets.map((bucket) => ({ bucket: bucket.bucket, ...(results.get(bucket.streamId) ?? { coveredOffset: null, error: "not_loaded" }) }));
}

/** The bucket stream ids of a table by leader. */
function leadersOf(lookup: TableLookup): Map<string, string[]> {
  const byLeader = new Map<string, string[]>();
  for (const bucket of lookup.buckets) {
    const leader = bucket.leaderNode?.id;
    if (leader !== undefined) byLeader.set(leader, [...(byLeader.get(leader) ?? []), bucket.streamId]);
  }
  return byLeader;
}

/** Each leader's figures for its buckets, asked in parallel, bounded by BUCKET_INFO_TIMEOUT_MS. */
async function bucketInfos(env: Env, lookup: TableLookup): Promise<Map<string, BucketInfo>> {
  const byLeader = leadersOf(lookup);
  const infos = new Map<string, BucketInfo>();
  const late = new Promise<BucketInfo[]>((resolve) => setTimeout(() => resolve([]), BUCKET_INFO_TIMEOUT_MS));
  await Promise.all(
    [...byLeader].map(async ([leader, ids]) => {
      try {
        const answer = await Promise.race([streamNodeClient(env.STREAM_NODE, leader).tableBuckets(ids), late]);
        for (const info of answer) infos.set(info.streamId, info);
      } catch (error) {
        workerLog.log("worker.error", { during: "table_buckets", target: leader }, error);
      }
    }),
  );
  return infos;
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

/** POST write: split by bucket, each part to its leader; atomic per bucket, not across buckets. */
async function writeTable(c: Ctx, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const ops = parseWriteBody(definition, body);
  if (!ops.ok) return errorResponse(ops.error);
  const raw = body["ops"] as unknown[];
  const byBucket = new Map<number, unknown[]>();
  ops.value.forEach((op, i) => byBucket.set(op.bucket, [...(byBucket.get(op.bucket) ?? []), raw[i]]));
  const parts = [...byBucket].sort(([a], [b]) => a - b).map(([bucket, partOps]) => ({ bucket, body: { ops: partOps } }));
  const answers = await sendParts(c.env, new URL(c.req.url).origin, table, table.table!.name, "write", parts, c.req.raw.headers);
  const done = answers.filter((a): a is PartAnswer & { ok: true } => a.ok).map((a) => a.body);
  const failed = answers.filter((a): a is PartAnswer & { ok: false } => !a.ok);
  if (failed.length === 0) return json(200, { buckets: done });
  const first = failed[0]!;
  return json(first.status, { buckets: done, failed: failed.map((f) => ({ bucket: f.bucket, error: f.error })), error: first.error }, retryHeaders(first));
}

/** POST lookup: keys grouped by bucket, each group asked of its leader, the rows put back in request order. */
async function lookupTable(c: Ctx, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const keys = parseLookupKeys(definition, body["keys"]);
  if (!keys.ok) return errorResponse(keys.error);
  const minOffsets = isPlainObject(body["minOffsets"]) ? body["minOffsets"] : {};
  const raw = body["keys"] as unknown[];
  const indices = new Map<number, number[]>();
  keys.value.forEach((key, i) => indices.set(key.bucket, [...(indices.get(key.bucket) ?? []), i]));
  const parts = [...indices].map(([bucket, at]) => ({
    bucket,
    body: { keys: at.map((i) => raw[i]), ...(minOffsets[String(bucket)] === undefined ? {} : { minOffset: minOffsets[String(bucket)] }) },
  }));
  const answers = await sendParts(c.env, new URL(c.req.url).origin, table, table.table!.name, "lookup", parts, c.req.raw.headers);
  const failed = answers.find((a) => !a.ok);
  if (failed !== undefined && !failed.ok) return json(failed.status, { error: failed.error }, retryHeaders(failed));
  const rows: unknown[] = new Array(raw.length).fill(null);
  answers.forEach((answer, p) => {
    const found = answer.ok ? ((answer.body as { rows?: unknown[] } | null)?.rows ?? []) : [];
    indices.get(parts[p]!.bucket)!.forEach((i, k) => (rows[i] = found[k] ?? null));
  });
  return json(200, { rows });
}

/** POST prefix: the one bucket the prefix names answers. */
async function prefixTable(c: Ctx, table: TableLookup, definition: TableDefinition, body: Record<string, unknown>): Promise<Response> {
  const { minOffset: _minOffset, ...query } = body;
  const parsed = parsePrefixBody(definition, query);
  if (!parsed.ok) return errorResponse(parsed.error);
  const [answer] = await sendParts(c.env, new URL(c.req.url).origin, table, table.table!.name, "prefix", [{ bucket: parsed.value.bucket, body }], c.req.raw.headers);
  if (answer === undefined || !answer.ok) return json(answer?.status ?? 503, { error: answer?.ok === false ? answer.error : null }, answer === undefined ? {} : retryHeaders(answer));
  return json(200, answer.body);
}

function retryHeaders(answer: PartAnswer): Record<string, string> {
  return !answer.ok && answer.retryAfter !== null ? { "retry-after": answer.retryAfter } : {};
}

/** A bucket-addressed request through the router: to the bucket's leader, as it is (its answer comes back as it is). */
async function toLeader(c: Ctx, name: string): Promise<Response> {
  const bucket = Number(c.req.param("bucket"));
  const table = await tables(c.env).lookup(name, (n) => metaLogClient(c.env.META_LOG).lookupTable(n));
  const leader = Number.isSafeInteger(bucket) ? table.buckets[bucket]?.leaderNode?.id : undefined;
  const nodeId = leader ?? routerSettings(c.env).localNodeId;
  const url = new URL(c.req.url);
  const target = new Request(`${url.origin}/n/${encodeURIComponent(nodeId)}${url.pathname}${url.search}`, c.req.raw);
  return toNode(c.env, nodeId, target);
}
