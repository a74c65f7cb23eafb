// The version of the set of subscriptions and the nodes' long-polls on it (docs/subscriptions.md, "Cost"
// and "No missed appends after a PUT"). A node skips reporting appends while no subscription exists; a PUT
// that creates one bumps the version and waits (bounded) until every node watching has confirmed it, so
// every append answered after the PUT's answer is reported.
import type { SubscriptionSet } from "../../ports/meta-log-client.ts";

/** A PUT waits at most this long for the nodes watching the book to confirm the new version. */
const CONFIRM_WAIT_MS = 2_000;
/** A node that watched within this long (plus its watch timeout) is asked to confirm a new version. */
const WATCH_SLACK_MS = 5_000;

export class SubscriptionSetWatch {
  /**
   * Bumped on every create and delete. Starts at the clock so a restarted MetaLog never answers a version a
   * node already holds for the old set.
   */
  private setVersion: number;
  /** Per node: the version its latest watch call said it knows, and until when it counts as watching. */
  private readonly confirmed = new Map<string, { version: number; watchingUntilMs: number }>();
  private readonly changeWaiters = new Set<() => void>();
  private readonly confirmWaiters = new Set<() => void>();

  constructor(private readonly now: () => number) {
    this.setVersion = now();
  }

  get version(): number {
    return this.setVersion;
  }

  /**
   * A node's long-poll. Calling it with `since` confirms the node knows that version (it updated its cache
   * before calling again); answers at once when the version differs, else when it changes or after timeoutMs.
   */
  async watch(nodeId: string, since: number, timeoutMs: number, size: () => number): Promise<SubscriptionSet> {
    this.confirmed.set(nodeId, { version: since, watchingUntilMs: this.now() + timeoutMs + WATCH_SLACK_MS });
    wake(this.confirmWaiters);
    if (since === this.setVersion && timeoutMs > 0) await until(this.changeWaiters, () => since !== this.setVersion, timeoutMs);
    return { version: this.setVersion, subscriptions: size() };
  }

  /** A delete: no wait (a node that has not heard yet only reports appends nobody follows). */
  removed(): void {
    this.setVersion += 1;
    wake(this.changeWaiters);
  }

  /**
   * A create: bump the version and wait until every node watching confirmed it. A node that stopped
   * watching (gone, restarted) is waited for at most CONFIRM_WAIT_MS; a new incarnation starts by reporting
   * everything until its first watch answers.
   */
  async created(): Promise<void> {
    this.setVersion += 1;
    const version = this.setVersion;
    wake(this.changeWaiters);
    const nowMs = this.now();
    const pending = [...this.confirmed].filter(([, c]) => c.version < version && c.watchingUntilMs > nowMs).map(([id]) => id);
    if (pending.length === 0) return;
    const confirmedAll = (): boolean => pending.every((id) => (this.confirmed.get(id)?.version ?? version) >= version);
    await until(this.confirmWaiters, confirmedAll, CONFIRM_WAIT_MS);
  }
}

function until(waiters: Set<() => void>, ready: () => boolean, timeoutMs: number): Promise<void> {
  if (ready()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = (): void => {
      if (!ready()) return;
      finish();
    };
    const finish = (): void => {
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    waiters.add(check);
  });
}

function wake(waiters: Set<() => void>): void {
  for (const check of [...waiters]) check();
}
