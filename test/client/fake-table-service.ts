// A scripted mink table service behind an injected fetch: the table routes, and the bucket-addressed
// routes of each node with the wire contract's leader checks (307 `not_leader`) and Durable Streams
// producer semantics (204 repeat, 409 gap, 403 stale epoch). It keeps real rows and per-producer state,
// so tests assert outcomes (each row written once) rather than request counts alone. Faults are scripted.
import { bucketOf } from "../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";
import type { KeyValue } from "../../src/core/tables/key-encoding.ts";
import { primaryKeyOf, validateRow, type Row } from "../../src/core/tables/rows.ts";

export const ORIGIN = "http://mink.test";
export const nodeAddr = (node: string): string => `${ORIGIN}/n/${node}`;

interface Producer {
  epoch: number;
  nextSeq: number;
}

interface Bucket {
  leader: string;
  leaderEpoch: number;
  /** Records in the bucket's stream; the next offset is their count. */
  records: { op: string; row: Row }[];
  /** Primary-key tables: the key tuple as JSON → row (the fake's own key: it relies on nothing it tests). */
  rows: Map<string, Row>;
  producers: Map<string, Producer>;
}

interface Table {
  definition: TableDefinition;
  buckets: Bucket[];
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** A scripted fault: `match` picks requests; `times` of them get it (Infinity: all). */
interface Fault {
  readonly match: (request: SeenRequest) => boolean;
  times: number;
  /** "drop-answer": the request is served, then the answer is lost; else the answer given instead. */
  readonly action: "drop-answer" | "hide-redirect" | (() => Response);
}

export const offsetOf = (count: number): string => String(count).padStart(16, "0");

export class FakeTableService {
  readonly tables = new Map<string, Table>();
  readonly seen: SeenRequest[] = [];
  readonly #faults: Fault[] = [];
  readonly #nodes: readonly string[];
  #inFlight = new Map<string, number>();
  /** The most requests one producer id had in flight at once, and the most over all producers. */
  maxInFlightPerProducer = 0;
  maxInFlight = 0;

  constructor(nodes: readonly string[] = ["node-1", "node-2", "node-3"]) {
    this.#nodes = nodes;
  }

  readonly fetch = async (url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Response> => {
    const request: SeenRequest = { method: init.method, url, headers: lowerCased(init.headers), body: init.body === undefined ? undefined : JSON.parse(init.body) };
    this.seen.push(request);
    const fault = this.#faults.find((candidate) => candidate.times > 0 && candidate.match(request));
    if (fault !== undefined) fault.times--;
    if (fault !== undefined && typeof fault.action === "function") return fault.action();
    const producerId = request.headers["producer-id"];
    this.#enter(producerId);
    // A turn of the event loop while the request is "at the server", so concurrent requests overlap.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const response = this.#route(request);
    this.#leave(producerId);
    if (fault?.action === "drop-answer") throw new TypeError("fetch failed: the connection was reset");
    // What a browser's fetch hands over for a manual redirect: status 0, no headers, no body.
    if (fault?.action === "hide-redirect" && response.status === 307) return Response.error();
    return response;
  };

  fault(match: (request: SeenRequest) => boolean, action: Fault["action"], times = 1): void {
    this.#faults.push({ match, action, times });
  }

  /** The coordinator moves a bucket to another node: a higher leader epoch. */
  moveLeader(table: string, bucket: number, node: string): void {
    const entry = this.#bucket(table, bucket);
    entry.leader = node;
    entry.leaderEpoch += 1;
  }

  /** Sets the producer state a bucket's stream holds for `producerId` (another writer was there first). */
  setProducer(table: string, bucket: number, producerId: string, state: Producer): void {
    this.#bucket(table, bucket).producers.set(producerId, { ...state });
  }

  bucketOfTable(table: string, bucket: number): Bucket {
    return this.#bucket(table, bucket);
  }

  #bucket(table: string, bucket: number): Bucket {
    const entry = this.tables.get(table)?.buckets[bucket];
    if (entry === undefined) throw new Error(`no bucket ${bucket} of ${table}`);
    return entry;
  }

  #enter(producerId: string | undefined): void {
    const key = producerId ?? "";
    const count = (this.#inFlight.get(key) ?? 0) + 1;
    this.#inFlight.set(key, count);
    if (producerId !== undefined) this.maxInFlightPerProducer = Math.max(this.maxInFlightPerProducer, count);
    this.maxInFlight = Math.max(this.maxInFlight, [...this.#inFlight.values()].reduce((sum, value) => sum + value, 0));
  }

  #leave(producerId: string | undefined): void {
    const key = producerId ?? "";
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 1) - 1);
  }

  #route(request: SeenRequest): Response {
    const path = request.url.slice(ORIGIN.length);
    const bucketRoute = /^\/n\/([^/]+)\/v1\/table\/([^/]+)\/bucket\/(\d+)\/(write|lookup|prefix)$/.exec(path);
    if (bucketRoute !== null && request.method === "POST") {
      const [, node, table, bucket, action] = bucketRoute as unknown as [string, string, string, string, string];
      return this.#bucketRequest(request, node, table, Number(bucket), action);
    }
    if (path === "/v1/table" && request.method === "GET") {
      const tables = [...this.tables].map(([name, table]) => ({ name, buckets: table.buckets.length, kind: table.definition.primaryKey === null ? "log" : "primary-key" }));
      return json(200, { tables });
    }
    const tableRoute = /^\/v1\/table\/([^/]+)$/.exec(path);
    if (tableRoute === null) return error(404, "not_found", `no route ${request.method} ${path}`);
    const name = tableRoute[1]!;
    if (request.method === "PUT") return this.#create(name, request.body);
    const table = this.tables.get(name);
    if (table === undefined) return error(404, "not_found", `no table ${name}`);
    if (request.method === "GET") return json(200, this.#describe(name, table));
    if (request.method === "DELETE") {
      this.tables.delete(name);
      return new Response(null, { status: 204 });
    }
    return error(404, "not_found", "no such route");
  }

  #create(name: string, body: unknown): Response {
    const parsed = parseTableDefinition(body);
    if (!parsed.ok) return error(400, "invalid", parsed.error.message);
    const existing = this.tables.get(name);
    if (existing !== undefined) {
      const same = JSON.stringify(existing.definition) === JSON.stringify(parsed.value);
      return same ? json(200, this.#describe(name, existing)) : error(409, "conflict", "another definition");
    }
    const buckets = Array.from({ length: parsed.value.buckets }, (_, index): Bucket => ({
      leader: this.#nodes[index % this.#nodes.length]!,
      leaderEpoch: 1,
      records: [],
      rows: new Map(),
      producers: new Map(),
    }));
    const table = { definition: parsed.value, buckets };
    this.tables.set(name, table);
    return json(201, this.#describe(name, table));
  }

  #describe(name: string, table: Table): unknown {
    const buckets = table.buckets.map((bucket, index) => ({
      bucket: index,
      leader: bucket.leader,
      leaderAddr: nodeAddr(bucket.leader),
      leaderEpoch: bucket.leaderEpoch,
      nextOffset: offsetOf(bucket.records.length),
      rows: table.definition.primaryKey === null ? null : bucket.rows.size,
      snapshotOffset: null,
    }));
    return { name, definition: table.definition, buckets };
  }

  #bucketRequest(request: SeenRequest, node: string, name: string, index: number, action: string): Response {
    const table = this.tables.get(name);
    const bucket = table?.buckets[index];
    if (table === undefined || bucket === undefined) return error(404, "not_found", `no bucket ${index} of ${name}`);
    if (bucket.leader !== node) {
      const details = { table: name, bucket: index, leader: bucket.leader, leaderAddr: nodeAddr(bucket.leader), leaderEpoch: bucket.leaderEpoch };
      const location = `${nodeAddr(bucket.leader)}/v1/table/${name}/bucket/${index}/${action}`;
      return json(307, { error: { code: "not_leader", message: "another node leads this bucket", retryable: true, details } }, { location });
    }
    const body = request.body as Record<string, unknown>;
    if (action === "write") return this.#write(request, table, bucket, index);
    if (action === "lookup") {
      const keys = body["keys"] as Row[];
      return json(200, { rows: keys.map((key) => bucket.rows.get(rowKey(table.definition, key)) ?? null) });
    }
    return this.#prefix(table, bucket, body);
  }

  #write(request: SeenRequest, table: Table, bucket: Bucket, index: number): Response {
    const id = request.headers["producer-id"]!;
    const epoch = Number(request.headers["producer-epoch"]);
    const seq = Number(request.headers["producer-seq"]);
    const state = bucket.producers.get(id);
    if (state !== undefined && epoch < state.epoch) return error(403, "producer_stale_epoch", "an older epoch", { currentEpoch: state.epoch });
    const expected = state === undefined || epoch > state.epoch ? 0 : state.nextSeq;
    if (seq < expected) return new Response(null, { status: 204 });
    if (seq > expected) {
      return error(409, "producer_seq_gap", "a seq was skipped", { expectedSeq: expected, receivedSeq: seq }, { "producer-expected-seq": String(expected) });
    }
    const ops = (request.body as { ops: Record<string, Row>[] }).ops;
    for (const op of ops) {
      const [kind, row] = Object.entries(op)[0]!;
      if (kind !== "delete" && !validateRow(table.definition, row).ok) return error(400, "invalid", "a row does not fit the table");
      if (bucketOf(table.definition, row) !== index) return error(400, "invalid", `a row of another bucket came to bucket ${index}`);
    }
    for (const op of ops) this.#apply(table.definition, bucket, op);
    bucket.producers.set(id, { epoch, nextSeq: seq + 1 });
    // As the leader does: the seq taken is echoed (a batch that changed nothing would not echo it).
    const echo = { "producer-epoch": String(epoch), "producer-seq": String(seq) };
    return json(200, { bucket: index, leaderEpoch: bucket.leaderEpoch, nextOffset: offsetOf(bucket.records.length), count: ops.length }, echo);
  }

  #apply(definition: TableDefinition, bucket: Bucket, op: Record<string, Row>): void {
    const [kind, row] = Object.entries(op)[0]!;
    if (kind === "append") {
      bucket.records.push({ op: "+I", row });
      return;
    }
    const key = rowKey(definition, row);
    if (kind === "delete") {
      if (bucket.rows.delete(key)) bucket.records.push({ op: "-D", row });
      return;
    }
    bucket.records.push({ op: bucket.rows.has(key) ? "+U" : "+I", row });
    bucket.rows.set(key, row);
  }

  #prefix(table: Table, bucket: Bucket, body: Record<string, unknown>): Response {
    const prefix = body["prefix"] as Row;
    const primaryKey = table.definition.primaryKey!;
    const names = primaryKey.slice(0, Object.keys(prefix).length);
    const limit = typeof body["limit"] === "number" ? body["limit"] : 100;
    const after = typeof body["after"] === "string" ? (JSON.parse(body["after"]) as KeyValue[]) : null;
    const tuples = [...bucket.rows.keys()]
      .map((key) => JSON.parse(key) as KeyValue[])
      .filter((tuple) => names.every((name, index) => tuple[index] === prefix[name]))
      .filter((tuple) => after === null || compareTuples(tuple, after) > 0)
      .sort(compareTuples);
    const page = tuples.slice(0, limit).map((tuple) => JSON.stringify(tuple));
    return json(200, { rows: page.map((key) => bucket.rows.get(key)!), cursor: tuples.length > limit ? page[page.length - 1]! : null });
  }
}

function rowKey(definition: TableDefinition, row: Row): string {
  return JSON.stringify(primaryKeyOf(definition, row));
}

function compareTuples(a: readonly KeyValue[], b: readonly KeyValue[]): number {
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const [x, y] = [a[index]!, b[index]!];
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export function error(status: number, code: string, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  const retryable = status === 429 || status === 503 || status === 307;
  return json(status, { error: { code, message, retryable, ...(details === undefined ? {} : { details }) } }, headers);
}
