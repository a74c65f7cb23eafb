// Where the MetaLog's subscription book is kept (docs/subscriptions.md): one row per subscription (its
// record as JSON and the public origin of its PUT) and the deployment's webhook signing key(s). The port of
// SubscriptionService; the MetaLog Durable Object implements it over SQLite
// (durable-objects/meta-log-subscription-tables.ts), the simulation and tests over memory
// (MemorySubscriptionStorage below). Every call is synchronous: a step writes its row before its first await.
import type { StoredSigningKey } from "../../subscriptions/webhook-signing.ts";

export interface SubscriptionRow {
  readonly id: string;
  /** The record's JSON (`SubscriptionRecord`). */
  readonly record: string;
  readonly origin: string;
}

export interface SubscriptionStorage {
  /** Every row, read once when the service starts. */
  rows(): Iterable<SubscriptionRow>;
  /** Inserts or replaces the row of `row.id`. */
  write(row: SubscriptionRow): void;
  remove(id: string): void;
  /** The signing keys, oldest first (the oldest signs). */
  keys(): StoredSigningKey[];
  /** Stores a key unless one with its kid is there. */
  addKey(key: StoredSigningKey, createdAtMs: number): void;
}

/** The book in memory: the simulation's MetaLog, and a MetaLog restart in a test (hand the same storage on). */
export class MemorySubscriptionStorage implements SubscriptionStorage {
  readonly byId = new Map<string, SubscriptionRow>();
  private readonly signingKeys: Array<{ key: StoredSigningKey; createdAtMs: number }> = [];

  rows(): Iterable<SubscriptionRow> {
    return [...this.byId.values()];
  }

  write(row: SubscriptionRow): void {
    this.byId.set(row.id, row);
  }

  remove(id: string): void {
    this.byId.delete(id);
  }

  keys(): StoredSigningKey[] {
    return [...this.signingKeys]
      .sort((a, b) => a.createdAtMs - b.createdAtMs || (a.key.kid < b.key.kid ? -1 : a.key.kid > b.key.kid ? 1 : 0))
      .map(({ key }) => key);
  }

  addKey(key: StoredSigningKey, createdAtMs: number): void {
    if (this.signingKeys.some((k) => k.key.kid === key.kid)) return;
    this.signingKeys.push({ key, createdAtMs });
  }
}
