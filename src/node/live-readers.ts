// Long-poll and SSE readers waiting at a stream's tail. A waiter is released by the next acknowledged
// append or close of that stream (never of its source or its forks), by its deletion, or by its timeout.
// Bounded: a node holds at most `maxWaiters` waiting readers; past that a reader is answered at once as
// if its wait had timed out.

export type WakeReason = "changed" | "timeout" | "shutdown";

interface Waiter {
  readonly wake: (reason: WakeReason) => void;
}

export class LiveReaders {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private count = 0;

  constructor(private readonly maxWaiters = 10_000) {}

  /** Readers currently waiting. */
  get size(): number {
    return this.count;
  }

  /** Resolves on the next `notify(streamId)`, after `timeoutMs`, or when `signal` aborts (as a timeout). */
  wait(streamId: string, timeoutMs: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.count >= this.maxWaiters || signal?.aborted === true) return Promise.resolve("timeout");
    return new Promise((resolve) => {
      let set = this.waiters.get(streamId);
      if (set === undefined) {
        set = new Set();
        this.waiters.set(streamId, set);
      }
      const waiters = set;
      const onAbort = (): void => waiter.wake("timeout");
      const waiter: Waiter = {
        wake: (reason) => {
          if (!waiters.delete(waiter)) return;
          this.count--;
          if (waiters.size === 0 && this.waiters.get(streamId) === waiters) this.waiters.delete(streamId);
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(reason);
        },
      };
      waiters.add(waiter);
      this.count++;
      const timer = setTimeout(() => waiter.wake("timeout"), Math.max(0, timeoutMs));
      signal?.addEventListener("abort", onAbort);
    });
  }

  /** Wakes every reader of the stream (an acknowledged append, a close, a delete). */
  notify(streamId: string): void {
    const set = this.waiters.get(streamId);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter.wake("changed");
  }

  /** Wakes everyone (the node is stopping). */
  shutdown(): void {
    for (const set of [...this.waiters.values()]) for (const waiter of [...set]) waiter.wake("shutdown");
  }
}
