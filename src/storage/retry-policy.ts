import { isStoreError } from "./object-store.ts";

// Our own bounded retry policy for object-store requests (aws4fetch's built-in retries are off: they would
// blindly resend conditional PUTs). Exponential backoff with full jitter, capped in attempts and delay.

export interface RetryPolicy {
  /** Total attempts, including the first. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 1_000 };

/** The wait before attempt `attempt` (1-based: the wait before the second attempt is `backoffMs(1)`). */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceilingMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceilingMs);
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// The storage building blocks (WAL writer, sealer, manifests, stream objects) take their retry settings in
// this form: deterministic backoff unless the caller passes its own.
export interface RetryOptions {
  /** Store requests per operation before giving up on retryable failures, including the first (default 4). */
  maxAttempts?: number;
  /** The wait after `failures` retryable failures (default 50 ms doubling per failure, capped at 1 s). */
  backoffMs?: (failures: number) => number;
  /** How to wait; tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
}

export interface ResolvedRetry {
  maxAttempts: number;
  backoffMs: (failures: number) => number;
  sleep: (ms: number) => Promise<void>;
}

export function resolveRetry(options: RetryOptions = {}): ResolvedRetry {
  return {
    maxAttempts: Math.max(1, options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts),
    backoffMs: options.backoffMs ?? ((failures) => Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (failures - 1))),
    sleep: options.sleep ?? realSleep,
  };
}

/** Runs an idempotent store call (a read, a listing), again after retryable failures, within the budget. */
export async function retrying<T>(retry: ResolvedRetry, call: () => Promise<T>): Promise<T> {
  for (let failures = 0; ; ) {
    try {
      return await call();
    } catch (error) {
      if (!isStoreError(error, "retryable") || ++failures >= retry.maxAttempts) throw error;
      await retry.sleep(retry.backoffMs(failures));
    }
  }
}
