// The client's one retry loop: bounded attempts, exponential backoff with jitter that honours the
// server's Retry-After, and an immediate retry when the caller has learnt something new (another leader).
// Time and randomness are parameters, so tests run the loop on a virtual clock.
import type { TableClientError } from "./errors.ts";

/** Most attempts of one request, the first included; then the last error is the answer. */
export const MAX_ATTEMPTS = 6;
/** The backoff before the first retry; it doubles per retry. */
export const BACKOFF_BASE_MS = 100;
/** The longest backoff the doubling reaches. */
export const BACKOFF_CAP_MS = 5_000;
/** The longest Retry-After honoured: a server asking for more is waited on this long, then asked again. */
export const MAX_RETRY_AFTER_MS = 30_000;

export interface Timing {
  readonly sleep: (ms: number) => Promise<void>;
  /** Uniform in [0, 1), like Math.random. */
  readonly random: () => number;
}

/** What one attempt came to. */
export type Attempt<T> =
  | { readonly kind: "done"; readonly value: T }
  | { readonly kind: "fail"; readonly error: TableClientError }
  /** Try again: `now` after learning something that changes the next attempt, else after a backoff. */
  | { readonly kind: "again"; readonly error: TableClientError; readonly now?: boolean; readonly retryAfterMs?: number | null };

/**
 * Equal jitter: half the doubled delay fixed, half random, so retries of many clients spread out but none
 * comes back at once; never below the server's Retry-After (bounded by MAX_RETRY_AFTER_MS).
 */
export function backoffDelayMs(retryIndex: number, retryAfterMs: number | null, random: () => number): number {
  const doubledMs = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retryIndex);
  const jitteredMs = doubledMs / 2 + (random() * doubledMs) / 2;
  return Math.max(jitteredMs, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/**
 * Runs `attempt` until it is done or fails, at most MAX_ATTEMPTS times. The error given up with says
 * whether any attempt may have been applied (a lost answer earlier, a refusal later).
 */
export async function withRetries<T>(timing: Timing, attempt: (index: number) => Promise<Attempt<T>>): Promise<T> {
  let outcomeUnknown = false;
  let backoffs = 0;
  for (let index = 0; ; index++) {
    const result = await attempt(index);
    if (result.kind === "done") return result.value;
    outcomeUnknown ||= result.error.outcomeUnknown;
    if (result.kind === "fail" || index + 1 >= MAX_ATTEMPTS) throw result.error.withOutcomeUnknown(outcomeUnknown);
    if (result.now === true) continue;
    await timing.sleep(backoffDelayMs(backoffs, result.retryAfterMs ?? null, timing.random));
    backoffs++;
  }
}
