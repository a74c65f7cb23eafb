// The token table of the MetaLog's SQLite: the storage side of the token register's port
// (src/metadata/token-register.ts, which runs the steps of table TK). This module owns the schema, reads and writes.
//   meta_token   id, grant (JSON {prefixes, ops}), issued_at_ms, expires_at_ms, revoked (0/1)
//   meta_token_version   one row: bumped on every revocation, so entries poll cheaply for changes
import type { TokenRecord } from "../src/core/auth/token-registry.ts";
import type { AccessOp } from "../src/core/auth/access.ts";
import type { TokenTable } from "../src/metadata/token-register.ts";

interface Row extends Record<string, SqlStorageValue> {
  id: string;
  grant: string;
  issued_at_ms: number;
  expires_at_ms: number;
  revoked: number;
}

function recordOf(row: Row): TokenRecord {
  const grant = JSON.parse(row.grant) as { prefixes: string[]; ops: AccessOp[] };
  return { id: row.id, prefixes: grant.prefixes, ops: grant.ops, issuedAtMs: row.issued_at_ms, expiresAtMs: row.expires_at_ms, revoked: row.revoked === 1 };
}

export class SqliteTokenTable implements TokenTable {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS meta_token (
      id TEXT PRIMARY KEY,
      grant TEXT NOT NULL,
      issued_at_ms INTEGER NOT NULL,
      expires_at_ms INTEGER NOT NULL,
      revoked INTEGER NOT NULL
    )`);
    sql.exec("CREATE INDEX IF NOT EXISTS meta_token_expiry ON meta_token (expires_at_ms)");
    sql.exec("CREATE TABLE IF NOT EXISTS meta_token_version (one INTEGER PRIMARY KEY CHECK (one = 1), version INTEGER NOT NULL)");
    sql.exec("INSERT OR IGNORE INTO meta_token_version (one, version) VALUES (1, 0)");
  }

  insert(record: Omit<TokenRecord, "revoked">): void {
    const grant = JSON.stringify({ prefixes: record.prefixes, ops: record.ops });
    const sql = "INSERT INTO meta_token (id, grant, issued_at_ms, expires_at_ms, revoked) VALUES (?, ?, ?, ?, 0)";
    this.sql.exec(sql, record.id, grant, record.issuedAtMs, record.expiresAtMs);
  }

  get(id: string): TokenRecord | null {
    const row = this.sql.exec<Row>("SELECT * FROM meta_token WHERE id = ?", id).toArray()[0];
    return row === undefined ? null : recordOf(row);
  }

  markRevoked(id: string): void {
    this.sql.exec("UPDATE meta_token SET revoked = 1 WHERE id = ?", id);
    this.sql.exec("UPDATE meta_token_version SET version = version + 1");
  }

  revokedIds(nowMs: number): string[] {
    const rows = this.sql.exec<{ id: string }>("SELECT id FROM meta_token WHERE revoked = 1 AND expires_at_ms > ? ORDER BY id", nowMs);
    return [...rows].map((row) => row.id);
  }

  page(nowMs: number, after: string, limit: number): TokenRecord[] {
    return this.sql.exec<Row>("SELECT * FROM meta_token WHERE expires_at_ms > ? AND id > ? ORDER BY id LIMIT ?", nowMs, after, limit).toArray().map(recordOf);
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM meta_token").one().n;
  }

  version(): number {
    return this.sql.exec<{ version: number }>("SELECT version FROM meta_token_version").one().version;
  }

  dropExpired(nowMs: number): void {
    this.sql.exec("DELETE FROM meta_token WHERE expires_at_ms <= ?", nowMs);
  }
}
