// The MetaLog's subscription tables: the SQLite side of the subscription book's storage port
// (src/metadata/subscriptions/subscription-storage.ts). This module owns their schema, reads and writes.
//   meta_subscription          id, record (JSON SubscriptionRecord), origin (the public origin of its PUT)
//   meta_subscription_key      kid, x, d, created_at_ms: the signing key(s); the oldest row signs
import type { SubscriptionRow, SubscriptionStorage } from "../src/metadata/subscriptions/subscription-storage.ts";
import type { StoredSigningKey } from "../src/subscriptions/webhook-signing.ts";

export class SqliteSubscriptionStorage implements SubscriptionStorage {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS meta_subscription (
      id TEXT PRIMARY KEY,
      record TEXT NOT NULL,
      origin TEXT NOT NULL
    )`);
    sql.exec(`CREATE TABLE IF NOT EXISTS meta_subscription_key (
      kid TEXT PRIMARY KEY,
      x TEXT NOT NULL,
      d TEXT NOT NULL,
      created_at_ms INTEGER NOT NULL
    )`);
  }

  rows(): Iterable<SubscriptionRow> {
    return this.sql.exec<{ id: string; record: string; origin: string }>("SELECT id, record, origin FROM meta_subscription").toArray();
  }

  write(row: SubscriptionRow): void {
    this.sql.exec("INSERT OR REPLACE INTO meta_subscription (id, record, origin) VALUES (?, ?, ?)", row.id, row.record, row.origin);
  }

  remove(id: string): void {
    this.sql.exec("DELETE FROM meta_subscription WHERE id = ?", id);
  }

  keys(): StoredSigningKey[] {
    const rows = this.sql.exec<{ kid: string; x: string; d: string }>("SELECT kid, x, d FROM meta_subscription_key ORDER BY created_at_ms, kid");
    return [...rows].map((row) => ({ kid: row.kid, x: row.x, d: row.d }));
  }

  addKey(key: StoredSigningKey, createdAtMs: number): void {
    this.sql.exec("INSERT OR IGNORE INTO meta_subscription_key (kid, x, d, created_at_ms) VALUES (?, ?, ?, ?)", key.kid, key.x, key.d, createdAtMs);
  }
}
