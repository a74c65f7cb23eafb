// The scheduler: every step it gathers what could happen next — complete one pending operation (an object
// store request, a metadata call, a client request reaching a node, or an answer held back), fire the next
// virtual timer, or one of the actors' moves (a client starting an action, a crash, a restart, a transfer,
// a drain) — picks one with the seed's weights, runs it, and drains every microtask before the next step.
// So the only concurrency is the one the scheduler chooses, and every await in mink that waits on I/O or
// time is a point where the scheduler may interleave anything else.
//
// New kinds of activity (failover's coordinator, tables' clients, new faults) join as actors: anything
// with a `choices` method, registered with `addActor`.
import type { Prng } from "./prng.ts";
import type { Trace } from "./trace.ts";
import { drainMicrotasks, type VirtualClock } from "./virtual-time.ts";

/** What the run is doing: making trouble, settling (no faults, no new work), or reading everything back. */
export type Phase = "active" | "settle" | "final";

/** One move an actor offers; `category` selects the weight (see `Weights`). */
export interface Choice {
  readonly category: string;
  readonly label: string;
  readonly run: () => void;
}

export interface Actor {
  readonly name: string;
  /** The moves this actor can make now. */
  choices(phase: Phase): readonly Choice[];
}

export type OpKind = "store" | "meta" | "net" | "reply";

/**
 * An operation waiting for the scheduler: its effect (or its answer) happens when it is picked. Pending
 * operations complete in any order, but virtual time does not pass the earliest one's deadline (its
 * latency) while it is pending: a timer due later cannot fire first, so a 60 s client timeout never
 * overtakes a request that takes a few milliseconds.
 */
export interface PendingOp {
  readonly kind: OpKind;
  /** Who issued it (an incarnation `node@epoch`, or a client). */
  readonly owner: string;
  readonly label: string;
  readonly run: () => void;
}

/** Weight per category; a category with no weight is never chosen. */
export type Weights = Readonly<Record<string, number>>;

export class IoQueue {
  private readonly ops = new Map<number, PendingOp & { readonly deadlineMs: number }>();
  private nextId = 1;

  constructor(
    private readonly clock: VirtualClock,
    private readonly prng: Prng,
  ) {}

  add(op: PendingOp): void {
    this.ops.set(this.nextId++, { ...op, deadlineMs: this.clock.now() + this.latencyMs() });
  }

  /** Mostly a few milliseconds; now and then much slower (a zombie's write may land seconds later). */
  private latencyMs(): number {
    const x = this.prng.float();
    if (x < 0.01) return this.prng.between(500, 5_000);
    if (x < 0.06) return this.prng.between(20, 500);
    return this.prng.between(1, 20);
  }

  /** The earliest deadline of a pending operation (Infinity when none is pending). */
  earliestDeadline(): number {
    let earliest = Infinity;
    for (const op of this.ops.values()) earliest = Math.min(earliest, op.deadlineMs);
    return earliest;
  }

  get size(): number {
    return this.ops.size;
  }

  /** Pending operations of one kind, oldest first, with their ids. */
  ofKind(kind: OpKind): [number, PendingOp][] {
    const found: [number, PendingOp][] = [];
    for (const entry of this.ops) if (entry[1].kind === kind) found.push(entry);
    return found;
  }

  take(id: number): PendingOp {
    const op = this.ops.get(id);
    if (op === undefined) throw new Error(`no pending op ${id}`);
    this.ops.delete(id);
    return op;
  }
}

const OP_KINDS: readonly OpKind[] = ["store", "meta", "net", "reply"];

export class Scheduler {
  readonly io: IoQueue;
  private readonly actors: Actor[] = [];
  step = 0;

  constructor(
    private readonly prng: Prng,
    private readonly clock: VirtualClock,
    private readonly trace: Trace,
    /** The weights in force; the runner changes them between phases. */
    public weights: Weights,
  ) {
    this.io = new IoQueue(clock, prng.fork());
  }

  addActor(actor: Actor): void {
    this.actors.push(actor);
  }

  /** Every move possible now, grouped by category. */
  private gather(phase: Phase): Map<string, Choice[]> {
    const byCategory = new Map<string, Choice[]>();
    const add = (choice: Choice): void => {
      const list = byCategory.get(choice.category);
      if (list === undefined) byCategory.set(choice.category, [choice]);
      else list.push(choice);
    };
    for (const kind of OP_KINDS) {
      for (const [id, op] of this.io.ofKind(kind)) {
        add({ category: kind, label: `${kind} ${op.owner} ${op.label}`, run: () => this.io.take(id).run() });
      }
    }
    const next = this.clock.nextDue();
    if (next !== null && next.dueMs <= this.io.earliestDeadline()) add({ category: "timer", label: `timer ${next.label} due +${next.dueMs - this.clock.now()}ms`, run: () => this.clock.fireNext() });
    for (const actor of this.actors) for (const choice of actor.choices(phase)) add(choice);
    return byCategory;
  }

  /**
   * Takes one step: picks a category by weight, then one of its moves uniformly, runs it and lets every
   * microtask run. False when nothing can happen (no pending operation, no timer, no actor move).
   */
  async takeStep(phase: Phase): Promise<boolean> {
    this.step++;
    this.trace.at(this.step, this.clock.now());
    const byCategory = this.gather(phase);
    const categories = [...byCategory.keys()];
    const weights = categories.map((category) => this.weights[category] ?? 0);
    if (!weights.some((w) => w > 0)) return false;
    const category = categories[this.prng.weighted(weights)]!;
    const choice = this.prng.pick(byCategory.get(category)!);
    // Firing a timer moves the clock: the line carries the time it fired at.
    if (category === "timer") this.trace.at(this.step, this.clock.nextDue()?.dueMs ?? this.clock.now());
    this.trace.write(choice.label);
    choice.run();
    await drainMicrotasks();
    return true;
  }
}
