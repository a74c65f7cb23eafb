// The one way a test waits: for a condition, with a deadline. No fixed sleeps, no fixed-interval polls.
// The check runs at once, then again after pauses that grow (1 ms doubling up to 50 ms), so a condition
// that holds soon is seen soon, and a slow machine is not hammered. On the deadline the last failure (or
// the last value) is part of the error, so a red test says what it was waiting for.
//
// A check that throws counts as "not yet" by default (a node that is restarting, a record not there yet).
// Where a throw is a real failure (an `expect` inside the check, a request that must not fail), pass
// `errors: "fail"`: the first throw ends the wait with that error, as it would without the wait. A check
// that wants the deadline's error to say what it last saw throws `new NotYet(description)`: always retried.

export interface EventuallyOptions {
  /** How long to keep trying (default 10 s). */
  timeoutMs?: number;
  /** What is awaited, for the error message. */
  what?: string;
  /** What a throw of `check` means: "retry" (default, not yet) or "fail" (rethrown at once). */
  errors?: "retry" | "fail";
}

/** Thrown by a check: not done yet, and why (retried whatever `errors` says; the message ends up in the timeout error). */
export class NotYet extends Error {
  override readonly name = "NotYet";
}

const FIRST_PAUSE_MS = 1;
const LONGEST_PAUSE_MS = 50;

/**
 * Resolves with the first value of `check` that is neither `false`, `undefined` nor `null` and did not
 * throw; rejects once `timeoutMs` passed without one (or at the first throw, with `errors: "fail"`).
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, false | null | undefined>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let pauseMs = FIRST_PAUSE_MS;
  let last: unknown = undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== null && value !== undefined) return value as Exclude<T, false | null | undefined>;
      last = value;
    } catch (error) {
      if (options.errors === "fail" && !(error instanceof NotYet)) throw error;
      last = error;
    }
    if (Date.now() >= deadline) {
      const reason = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? "a condition"} (last: ${reason})`, {
        cause: last,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pauseMs, Math.max(0, deadline - Date.now()))));
    pauseMs = Math.min(LONGEST_PAUSE_MS, pauseMs * 2);
  }
}

/**
 * Whether a promise is still pending after the event loop has drained `turns` times (macrotask turns):
 * "not answered yet" without a wall-clock sleep. Resolves true when it is still pending.
 */
export async function stillPending(promise: Promise<unknown>, turns = 20): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < turns && !settled; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  return !settled;
}
