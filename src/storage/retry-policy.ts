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
