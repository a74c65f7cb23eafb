// Deadlines on one timer. workerd lets one Durable Object hold at most 10,000 active timeouts (past that
// `setTimeout` throws QuotaExceededError), and a node's own work (WAL batches, lease renewals, retries)
// needs timers too: one timer per parked reader made a node with MAX_LIVE_READERS parked readers fail its
// appends and lose its lease (issue 21, docs/limits.md). So the waiters' deadlines are rounded up to a
// `granularityMs` slot and share one timer, armed for the earliest slot: a node holds one timer per wheel,
// however many wait. A deadline fires at most `granularityMs` late, never early.

export class DeadlineWheel<T> {
  private readonly slots = new Map<number, Set<T>>();
  private readonly slotOf = new Map<T, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private armedAt = Infinity;

  constructor(
    private readonly onDue: (item: T) => void,
    private readonly granularityMs = 50,
  ) {}

  /** Items with a deadline. */
  get size(): number {
    return this.slotOf.size;
  }

  /** `item` is due `timeoutMs` from now (at the end of that slot); adding it again moves it. */
  add(item: T, timeoutMs: number): void {
    this.remove(item);
    const slot = Math.ceil((Date.now() + Math.max(0, timeoutMs)) / this.granularityMs) * this.granularityMs;
    let set = this.slots.get(slot);
    if (set === undefined) {
      set = new Set();
      this.slots.set(slot, set);
    }
    set.add(item);
    this.slotOf.set(item, slot);
    if (slot < this.armedAt) this.arm(slot);
  }

  /** Forgets `item`'s deadline (it was woken otherwise). */
  remove(item: T): void {
    const slot = this.slotOf.get(item);
    if (slot === undefined) return;
    this.slotOf.delete(item);
    const set = this.slots.get(slot);
    set?.delete(item);
    if (set?.size === 0) this.slots.delete(slot);
    if (this.slotOf.size === 0) this.disarm();
  }

  private arm(slot: number): void {
    this.disarm();
    this.armedAt = slot;
    this.timer = setTimeout(() => this.fire(slot), Math.max(0, slot - Date.now()));
  }

  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedAt = Infinity;
  }

  /** Every slot up to the one armed for (or the clock, if later) is due; then the next earliest is armed. */
  private fire(armedFor: number): void {
    this.timer = null;
    this.armedAt = Infinity;
    const dueUntil = Math.max(armedFor, Date.now());
    const due = [...this.slots.keys()].filter((slot) => slot <= dueUntil);
    for (const slot of due) for (const item of [...(this.slots.get(slot) ?? [])]) this.dueNow(item);
    let next = Infinity;
    for (const slot of this.slots.keys()) next = Math.min(next, slot);
    if (next !== Infinity && next < this.armedAt) this.arm(next);
  }

  private dueNow(item: T): void {
    this.remove(item);
    this.onDue(item);
  }
}
