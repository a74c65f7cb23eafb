// Helpers for the tables end-to-end tests and the tables benchmark (docs/tables.md, "HTTP API"): plain
// JSON requests to the router or a node's address, the admin calls (nodes, faults, snapshots), a bucket's
// changelog read back whole and decoded with the core's decoder, the leaders' `table.load` lines from the
// Worker's log, and a fetch for the TypeScript client that loses answers on purpose (the request is served,
// the client sees a network error).
import { readFileSync } from "node:fs";
import { decodeChangeRecord, type ChangeRecord } from "../../src/core/tables/changelog.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import type { Service } from "./service.ts";

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  /** The body parsed as JSON; the text itself when it is not JSON; null when empty. */
  readonly body: unknown;
}

/** One bucket of GET /v1/table/<name>. */
interface BucketView {
  readonly bucket: number;
  readonly leader: string | null;
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number | null;
  readonly nextOffset: string | null;
  readonly rows: number | null;
  readonly snapshotOffset: string | null;
}

export interface TableView {
  readonly name: string;
  readonly definition: unknown;
  readonly buckets: readonly BucketView[];
}

interface AdminNodes {
  coordinator: { holder: string; coordinatorEpoch: number; expired: boolean } | null;
  nodes: { id: string; live: boolean; declaredDead: unknown }[];
}

const REQUEST_TIMEOUT_MS = 30_000;

/** A request to `url` (absolute, or a path under the router); redirects are answers, never followed. */
export async function call(service: Service, method: string, url: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Answer> {
  const response = await fetch(url.startsWith("http") ? url : `${service.baseUrl}${url}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: parseJsonOrText(text) };
}

function parseJsonOrText(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `call`, expecting `status`: anything else throws with the answer in the message. */
export async function expectStatus(service: Service, status: number, method: string, url: string, body?: unknown, headers?: Record<string, string>, timeoutMs?: number): Promise<Answer> {
  const answer = await call(service, method, url, body, headers, timeoutMs);
  if (answer.status !== status) throw new Error(`${method} ${url}: ${answer.status}, not ${status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
  return answer;
}

export function adminHeaders(service: Service): Record<string, string> {
  return { authorization: `Bearer ${service.adminToken}` };
}

export async function describeTable(service: Service, table: string): Promise<TableView> {
  return (await expectStatus(service, 200, "GET", `/v1/table/${table}`)).body as TableView;
}

export async function coordinatorOf(service: Service): Promise<string | null> {
  const view = (await expectStatus(service, 200, "GET", "/admin/nodes", undefined, adminHeaders(service))).body as AdminNodes;
  return view.coordinator?.holder ?? null;
}

export async function fault(service: Service, node: string, mode: "crash" | "heal"): Promise<void> {
  await expectStatus(service, 200, "POST", "/admin/faults", { node, mode }, adminHeaders(service));
}

/** Every one of `count` nodes live and not declared dead, and a coordinator whose lease holds. */
export async function allLive(service: Service, count: number, timeoutMs = 60_000): Promise<void> {
  await eventually(
    async () => {
      // Any stream request makes the router start every node (a node registers when it starts).
      await call(service, "GET", "/v1/stream/wake?offset=-1");
      const view = (await expectStatus(service, 200, "GET", "/admin/nodes", undefined, adminHeaders(service))).body as AdminNodes;
      const ready = view.nodes.length === count && view.nodes.every((node) => node.live && node.declaredDead === null) && view.coordinator?.expired === false;
      if (!ready) throw new NotYet(JSON.stringify(view));
      return true;
    },
    { timeoutMs, what: `${count} live nodes and a coordinator` },
  );
}

/** Bucket `bucket`'s changelog through the router, from the start until up to date, decoded record by record. */
export async function readChangelog(service: Service, table: string, bucket: number): Promise<ChangeRecord[]> {
  const records: ChangeRecord[] = [];
  let offset = "-1";
  for (let page = 0; page < 100_000; page++) {
    const answer = await expectStatus(service, 200, "GET", `/v1/table/${table}/bucket/${bucket}/changelog?offset=${offset}`);
    if (!Array.isArray(answer.body)) throw new Error(`changelog page of ${table}/${bucket} is not a JSON array: ${String(answer.body).slice(0, 200)}`);
    for (const message of answer.body) {
      const decoded = decodeChangeRecord(message);
      if (!decoded.ok) throw new Error(`changelog of ${table}/${bucket}: ${decoded.error.message}: ${JSON.stringify(message)}`);
      records.push(decoded.value);
    }
    offset = answer.headers.get("stream-next-offset") ?? offset;
    if (answer.headers.get("stream-up-to-date") === "true") return records;
  }
  throw new Error(`changelog of ${table}/${bucket}: too many pages`);
}

/** The changelog's tail offset: where a reader starts to see only what comes next. */
export async function changelogTail(service: Service, table: string, bucket: number): Promise<string> {
  const answer = await expectStatus(service, 200, "GET", `/v1/table/${table}/bucket/${bucket}/changelog?offset=now`);
  const offset = answer.headers.get("stream-next-offset");
  if (offset === null) throw new Error(`changelog of ${table}/${bucket}: no Stream-Next-Offset`);
  return offset;
}

export interface LossyFetch {
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>;
  /** Answers served and then lost, so far. */
  readonly lost: () => number;
}

/**
 * A fetch that loses the answer of every `every`-th bucket-addressed write: the request reaches the leader
 * and is served whole, then the caller gets a network error, as when a connection drops after the write.
 */
export function lossyFetch(every: number): LossyFetch {
  let writes = 0;
  let lost = 0;
  return {
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (!/\/bucket\/\d+\/write$/.test(new URL(url).pathname) || ++writes % every !== 0) return response;
      await response.arrayBuffer();
      lost++;
      throw new TypeError(`answer lost on purpose (status ${response.status})`);
    },
    lost: () => lost,
  };
}

/** A `table.load` line of the Worker's log: a leader loaded a bucket (restored a snapshot, replayed its stream). */
export interface LoggedLoad {
  readonly node: string;
  readonly table: string;
  readonly bucket: number;
  /** The stream position the restored snapshot covered; null when no snapshot was restored. */
  readonly restoredFrom: number | null;
  readonly replayedBytes: number;
  readonly rows: number;
  readonly durationMs: number;
}

/** Every load of `table`'s bucket `bucket` in the Worker's log so far, oldest first. */
export function loggedLoads(logFile: string, table: string, bucket: number): LoggedLoad[] {
  const loads: LoggedLoad[] = [];
  for (const line of readFileSync(logFile, "utf8").split("\n")) {
    const start = line.indexOf("{");
    if (start < 0 || !line.includes('"table.load"')) continue;
    let fields: LoggedLoad & { event?: unknown };
    try {
      fields = JSON.parse(line.slice(start)) as LoggedLoad & { event?: unknown };
    } catch {
      continue; // a line cut by the log's buffering
    }
    if (fields.event === "table.load" && fields.table === table && fields.bucket === bucket) loads.push(fields);
  }
  return loads;
}

/**
 * A bucket's changelog read at `url` (absolute: a leader's address and a bucket path up to `/changelog`,
 * as bucketPath builds it, partitions included), from the start until up to date, decoded record by record.
 */
export async function readChangelogAt(service: Service, url: string): Promise<ChangeRecord[]> {
  const records: ChangeRecord[] = [];
  let offset = "-1";
  for (let page = 0; page < 100_000; page++) {
    const answer = await expectStatus(service, 200, "GET", `${url}?offset=${offset}`);
    if (!Array.isArray(answer.body)) throw new Error(`changelog page of ${url} is not a JSON array: ${String(answer.body).slice(0, 200)}`);
    for (const message of answer.body) {
      const decoded = decodeChangeRecord(message);
      if (!decoded.ok) throw new Error(`changelog of ${url}: ${decoded.error.message}: ${JSON.stringify(message)}`);
      records.push(decoded.value);
    }
    offset = answer.headers.get("stream-next-offset") ?? offset;
    if (answer.headers.get("stream-up-to-date") === "true") return records;
  }
  throw new Error(`changelog of ${url}: too many pages`);
}
