// The two append phases: sequential latency at one connection, and throughput at N connections over N
// streams for a fixed time. Both bounded in count and time; failures are counted and reported.
import { Client, Pool } from "undici";
import { append, createStream, payload, REQUEST_TIMEOUT_MS, streamPath } from "./http.ts";
import { ErrorTally, errorText, sleep, summarize, type LatencySummary } from "./stats.ts";

export interface LatencyResult {
  latency: LatencySummary;
  /** Appends answered 2xx during the timed loop. */
  acknowledged: number;
  errors: ErrorTally;
  elapsedMs: number;
}

export interface ThroughputResult {
  acknowledged: number;
  errors: ErrorTally;
  elapsedMs: number;
  appendsPerSecond: number;
  latency: LatencySummary;
}

const WARM_UP_APPENDS = 20;
const SETUP_ATTEMPTS = 3;
const SETUP_RETRY_MS = 200;

/**
 * A request of a phase's untimed setup, tried up to SETUP_ATTEMPTS times: the reference server (0.3.7, file
 * store) answers 404 to about 2 to 4 % of first appends sent right after their stream's create was
 * acknowledged (64 creates, 8 at a time), and the same append 20 ms later succeeds; without a retry that
 * ended the whole phase. Each retry is reported on stderr.
 */
async function setupRequest(what: string, request: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (attempt >= SETUP_ATTEMPTS) throw error;
      console.error(`  setup: ${what} failed (${errorText(error)}), retrying in ${SETUP_RETRY_MS} ms`);
      await sleep(SETUP_RETRY_MS);
    }
  }
}

/** Sequential appends of `sizeBytes` to one stream over one keep-alive connection; stops at `maxMs`. */
export async function measureAppendLatency(
  baseUrl: string,
  runId: string,
  options: { appends: number; sizeBytes: number; maxMs: number },
  onTimedStart: () => void | Promise<void>,
): Promise<LatencyResult> {
  const client = new Client(baseUrl, { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: REQUEST_TIMEOUT_MS });
  try {
    const path = streamPath(`${runId}-latency`);
    await createStream(client, path);
    // Warm-up (not timed, not counted): first requests pay for cold paths on both servers.
    for (let i = 0; i < WARM_UP_APPENDS; i++) await setupRequest(`warm-up append to ${path}`, () => append(client, path, payload(`warm-${i};`, options.sizeBytes)));
    await onTimedStart();
    const samplesMs: number[] = [];
    const errors = new ErrorTally();
    const started = performance.now();
    for (let i = 0; i < options.appends && performance.now() - started < options.maxMs; i++) {
      const sent = performance.now();
      try {
        await append(client, path, payload(`seq=${i};`, options.sizeBytes));
        samplesMs.push(performance.now() - sent);
      } catch (error) {
        errors.add(error);
      }
    }
    return { latency: summarize(samplesMs), acknowledged: samplesMs.length, errors, elapsedMs: performance.now() - started };
  } finally {
    await client.destroy();
  }
}

/** `connections` workers, one stream each, appending back to back through one pool for `durationMs`. */
export async function measureAppendThroughput(
  baseUrl: string,
  runId: string,
  options: { connections: number; durationMs: number; sizeBytes: number },
  onTimedStart: () => void | Promise<void>,
): Promise<ThroughputResult> {
  const pool = new Pool(baseUrl, { connections: options.connections, keepAliveTimeout: 60_000, headersTimeout: REQUEST_TIMEOUT_MS });
  try {
    const paths = Array.from({ length: options.connections }, (_, i) => streamPath(`${runId}-load-${i}`));
    // Create and warm each stream (one append), 8 at a time.
    for (let i = 0; i < paths.length; i += 8) {
      await Promise.all(paths.slice(i, i + 8).map(async (path) => {
        await createStream(pool, path);
        await setupRequest(`warm-up append to ${path}`, () => append(pool, path, payload("warm;", options.sizeBytes)));
      }));
    }
    await onTimedStart();
    const errors = new ErrorTally();
    const samplesMs: number[] = [];
    const started = performance.now();
    const deadline = started + options.durationMs;
    await Promise.all(paths.map(async (path, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const sent = performance.now();
        try {
          await append(pool, path, payload(`w=${worker};seq=${i};`, options.sizeBytes));
          samplesMs.push(performance.now() - sent);
        } catch (error) {
          errors.add(error);
        }
      }
    }));
    // In-flight requests at the deadline finish (bounded by REQUEST_TIMEOUT_MS) and count.
    const elapsedMs = performance.now() - started;
    return {
      acknowledged: samplesMs.length,
      errors,
      elapsedMs,
      appendsPerSecond: (samplesMs.length * 1000) / elapsedMs,
      latency: summarize(samplesMs),
    };
  } finally {
    await pool.destroy();
  }
}
