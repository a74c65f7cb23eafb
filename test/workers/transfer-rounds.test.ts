// Transfers under load, invariants 2 and 3 (docs/architecture.md): one stream is handed back and forth
// between two nodes 50 times while a writer appends without pause and two live readers (long-poll and SSE)
// tail it, all through the router as a client would (following 307s, retrying 409/503). No acknowledged
// append is lost or duplicated, offsets continue without a gap, and each reader sees every byte once, in
// order. Appends carry an idempotent producer, so a retry after an unclear answer cannot add a duplicate.
import { describe, expect, it } from "vitest";
import { routeRequest, toNodeAddress, type RouterDeps } from "./router-as-worker.ts";
import { ViewCache } from "../../src/router/view-cache.ts";
import { eventually } from "../support/eventually.ts";
import { begin, createOn, e, meta, NODES, openedBy, ORIGIN } from "./transfer-support.ts";

const NAME = "r/rounds";
const ROUNDS = 50;
const router: RouterDeps = { cache: new ViewCache({ ttlMs: 1_000 }), lookup: (name) => meta.lookupStream({ name }) };
/** How long one request keeps being retried while a transfer settles (409, 503, a 307 left over). */
const SETTLE_TIMEOUT_MS = 15_000;

/** An answer and the node that gave it (the router's local node when it served the request itself). */
interface Answer {
  readonly response: Response;
  readonly nodeId: string;
}

/** One request through the router, following 307s to node addresses; 409 and 503 are retried. */
async function sendTo(method: string, query: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return eventually(
    async () => {
      const request = (url: string): Request => new Request(url, { method, headers, body: body ?? null });
      let response = await routeRequest(e, request(`${ORIGIN}/v1/stream/${NAME}${query}`), router);
      let nodeId = NODES[0]!; // the router's local node (the first of NODE_IDS)
      for (let hop = 0; response.status === 307 && hop < 5; hop++) {
        const location = response.headers.get("location") ?? "";
        await response.body?.cancel();
        nodeId = /^\/n\/([^/]+)\//.exec(new URL(location).pathname)?.[1] ?? "";
        response = await toNodeAddress(e, nodeId, request(location));
      }
      if (response.status !== 409 && response.status !== 503 && response.status !== 307) return { response, nodeId };
      await response.body?.cancel();
      return null;
    },
    { what: `an answer to ${method} ${query} other than 409, 503 or 307`, timeoutMs: SETTLE_TIMEOUT_MS, errors: "fail" },
  );
}

async function send(method: string, query: string, headers: Record<string, string> = {}, body?: string): Promise<Response> {
  return (await sendTo(method, query, headers, body)).response;
}

interface Acked {
  readonly body: string;
  readonly nextOffset: string;
  /** The node that acknowledged it. */
  readonly nodeId: string;
}

/** Appends `m<seq>,` with producer seq = seq until stopped, pushing every acknowledged append to `acked`, in order. */
async function writer(stop: () => boolean, acked: Acked[]): Promise<Acked[]> {
  for (let seq = 0; !stop(); seq++) {
    const body = `m${seq},`;
    const headers = { "content-type": "text/plain", "producer-id": "w", "producer-epoch": "0", "producer-seq": String(seq) };
    const { response, nodeId } = await sendTo("POST", "", headers, body);
    await response.body?.cancel();
    if (response.status !== 200 && response.status !== 204) throw new Error(`append ${seq} answered ${response.status}`);
    acked.push({ body, nextOffset: response.headers.get("stream-next-offset") ?? "", nodeId });
  }
  return acked;
}

/** A long-poll reader from the start until `done(offset)`; the bytes it saw. */
async function longPollReader(done: (offset: string) => boolean): Promise<string> {
  let offset = "-1";
  let seen = "";
  while (!done(offset)) {
    const response = await send("GET", `?offset=${offset}&live=long-poll`);
    if (response.status === 200) seen += await response.text();
    else await response.body?.cancel();
    if (response.headers.get("stream-closed") === "true") return seen;
    if (response.status !== 200 && response.status !== 204) throw new Error(`long-poll answered ${response.status}`);
    offset = response.headers.get("stream-next-offset") ?? offset;
  }
  return seen;
}

/** An SSE reader that reconnects from its last offset whenever the event stream ends. */
async function sseReader(done: (offset: string) => boolean): Promise<string> {
  let offset = "-1";
  let seen = "";
  const decoder = new TextDecoder();
  while (!done(offset)) {
    const response = await send("GET", `?offset=${offset}&live=sse`);
    if (response.status !== 200 || response.body === null) throw new Error(`SSE answered ${response.status}`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let buffer = "";
    let pendingData: string | null = null;
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = event.split("\n");
        const type = lines.find((line) => line.startsWith("event: "))?.slice(7);
        const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n");
        // Data counts once its control event (the offset after it) arrived: a reconnect resumes there.
        if (type === "data") pendingData = data;
        if (type === "control") {
          if (pendingData !== null) seen += pendingData;
          pendingData = null;
          const control = JSON.parse(data) as { streamNextOffset: string; streamClosed?: boolean };
          offset = control.streamNextOffset;
          if (control.streamClosed === true) {
            await reader.cancel();
            return seen;
          }
        }
      }
      if (done(offset)) {
        await reader.cancel();
        break;
      }
    }
  }
  return seen;
}

describe("transfers under load", () => {
  it(`${ROUNDS} transfers back and forth during appends and live readers: nothing lost, duplicated or reordered`, { timeout: 120_000 }, async () => {
    await createOn(NODES[0]!, NAME, "");
    let stopped = false;
    let finalOffset: string | null = null;
    const reachedEnd = (offset: string): boolean => finalOffset !== null && offset === finalOffset;
    const ackedSoFar: Acked[] = [];
    const writing = writer(() => stopped, ackedSoFar);
    const longPolling = longPollReader(reachedEnd);
    const streaming = sseReader(reachedEnd);

    let owner = NODES[0]!;
    const startedMs = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      const target = owner === NODES[0] ? NODES[1]! : NODES[0]!;
      await begin(NAME, target);
      await openedBy(NAME, target);
      owner = target;
      // Let the writer append to this owner too: wait for an append acknowledged by it after it opened.
      const openedAt = ackedSoFar.length;
      await eventually(() => ackedSoFar.slice(openedAt).some((a) => a.nodeId === target), {
        what: `round ${round}: an append acknowledged by ${target}`,
        timeoutMs: SETTLE_TIMEOUT_MS,
      });
    }
    console.log(`${ROUNDS} transfers in ${Date.now() - startedMs} ms`);
    stopped = true;
    const acked = await writing;
    finalOffset = acked.at(-1)?.nextOffset ?? null;
    // The writer closes the stream: readers waiting at its end are woken by the close.
    const closed = await send("POST", "", { "content-type": "text/plain", "stream-closed": "true" });
    expect(closed.status).toBe(204);
    expect(closed.headers.get("stream-next-offset")).toBe(finalOffset);
    const [polled, streamed] = await Promise.all([longPolling, streaming]);

    const expected = acked.map((a) => a.body).join("");
    expect(acked.length).toBeGreaterThan(ROUNDS);
    const whole = await send("GET", "?offset=-1");
    expect(await whole.text()).toBe(expected);
    // Offsets continue without a gap: each acknowledgement's next offset is the previous one plus its bytes.
    const ends = acked.map((a) => Number.parseInt(a.nextOffset.split("_").at(-1) ?? "", 10));
    let total = 0;
    acked.forEach((a, i) => {
      total += a.body.length;
      expect(ends[i]).toBe(total);
    });
    expect(polled).toBe(expected);
    expect(streamed).toBe(expected);
    const record = (await meta.lookupStream({ name: NAME })).stream;
    expect(record).toMatchObject({ owner, ownership: "opened" });
  });
});
