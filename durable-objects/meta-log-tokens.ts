// The register of access tokens in the MetaLog's SQLite (src/core/auth/token-registry.ts, table TK). This
// module owns the table; the MetaLog's token RPC methods call it. A table, not log entries: nodes never
// replay token history, the Worker only asks for the current revocations.
//   meta_token   id, grant (JSON {prefixes, ops}), issued_at_ms, expires_at_ms, revoked (0/1)
//   meta_token_version   one row: bumped on every revocation, so entries poll cheaply for changes
// Every step is synchronous on arrival: drop expired rows, run the pure rule, write.
import { mintStep, revokeStep, type RegistryStep, type RevokeStep, type TokenRecord } from "../src/core/auth/token-registry.ts";
import type { AccessOp } from "../src/core/auth/access.ts";
import type { RevocationSet } from "../src/ports/meta-log-client.ts";

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

export class MetaLogTokens {
  constructor(
    private readonly sql: SqlStorage,
    private readonly maxTokens: number,
  ) {
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

  /** Records a minted token (TK1, TK2). */
  mint(record: Omit<TokenRecord, "revoked">, nowMs: number): RegistryStep {
    this.dropExpired(nowMs);
    const step = mintStep(this.liveCount(), this.maxTokens);
    if (!step.ok) return step;
    this.sql.exec(
      "INSERT INTO meta_token (id, grant, issued_at_ms, expires_at_ms, revoked) VALUES (?, ?, ?, ?, 0)",
      record.id,
      JSON.stringify({ prefixes: record.prefixes, ops: record.ops }),
      record.issuedAtMs,
      record.expiresAtMs,
    );
    return step;
  }

  /** TK3 to TK5. */
  revoke(id: string, nowMs: number): RevokeStep {
    this.dropExpired(nowMs);
    const row = this.sql.exec<Row>("SELECT * FROM meta_token WHERE id = ?", id).toArray()[0];
    const step = revokeStep(row === undefined ? null : recordOf(row), nowMs);
    if (step.ok && step.change) {
      this.sql.exec("UPDATE meta_token SET revoked = 1 WHERE id = ?", id);
      this.sql.exec("UPDATE meta_token_version SET version = version + 1");
    }
    return step;
  }

  /** The revoked ids of live tokens, or only the version when the caller already has it. */
  revocations(knownVersion: number | null, nowMs: number): RevocationSet {
    const version = this.version();
    if (knownVersion === version) return { version, ids: null };
    const ids = this.sql
      .exec<{ id: string }>("SELECT id FROM meta_token WHERE revoked = 1 AND expires_at_ms > ? ORDER BY id", nowMs)
      .toArray()
      .map((row) => row.id);
    return { version, ids };
  }

  /** Live tokens, oldest first, a page at a time (`after`: the last id of the previous page). */
  list(nowMs: number, after: string | null, limit: number): TokenRecord[] {
    return this.sql
      .exec<Row>("SELECT * FROM meta_token WHERE expires_at_ms > ? AND id > ? ORDER BY id LIMIT ?", nowMs, after ?? "", limit)
      .toArray()
      .map(recordOf);
  }

  private liveCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM meta_token").one().n;
  }

  private version(): number {
    return this.sql.exec<{ version: number }>("SELECT version FROM meta_token_version").one().version;
  }

  private dropExpired(nowMs: number): void {
    this.sql.exec("DELETE FROM meta_token WHERE expires_at_ms <= ?", nowMs);
  }
}
