// The one way mink's shells wait for something with a deadline. `KeyedWaiters`: waiters on a key, each
// released by the next `notify(key)`, by its timeout, by its abort signal, or by `shutdown` (a node's
// long-poll and SSE readers at a stream's tail, keyed by stream id; requests parked for a transfer, keyed
// by name; the metadata log's watchers, one key). Bounded: at most `maxWaiters` wait at once; past that a
// waiter is answered at once as if its wait had timed out. The deadlines share one timer
// (deadline-wheel.ts: workerd allows a Durable Object 10,000 active timeouts in all), so a timeout may come
// up to 50 ms late. `settleWithin`: a promise, or a deadline.
import { DeadlineWheel } from "./deadline-wheel.ts";

export type WakeReason = "changed" | "timeout" | "shutdown";

interface Waiter {
  readonly wake: (reason: WakeReason) => void;
}

export class KeyedWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private count = 0;
  private readonly deadlines = new DeadlineWheel<Waiter>((waiter) => waiter.wake("timeout"));

  constructor(private readonly maxWaiters = 10_000) {}

  /** Readers currently waiting. */
  get size(): number {
    return this.count;
  }

  /** Whether anyone waits on `key` now. */
  waiting(key: string): boolean {
    return (this.waiters.get(key)?.size ?? 0) > 0;
  }

  /** At `maxWaiters`: a `wait` now would resolve at once ("timeout"), so a caller that loops must not. */
  get full(): boolean {
    return this.count >= this.maxWaiters;
  }

  /** Resolves on the next `notify(key)`, after `timeoutMs`, or when `signal` aborts (as a timeout). */
  wait(key: string, timeoutMs: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.count >= this.maxWaiters || signal?.aborted === true) return Promise.resolve("timeout");
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (set === undefined) {
        set = new Set();
        this.waiters.set(key, set);
      }
      const waiters = set;
      const onAbort = (): void => waiter.wake("timeout");
      const waiter: Waiter = {
        wake: (reason) => {
          if (!waiters.delete(waiter)) return;
          this.count--;
          if (waiters.size === 0 && this.waiters.get(key) === waiters) this.waiters.delete(key);
          this.deadlines.remove(waiter);
          signal?.removeEventListener("abort", onAbort);
          resolve(reason);
        },
      };
      waiters.add(waiter);
      this.count++;
      this.deadlines.add(waiter, timeoutMs);
      signal?.addEventListener("abort", onAbort);
    });
  }

  /** Wakes every waiter on the key (for readers: an acknowledged append, a close, a delete). */
  notify(key: string): void {
    const set = this.waiters.get(key);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter.wake("changed");
  }

  /** Wakes everyone (the node is stopping). */
  shutdown(): void {
    for (const set of [...this.waiters.values()]) for (const waiter of [...set]) waiter.wake("shutdown");
  }
}

/** Resolves when `work` settles or after `timeoutMs`, whichever is first; never rejects. */
export async function settleWithin(work: Promise<unknown>, timeoutMs: number): Promise<"settled" | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  const settled = work.then(
    () => "settled" as const,
    () => "settled" as const,
  );
  const outcome = await Promise.race([settled, timeout]);
  if (timer !== null) clearTimeout(timer);
  return outcome;
}
