// Group commit for the MetaLog's proposals. In a Durable Object every event that writes to SQLite ends in a
// commit of its own (the output gate holds the event's answers until it is durable), and on the local
// runtime that commit, not the rules, is what one proposal costs most: one insert per RPC ran at about
// 2,300/s at 32 connections where the same inserts grouped into one event ran at 4,500-5,400/s
// (docs/benchmarks.md, "The runtime's floor").
//
// So proposals that arrive while a window is open wait for the window's end and are then applied together,
// in arrival order, in one event: one commit for all of them. A proposal that finds no window open is
// applied at once (a lone client pays no wait) and opens one; the window closes at the first turn of the
// event loop that finds nothing waiting. Each proposal is still applied and journaled by itself (its own
// transaction, so a failing one changes nothing of the others), and nobody outside sees an answer before
// the commit that holds it is durable: the output gate covers the whole object.
//
// Bounded: at most `maxWaiting` proposals wait; past that a proposal is answered `whenFull()` at once
// (the MetaLog answers `unavailable`, which a node turns into a 503 with Retry-After).
import type { ProposalCounts } from "../ports/meta-log-client.ts";

export interface GroupCommitOptions<O> {
  /** The most proposals waiting for a window's end. */
  readonly maxWaiting: number;
  /** Runs `task` at the next turn of the event loop (setTimeout 0 in a Durable Object). */
  readonly later: (task: () => void) => void;
  /** The answer to a proposal that finds `maxWaiting` waiting. */
  readonly whenFull: (waiting: number) => O;
}

interface Waiting<I, O> {
  readonly input: I;
  readonly resolve: (output: O) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommit<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private windowOpen = false;
  private readonly counts = { immediate: 0, grouped: 0, groups: 0, refused: 0 };

  constructor(
    private readonly run: (input: I) => O,
    private readonly options: GroupCommitOptions<O>,
  ) {}

  /** `run(input)` now when no window is open, else at the window's end with the others waiting. */
  submit(input: I): O | Promise<O> {
    if (!this.windowOpen) {
      this.openWindow();
      this.counts.immediate++;
      return this.run(input);
    }
    if (this.waiting.length >= this.options.maxWaiting) {
      this.counts.refused++;
      return this.options.whenFull(this.waiting.length);
    }
    return new Promise<O>((resolve, reject) => this.waiting.push({ input, resolve, reject }));
  }

  get stats(): ProposalCounts {
    return { ...this.counts };
  }

  private openWindow(): void {
    this.windowOpen = true;
    this.options.later(() => this.endWindow());
  }

  /** Applies what waited, in arrival order; the window stays open one more turn after a group. */
  private endWindow(): void {
    const group = this.waiting;
    this.waiting = [];
    this.windowOpen = false;
    if (group.length === 0) return;
    this.counts.groups++;
    this.counts.grouped += group.length;
    for (const { input, resolve, reject } of group) {
      try {
        resolve(this.run(input));
      } catch (error) {
        reject(error);
      }
    }
    this.openWindow();
  }
}
