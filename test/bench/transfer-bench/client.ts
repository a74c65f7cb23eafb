// The transfer benchmark's HTTP side: stream requests through the router as a patient client makes them
// (follow 307s to the node address, retry 409 and 503 and dropped connections after a short pause), and the
// admin calls (bearer token) that begin a transfer and show where a stream is. Every answer that was not
// final (a redirect, a retried status, a network error) is tallied, so the report can say what clients saw
// on the way to their acknowledgement; an error no retry cures ends the request with a throw.
import { Pool, type Dispatcher } from "undici";
import { errorText } from "../service-bench/stats.ts";

/** Bound on each request's wait for headers and body. */
const REQUEST_TIMEOUT_MS = 15_000;
/** The pause before retrying a 409, a 503 or a dropped connection. */
export const RETRY_PAUSE_MS = 10;
/** A request that is still being retried after this long fails. */
const GIVE_UP_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface StreamRecord {
  owner: string | null;
  ownership: string;
  epoch: number | null;
  pendingTransfer: { source: string; target: string } | null;
}

/** Counts of the answers clients were not done with, by kind ("307", "503 transfer_pending", ...). */
class Tally {
  readonly counts = new Map<string, number>();
  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }
  describe(): string {
    if (this.counts.size === 0) return "none";
    return [...this.counts].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${count}x ${kind}`).join(", ");
  }
}

export class Client {
  readonly #pool: Pool;
  readonly #origin: string;
  readonly #token: string;
  /** Non-final answers met by stream requests (redirects, retried statuses, network errors). */
  readonly detours = new Tally();

  constructor(baseUrl: string, adminToken: string, connections: number) {
    this.#origin = new URL(baseUrl).origin;
    this.#token = adminToken;
    this.#pool = new Pool(this.#origin, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  async #once(method: Dispatcher.HttpMethod, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const response = await this.#pool.request({
      path,
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    const text = await response.body.text();
    const flat: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) flat[name] = Array.isArray(value) ? value.join(", ") : String(value ?? "");
    return { status: response.statusCode, headers: flat, body: text };
  }

  /**
   * A stream request through the router: 307s are followed (same origin: node addresses are
   * `<PUBLIC_ORIGIN>/n/<id>`), 409 and 503 and network errors retried after RETRY_PAUSE_MS from the router
   * again. Whatever else comes back is returned; a request still failing after GIVE_UP_MS throws.
   */
  async stream(method: Dispatcher.HttpMethod, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    const started = Date.now();
    let last = "";
    for (;;) {
      if (Date.now() - started > GIVE_UP_MS) throw new Error(`${method} ${path}: still failing after ${GIVE_UP_MS} ms (last: ${last})`);
      let answer: Answer;
      try {
        answer = await this.#once(method, path, headers, body);
        for (let hop = 0; answer.status === 307 && hop < 5; hop++) {
          this.detours.add("307");
          const location = new URL(answer.headers["location"] ?? "", this.#origin);
          if (location.origin !== this.#origin) throw new Error(`307 to another origin: ${location.href}`);
          answer = await this.#once(method, location.pathname + location.search, headers, body);
        }
      } catch (error) {
        last = errorText(error);
        this.detours.add(`network error: ${last.slice(0, 120)}`);
        await sleep(RETRY_PAUSE_MS);
        continue;
      }
      if (answer.status !== 409 && answer.status !== 503 && answer.status !== 307) return answer;
      const code = errorCode(answer.body);
      last = `${answer.status} ${answer.body.slice(0, 200)}`;
      // A 409 that is not a transfer's (a producer sequence gap, a closed stream) cannot be cured by a retry.
      if (answer.status === 409 && !(code === "conflict" && answer.body.includes("transferred"))) return answer;
      this.detours.add(`${answer.status} ${code}`);
      await sleep(RETRY_PAUSE_MS);
    }
  }

  async #admin(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    return this.#once(method, path, headers, body === undefined ? undefined : JSON.stringify(body));
  }

  /** POST /admin/transfers; throws unless the transfer began (202) or was already pending (200). */
  async beginTransfer(streamPath: string, target: string): Promise<void> {
    const answer = await this.#admin("POST", "/admin/transfers", { stream: streamPath, target });
    if (answer.status !== 202 && answer.status !== 200) throw new Error(`POST /admin/transfers ${streamPath} -> ${target}: ${answer.status} ${answer.body.slice(0, 300)}`);
  }

  async streamRecord(streamPath: string): Promise<StreamRecord> {
    const answer = await this.#admin("GET", `/admin/streams/${streamPath}`);
    if (answer.status !== 200) throw new Error(`GET /admin/streams/${streamPath}: ${answer.status} ${answer.body.slice(0, 300)}`);
    return JSON.parse(answer.body) as StreamRecord;
  }

  async nodeIds(): Promise<string[]> {
    const answer = await this.#admin("GET", "/admin/nodes");
    if (answer.status !== 200) throw new Error(`GET /admin/nodes: ${answer.status} ${answer.body.slice(0, 300)}`);
    return (JSON.parse(answer.body) as { nodes: Array<{ id: string }> }).nodes.map((node) => node.id);
  }

  /** The object-store request counters of GET /metrics, by `<node> <kind>` ("node-0 get"). */
  async storeRequests(): Promise<Map<string, number>> {
    const answer = await this.#admin("GET", "/metrics");
    if (answer.status !== 200) throw new Error(`GET /metrics: ${answer.status} ${answer.body.slice(0, 300)}`);
    const counts = new Map<string, number>();
    for (const match of answer.body.matchAll(/^mink_object_store_requests_total\{node="([^"]+)",kind="([^"]+)"\} (\d+)$/gm)) {
      counts.set(`${match[1]} ${match[2]}`, Number(match[3]));
    }
    return counts;
  }

  /**
   * Polls the stream's record every `intervalMs` until `target` owns it, opened, with no transfer pending;
   * resolves with performance.now() at the answer that showed it. Throws after `timeoutMs`.
   */
  async waitOpenedBy(streamPath: string, target: string, intervalMs: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let record: StreamRecord | undefined;
    for (;;) {
      try {
        record = await this.streamRecord(streamPath);
        if (record.owner === target && record.ownership === "opened" && record.pendingTransfer === null) return performance.now();
      } catch (error) {
        this.detours.add(`admin: ${errorText(error).slice(0, 120)}`);
      }
      if (Date.now() > deadline) throw new Error(`${streamPath} not opened by ${target} within ${timeoutMs} ms (last record: ${JSON.stringify(record)})`);
      await sleep(intervalMs);
    }
  }

  /** The stream's whole content, read through the router from offset -1 until up to date. */
  async readAll(path: string): Promise<string> {
    let offset = "-1";
    let content = "";
    for (let reads = 0; reads < 10_000; reads++) {
      const answer = await this.stream("GET", `${path}?offset=${encodeURIComponent(offset)}`);
      if (answer.status !== 200) throw new Error(`GET ${path}?offset=${offset}: ${answer.status} ${answer.body.slice(0, 200)}`);
      content += answer.body;
      offset = answer.headers["stream-next-offset"] ?? offset;
      if (answer.headers["stream-up-to-date"] === "true") return content;
    }
    throw new Error(`GET ${path}: not up to date after 10,000 reads`);
  }
}

function errorCode(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: string } };
    return parsed.error?.code ?? "(no code)";
  } catch {
    return "(not JSON)";
  }
}
