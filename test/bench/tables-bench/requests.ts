// The requests the tables benchmark times (docs/tables.md, "HTTP API"):
//  - a bucket producer: 500-row batches POSTed to `<leaderAddr>/v1/table/<t>/bucket/<i>/write` with
//    Producer-Id / Producer-Epoch / Producer-Seq, one batch at a time, the same seq retried after any
//    failure (so a batch is written once), as src/client's BucketProducer does; epoch 0, the first epoch
//    every server takes (the client's clock epoch for an explicit clientId is refused, PRD-11);
//  - a table-addressed write through the router (POST /v1/table/<t>/write, no producer headers);
//  - lookups at a leader (bucket path) and through the router (POST /v1/table/<t>/lookup).
// A bucket's leader comes from GET /v1/table/<t> and is looked up again after a failure; a 307 not_leader
// names the new one.
import type { Service } from "../../e2e/service.ts";
import { describeTable } from "../../e2e/tables-clients.ts";
import { errorText, sleep } from "../service-bench/stats.ts";

/** Pause before retrying a failed request (the server says Retry-After: 1; the benchmark wants detail). */
const RETRY_PAUSE_MS = 50;
/** One request's bound: a crashed node answers at once, a loading bucket within 2 s, a big batch within this. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A 4xx that a retry would not change (a bad batch, a refused producer): the benchmark is wrong, stop. */
class Refused extends Error {
  override readonly name = "Refused";
}

export interface Ack {
  /** When the acknowledgement arrived. */
  readonly atMs: number;
  /** The first attempt's send to the acknowledgement, retries included. */
  readonly latencyMs: number;
  /** The node the acknowledged attempt went to ("router" for a table-addressed write). */
  readonly node: string;
  readonly attempts: number;
}

/** Failed attempts by kind (status code or error name), shared by a phase's clients. */
export class Failures {
  readonly counts = new Map<string, number>();
  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }
  get total(): number {
    return [...this.counts.values()].reduce((sum, n) => sum + n, 0);
  }
  describe(): string {
    return this.total === 0 ? "none" : [...this.counts].sort(([a], [b]) => a.localeCompare(b)).map(([kind, n]) => `${kind} ${n}`).join(", ");
  }
}

interface Answered {
  readonly status: number;
  readonly text: string;
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Answered> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: response.status, text: await response.text() };
}

/** The leader of one bucket as this client last knew it. */
export class LeaderAddress {
  /** When a lookup first showed a leader other than the first one (after a crash), else null. */
  movedAtMs: number | null = null;
  readonly #first: string;

  constructor(
    private readonly service: Service,
    readonly table: string,
    readonly bucket: number,
    public node: string,
    public addr: string,
  ) {
    this.#first = node;
  }

  static async of(service: Service, table: string, bucket: number): Promise<LeaderAddress> {
    const view = (await describeTable(service, table)).buckets[bucket];
    if (view?.leader == null || view.leaderAddr === null) throw new Error(`bucket ${bucket} of ${table} has no leader: ${JSON.stringify(view)}`);
    return new LeaderAddress(service, table, bucket, view.leader, view.leaderAddr);
  }

  url(op: "write" | "lookup"): string {
    return `${this.addr}/v1/table/${this.table}/bucket/${this.bucket}/${op}`;
  }

  async refresh(): Promise<void> {
    const view = (await describeTable(this.service, this.table)).buckets[this.bucket];
    if (view?.leader == null || view.leaderAddr === null) return;
    this.#set(view.leader, view.leaderAddr);
  }

  /** A not_leader answer names the leader; true when it did. */
  followNotLeader(text: string): boolean {
    try {
      const details = (JSON.parse(text) as { error?: { code?: unknown; details?: { leader?: unknown; leaderAddr?: unknown } } }).error?.details;
      if (typeof details?.leader !== "string" || typeof details.leaderAddr !== "string") return false;
      this.#set(details.leader, details.leaderAddr);
      return true;
    } catch {
      return false;
    }
  }

  #set(node: string, addr: string): void {
    if (node !== this.#first && this.movedAtMs === null) this.movedAtMs = Date.now();
    this.node = node;
    this.addr = addr;
  }
}

/** One producer id on one bucket: a batch at a time, each retried with its seq until acknowledged. */
export class BucketProducer {
  #seq = 0;

  constructor(
    private readonly leader: LeaderAddress,
    private readonly producerId: string,
    private readonly failures: Failures,
  ) {}

  /** Writes `ops` once; gives up (throws) only when `giveUpAtMs` passes. */
  async write(ops: readonly unknown[], giveUpAtMs: number): Promise<Ack> {
    const body = JSON.stringify({ ops });
    const startedMs = performance.now();
    for (let attempt = 1; ; attempt++) {
      const node = this.leader.node;
      const headers = { "producer-id": this.producerId, "producer-epoch": "0", "producer-seq": String(this.#seq) };
      let failure: string;
      try {
        const answer = await post(this.leader.url("write"), body, headers);
        // 204: this seq was written before (an answer lost at a crash): acknowledged all the same.
        if (answer.status === 200 || answer.status === 204) {
          this.#seq++;
          return { atMs: Date.now(), latencyMs: performance.now() - startedMs, node, attempts: attempt };
        }
        failure = String(answer.status);
        if (answer.status === 307 && this.leader.followNotLeader(answer.text)) {
          this.failures.add(failure);
          continue;
        }
        if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) throw new Refused(`write to ${this.leader.url("write")}: ${answer.status} ${answer.text.slice(0, 300)}`);
      } catch (error) {
        if (error instanceof Refused) throw error;
        failure = error instanceof Error ? error.name : "error";
      }
      this.failures.add(failure);
      if (Date.now() >= giveUpAtMs) throw new Error(`write to bucket ${this.leader.bucket} of ${this.leader.table}: no acknowledgement after ${attempt} attempts (last: ${failure})`);
      await sleep(RETRY_PAUSE_MS);
      await this.leader.refresh().catch((error: unknown) => this.failures.add(`describe ${errorText(error).slice(0, 40)}`));
    }
  }
}

/** A table-addressed write through the router, retried whole after a failure (an upsert applied twice changes nothing, W3). */
export async function routerWrite(service: Service, table: string, ops: readonly unknown[], failures: Failures, giveUpAtMs: number): Promise<Ack> {
  const body = JSON.stringify({ ops });
  const startedMs = performance.now();
  for (let attempt = 1; ; attempt++) {
    let failure: string;
    try {
      const answer = await post(`${service.baseUrl}/v1/table/${table}/write`, body);
      if (answer.status === 200) return { atMs: Date.now(), latencyMs: performance.now() - startedMs, node: "router", attempts: attempt };
      if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) throw new Refused(`router write to ${table}: ${answer.status} ${answer.text.slice(0, 300)}`);
      failure = String(answer.status);
    } catch (error) {
      if (error instanceof Refused) throw error;
      failure = error instanceof Error ? error.name : "error";
    }
    failures.add(failure);
    if (Date.now() >= giveUpAtMs) throw new Error(`router write to ${table}: no acknowledgement after ${attempt} attempts (last: ${failure})`);
    await sleep(RETRY_PAUSE_MS);
  }
}

export interface LookupOutcome {
  readonly latencyMs: number;
  /** Keys answered null (every key looked up was written and acknowledged: should be 0). */
  readonly missing: number;
}

/** One lookup of `ids` at `url` (a leader's bucket path or the router's table path), timed; one attempt. */
export async function timedLookup(url: string, ids: readonly number[]): Promise<LookupOutcome> {
  const startedMs = performance.now();
  const answer = await post(url, JSON.stringify({ keys: ids.map((id) => ({ id })) }));
  const latencyMs = performance.now() - startedMs;
  if (answer.status !== 200) throw new Error(`lookup at ${url}: ${answer.status} ${answer.text.slice(0, 300)}`);
  const rows = (JSON.parse(answer.text) as { rows: unknown[] }).rows;
  return { latencyMs, missing: rows.filter((row) => row === null).length + Math.max(0, ids.length - rows.length) };
}
