// Virtual time. The simulation owns the clock: `now` moves only when the scheduler fires the next due
// timer, and while a seed runs the global timer functions (setTimeout, setInterval, setImmediate and their
// clear functions), Date.now and Math.random are replaced, so nothing in mink can read real time or real
// randomness by accident. `install` returns the function that puts the real ones back.
import type { Prng } from "./prng.ts";

/** The real setImmediate, captured at load: the scheduler drains microtasks with it between steps. */
const realSetImmediate = globalThis.setImmediate;

/** Resolves after every microtask queued so far (and every one they queue) has run. */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

interface Timer {
  readonly id: number;
  dueMs: number;
  readonly seq: number;
  readonly callback: () => void;
  readonly repeatMs: number | null;
  readonly label: string;
}

/** What a replaced setTimeout returns: enough of Node's Timeout for the code that handles one. */
class VirtualTimeout {
  constructor(readonly id: number) {}
  unref(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  hasRef(): boolean {
    return true;
  }
  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

export class VirtualClock {
  private current: number;
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;
  private nextSeq = 0;

  constructor(startMs: number) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  schedule(delayMs: number, callback: () => void, repeatMs: number | null = null, label = "timer"): number {
    const id = this.nextId++;
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? Math.floor(delayMs) : 0;
    this.timers.set(id, { id, dueMs: this.current + delay, seq: this.nextSeq++, callback, repeatMs, label });
    return id;
  }

  cancel(handle: unknown): void {
    const id = typeof handle === "number" ? handle : handle instanceof VirtualTimeout ? handle.id : null;
    if (id !== null) this.timers.delete(id);
  }

  /** The timer that fires next: the earliest due, then the earliest scheduled. */
  nextDue(): { dueMs: number; label: string } | null {
    const next = this.peek();
    return next === null ? null : { dueMs: next.dueMs, label: next.label };
  }

  /** Advances the clock to the next due timer and runs it. False when no timer is pending. */
  fireNext(): boolean {
    const timer = this.peek();
    if (timer === null) return false;
    this.current = Math.max(this.current, timer.dueMs);
    if (timer.repeatMs === null) {
      this.timers.delete(timer.id);
    } else {
      timer.dueMs = this.current + Math.max(1, timer.repeatMs);
    }
    timer.callback();
    return true;
  }

  private peek(): Timer | null {
    let best: Timer | null = null;
    for (const timer of this.timers.values()) {
      if (best === null || timer.dueMs < best.dueMs || (timer.dueMs === best.dueMs && timer.seq < best.seq)) best = timer;
    }
    return best;
  }

  /**
   * Replaces the global timers, Date.now and Math.random for the duration of one seed. Returns the
   * function that restores the real ones.
   */
  install(random: Prng): () => void {
    const saved = {
      setTimeout: globalThis.setTimeout,
      clearTimeout: globalThis.clearTimeout,
      setInterval: globalThis.setInterval,
      clearInterval: globalThis.clearInterval,
      setImmediate: globalThis.setImmediate,
      clearImmediate: globalThis.clearImmediate,
      dateNow: Date.now,
      mathRandom: Math.random,
    };
    const g = globalThis as unknown as Record<string, unknown>;
    g["setTimeout"] = (callback: (...args: unknown[]) => void, delayMs?: number, ...args: unknown[]) =>
      new VirtualTimeout(this.schedule(delayMs ?? 0, () => callback(...args), null, "setTimeout"));
    g["setInterval"] = (callback: (...args: unknown[]) => void, delayMs?: number, ...args: unknown[]) =>
      new VirtualTimeout(this.schedule(delayMs ?? 0, () => callback(...args), delayMs ?? 0, "setInterval"));
    g["setImmediate"] = (callback: (...args: unknown[]) => void, ...args: unknown[]) =>
      new VirtualTimeout(this.schedule(0, () => callback(...args), null, "setImmediate"));
    g["clearTimeout"] = (handle: unknown) => this.cancel(handle);
    g["clearInterval"] = (handle: unknown) => this.cancel(handle);
    g["clearImmediate"] = (handle: unknown) => this.cancel(handle);
    Date.now = () => this.current;
    Math.random = () => random.float();
    return () => {
      g["setTimeout"] = saved.setTimeout;
      g["clearTimeout"] = saved.clearTimeout;
      g["setInterval"] = saved.setInterval;
      g["clearInterval"] = saved.clearInterval;
      g["setImmediate"] = saved.setImmediate;
      g["clearImmediate"] = saved.clearImmediate;
      Date.now = saved.dateNow;
      Math.random = saved.mathRandom;
    };
  }
}
