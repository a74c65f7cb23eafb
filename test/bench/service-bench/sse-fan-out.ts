// Delivery latency to many SSE readers of one stream: open `readers` connections at `offset=now`, wait
// until each has its first event (the control event at the tail, SSE-7), then append numbered messages at
// a fixed interval and time, per reader, from each append's send to the receipt of the data event that
// carries it (text/plain: several appends may arrive in one event; each `seq=<n>;` in it counts).
import { setMaxListeners } from "node:events";
import { Client, Pool } from "undici";
import { append, createStream, payload, requestFollowing, streamPath } from "./http.ts";
import { eventually } from "../../support/eventually.ts";
import { ErrorTally, sleep, summarize, type LatencySummary } from "./stats.ts";

export interface FanOutOptions {
  readers: number;
  appends: number;
  intervalMs: number;
  sizeBytes: number;
  /** Bound on opening every reader (headers and first event). */
  openTimeoutMs: number;
  /** Bound on waiting for the last deliveries after the last append. */
  drainTimeoutMs: number;
}

export interface FanOutResult {
  readersRequested: number;
  /** Readers that answered 200 and sent their first event in time. */
  readersReady: number;
  readerErrors: ErrorTally;
  appendsAcknowledged: number;
  appendErrors: ErrorTally;
  /** Reader x message deliveries seen, and the number expected (ready readers x acknowledged appends). */
  delivered: number;
  expected: number;
  /** Readers that saw every acknowledged append. */
  readersComplete: number;
  latency: LatencySummary;
}

const OPEN_BATCH = 100;

interface Reader {
  ready: boolean;
  /** Ready when the appends began: only these readers' deliveries are measured. */
  counted: boolean;
  received: Set<number>;
}

export async function measureSseFanOut(baseUrl: string, runId: string, options: FanOutOptions): Promise<FanOutResult> {
  const path = streamPath(`${runId}-fan-out`);
  // One pool for the readers (a connection each, plus slack), one client for the writer.
  const pool = new Pool(baseUrl, { connections: options.readers + 8, keepAliveTimeout: 60_000 });
  const writer = new Client(baseUrl, { keepAliveTimeout: 60_000 });
  const abort = new AbortController();
  setMaxListeners(options.readers + 16, abort.signal); // one listener per reader is expected here
  const sentAtMs = new Map<number, number>();
  /** Every delivery seen; only those of acknowledged appends count (a timed-out append may still land). */
  const deliveries: { seq: number; latencyMs: number }[] = [];
  const readerErrors = new ErrorTally();
  const readers: Reader[] = [];
  const readerTasks: Promise<void>[] = [];

  const runReader = async (reader: Reader, onFirstEvent: () => void): Promise<void> => {
    const response = await requestFollowing(pool, {
      path: `${path}?offset=now&live=sse`,
      method: "GET",
      signal: abort.signal,
      headersTimeout: options.openTimeoutMs,
      bodyTimeout: 0, // an idle SSE stream is normal; the phase's abort ends it
    });
    if (response.statusCode !== 200) {
      const text = await response.body.text();
      throw new Error(`GET ${path} live=sse: ${response.statusCode} ${text.slice(0, 200)}`);
    }
    response.body.setEncoding("utf8");
    let buffer = "";
    for await (const chunk of response.body as AsyncIterable<string>) {
      const receivedAt = performance.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!reader.ready) {
          reader.ready = true;
          onFirstEvent();
        }
        if (!/^event:\s*data$/m.test(event)) continue;
        for (const match of event.matchAll(/seq=(\d+);/g)) {
          const seq = Number(match[1]);
          const sent = sentAtMs.get(seq);
          if (sent === undefined || !reader.counted || reader.received.has(seq)) continue;
          reader.received.add(seq);
          deliveries.push({ seq, latencyMs: receivedAt - sent });
        }
      }
    }
  };

  try {
    await createStream(writer, path);
    // Open the readers in batches; each batch waits for its readers' first events (bounded).
    const openDeadline = performance.now() + options.openTimeoutMs;
    for (let i = 0; i < options.readers && performance.now() < openDeadline; i += OPEN_BATCH) {
      const batch = Math.min(OPEN_BATCH, options.readers - i);
      const firstEvents: Promise<void>[] = [];
      for (let j = 0; j < batch; j++) {
        const reader: Reader = { ready: false, counted: false, received: new Set() };
        readers.push(reader);
        let signalReady = (): void => undefined;
        firstEvents.push(new Promise<void>((resolve) => (signalReady = resolve)));
        const task = runReader(reader, signalReady).catch((error: unknown) => {
          if (!abort.signal.aborted) readerErrors.add(error);
          signalReady(); // a failed reader does not hold up the others
        });
        readerTasks.push(task);
      }
      await Promise.race([Promise.all(firstEvents), sleep(Math.max(0, openDeadline - performance.now()))]);
    }
    const ready = readers.filter((reader) => reader.ready);
    for (const reader of ready) reader.counted = true;

    const appendErrors = new ErrorTally();
    const acknowledgedSeqs = new Set<number>();
    let acknowledged = 0;
    const started = performance.now();
    for (let seq = 0; seq < options.appends; seq++) {
      const due = started + seq * options.intervalMs;
      if (due > performance.now()) await sleep(due - performance.now());
      sentAtMs.set(seq, performance.now());
      try {
        await append(writer, path, payload(`seq=${seq};t=${Date.now()};`, options.sizeBytes));
        acknowledgedSeqs.add(seq);
        acknowledged++;
      } catch (error) {
        appendErrors.add(error);
      }
    }
    // Wait for the deliveries still on their way (bounded).
    const expectedPerReader = acknowledged;
    const receivedAcknowledged = (reader: Reader): number => [...reader.received].filter((seq) => acknowledgedSeqs.has(seq)).length;
    await eventually(() => ready.every((reader) => receivedAcknowledged(reader) >= expectedPerReader), {
      timeoutMs: options.drainTimeoutMs,
      what: "the last deliveries",
    }).catch(() => undefined); // the ones still missing are counted below

    const delivered = ready.reduce((sum, reader) => sum + receivedAcknowledged(reader), 0);
    return {
      readersRequested: options.readers,
      readersReady: ready.length,
      readerErrors,
      appendsAcknowledged: acknowledged,
      appendErrors,
      delivered,
      expected: ready.length * acknowledged,
      readersComplete: ready.filter((reader) => receivedAcknowledged(reader) >= expectedPerReader).length,
      latency: summarize(deliveries.filter((d) => acknowledgedSeqs.has(d.seq)).map((d) => d.latencyMs)),
    };
  } finally {
    abort.abort();
    await Promise.race([Promise.allSettled(readerTasks), sleep(5_000)]);
    await Promise.allSettled([pool.destroy(), writer.destroy()]);
  }
}
