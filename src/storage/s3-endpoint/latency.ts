// Injected latency for the embedded S3 endpoint: R2 answers in tens of milliseconds, this endpoint on
// loopback in about one, so `npm run dev`, the benchmarks and the end-to-end harness can ask it to wait
// LATENCY_MS plus a uniform draw from [0, JITTER_MS) before it handles each request, once per request: one
// round trip to R2. Both are bindings set by scripts/embedded-s3.ts, which validates them (whole
// milliseconds, at most 60,000); absent or 0, a request waits for nothing, not even a zero-length timer.
// Pure (no Workers types): the node tests import it too.

/** The bindings that set the delay; Miniflare passes numbers as JSON bindings, text as text. */
export interface LatencyBindings {
  /** Milliseconds every request waits before it is handled. */
  LATENCY_MS?: number | string;
  /** A uniform draw from [0, JITTER_MS) milliseconds added to each request's wait. */
  JITTER_MS?: number | string;
}

/** How long this request waits, in milliseconds: 0 when neither binding is set. */
export function requestDelayMs(env: LatencyBindings, random: () => number = Math.random): number {
  const latency = bindingMs(env.LATENCY_MS, "LATENCY_MS");
  const jitter = bindingMs(env.JITTER_MS, "JITTER_MS");
  return jitter === 0 ? latency : latency + random() * jitter;
}

/** Resolves after `ms` milliseconds; undefined (nothing to await, no timer) when `ms` is 0. */
export function injectedDelay(ms: number): Promise<void> | undefined {
  if (ms <= 0) return undefined;
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function bindingMs(value: number | string | undefined, name: string): number {
  if (value === undefined || value === "") return 0;
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`${name} must be a non-negative number of milliseconds (got ${JSON.stringify(value)})`);
  return ms;
}
