// Clients for the failover end-to-end tests (docs/failover.md): idempotent writers that append through the
// router (following its 307s), retry the same Producer-Seq on every failure (so a retried append is
// deduplicated, never doubled), and record each acknowledgement with the node that gave it and when; and a
// reader that reads a stream back whole. The checks compare what was acknowledged with what was read.
// Each writer also records its appends (one operation per seq, from its first attempt to its definite answer)
// and the final read of its stream in a ClientHistory, for the linearizability check.
import { ClientHistory } from "./client-history.ts";
import type { Service } from "./service.ts";

export interface Ack {
  readonly seq: number;
  /** The node that answered: the one in the address after the router's redirect, or the router's own. */
  readonly node: string;
  readonly atMs: number;
}

/** The router's local node under startService (NODE_IDS = "node-0,...", no LOCAL_NODE). */
const ROUTER_NODE_ID = "node-0";

/** Pause between retries of a failed append (the server's Retry-After is 1 s; these tests want detail). */
const RETRY_PAUSE_MS = 50;
/** One append's bound: a crashed node may hold a request for a while. */
const APPEND_TIMEOUT_MS = 5_000;

/** The token of append `seq` of stream `name`: what the reader looks for. */
function token(name: string, seq: number): string {
  return `[${name}#${seq}]`;
}

export class IdempotentWriter {
  readonly acks: Ack[] = [];
  /** Failed attempts (503, connection reset, timeout) and what they were. */
  readonly failures = new Map<string, number>();
  /** Every append of this writer and the final read of its stream (readWhole with it), for the linearizability check. */
  readonly history = new ClientHistory();
  private running = true;
  private done: Promise<void> | null = null;
  private nextSeq = 0;

  constructor(
    private readonly service: Service,
    readonly name: string,
  ) {}

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** The seq of the append in flight or next (acknowledged: everything below it). */
  get sent(): number {
    return this.nextSeq;
  }

  private async loop(): Promise<void> {
    // When the first attempt of the seq in flight was sent (null: none in flight).
    let firstSentAt: number | null = null;
    while (this.running) {
      const seq = this.nextSeq;
      firstSentAt ??= this.history.now();
      const node = await this.appendOnce(seq, firstSentAt);
      if (node !== null) {
        this.acks.push({ seq, node, atMs: Date.now() });
        this.nextSeq++;
        firstSentAt = null;
      } else {
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
    // Stopped with a seq never answered for sure: it may have landed, or may yet.
    if (firstSentAt !== null) this.history.unknown(this.name, token(this.name, this.nextSeq), this.producer(this.nextSeq), firstSentAt);
  }

  private producer(seq: number): { id: string; epoch: number; seq: number } {
    return { id: `writer-${this.name}`, epoch: 0, seq };
  }

  /** One attempt; the answering node on success, null on any failure (retried with the same seq). */
  private async appendOnce(seq: number, firstSentAt: number): Promise<string | null> {
    const invokedAt = this.history.now();
    try {
      const response = await fetch(`${this.service.baseUrl}/v1/stream/${this.name}`, {
        method: "POST",
        headers: { "content-type": "text/plain", "producer-id": `writer-${this.name}`, "producer-epoch": "0", "producer-seq": String(seq) },
        body: token(this.name, seq),
        signal: AbortSignal.timeout(APPEND_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      const nextOffset = response.headers.get("stream-next-offset");
      if (response.status === 200 && nextOffset !== null) this.history.acked(this.name, token(this.name, seq), this.producer(seq), firstSentAt, nextOffset);
      if (response.status === 200 && nextOffset === null) this.history.unknown(this.name, token(this.name, seq), this.producer(seq), firstSentAt);
      if (response.status === 204) this.history.duplicate(this.name, token(this.name, seq), this.producer(seq), firstSentAt, invokedAt);
      if (response.status === 200 || response.status === 204) return nodeOf(response.url, ROUTER_NODE_ID);
      this.count(`${response.status}`);
      return null;
    } catch (error) {
      this.count(error instanceof Error ? error.name : "error");
      return null;
    }
  }

  private count(kind: string): void {
    this.failures.set(kind, (this.failures.get(kind) ?? 0) + 1);
  }
}

/**
 * `node-1` from `http://127.0.0.1:8787/n/node-1/v1/stream/...`. A URL without a node address was answered
 * by the router itself, which serves the streams of its local node (the first of NODE_IDS) without a 307:
 * that is `routerNodeId`, or "router" when the caller does not say.
 */
export function nodeOf(url: string, routerNodeId = "router"): string {
  return /\/n\/([^/]+)\//.exec(new URL(url).pathname)?.[1] ?? routerNodeId;
}

/**
 * The whole content of a stream, read through the router from the start until up to date; with `history`,
 * each page is recorded there as a page of the final read (call it once every writer has stopped).
 */
export async function readWhole(service: Service, name: string, history?: ClientHistory): Promise<string> {
  let offset = "-1";
  let text = "";
  for (let pages = 0; pages < 10_000; pages++) {
    const invokedAt = history?.now() ?? 0;
    const response = await fetch(`${service.baseUrl}/v1/stream/${name}?offset=${offset}`);
    if (response.status !== 200) throw new Error(`read ${name} at ${offset}: ${response.status} ${await response.text()}`);
    const page = await response.text();
    text += page;
    const nextOffset = response.headers.get("stream-next-offset");
    const upToDate = response.headers.get("stream-up-to-date") === "true";
    if (history !== undefined && nextOffset !== null) history.read(name, offset, invokedAt, { bytes: page, nextOffset, upToDate }, true);
    offset = nextOffset ?? offset;
    if (upToDate) return text;
  }
  throw new Error(`read ${name}: too many pages`);
}

/**
 * Checks a stream's content against its writer: the tokens are exactly 0, 1, ..., m in order, each once,
 * with every acknowledged one present (m ≥ the last acknowledged) and nothing beyond what was sent. Returns
 * a description of the first problem, or null.
 */
export function checkContent(name: string, content: string, writer: IdempotentWriter): string | null {
  const seqs = [...content.matchAll(/\[([^\]#]+)#(\d+)\]/g)].map((match) => (match[1] === name ? Number(match[2]) : -1));
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i) return `${name}: token ${i} is ${seqs[i]} (content ${content.slice(0, 200)}...)`;
  }
  const lastAcked = writer.acks.at(-1)?.seq ?? -1;
  if (seqs.length - 1 < lastAcked) return `${name}: ${seqs.length} tokens, but seq ${lastAcked} was acknowledged`;
  if (seqs.length > writer.sent + 1) return `${name}: ${seqs.length} tokens, but only ${writer.sent + 1} were ever sent`;
  return null;
}

/** p50, p99 and max of a list of numbers (nearest rank). */
export function percentiles(values: readonly number[]): { p50: number; p99: number; max: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN, n: sorted.length };
}
