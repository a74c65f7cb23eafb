// The register of access tokens (src/core/auth/token-registry.ts, table TK) over the table that keeps it:
// every step drops the expired rows, runs the pure rule, then writes. A table, not log entries: nodes never
// replay token history, the Worker only asks for the current revocations. The MetaLog keeps the table in
// its SQLite (durable-objects/meta-log-tokens.ts).
import { DEFAULT_MAX_TOKENS, mintStep, revokeStep, type RegistryStep, type RevokeStep, type TokenRecord } from "../core/auth/token-registry.ts";
import type { RevocationSet } from "../ports/meta-log-client.ts";
import { positiveIntOr, tokenPageLimit } from "./meta-log-arguments.ts";

/** Where the tokens are kept. Every call is synchronous. */
export interface TokenTable {
  dropExpired(nowMs: number): void;
  count(): number;
  get(id: string): TokenRecord | null;
  insert(record: Omit<TokenRecord, "revoked">): void;
  /** Marks the token revoked and bumps the version. */
  markRevoked(id: string): void;
  /** Bumped on every revocation, so callers poll cheaply for changes. */
  version(): number;
  revokedIds(nowMs: number): string[];
  /** Live tokens, oldest first, after the id `after`. */
  page(nowMs: number, after: string, limit: number): TokenRecord[];
}

export class TokenRegister {
  private readonly maxTokens: number;

  /** `maxTokens` is the MAX_TOKENS var (DEFAULT_MAX_TOKENS when unset or not a positive integer). */
  constructor(
    private readonly table: TokenTable,
    maxTokens: string | undefined,
    private readonly now: () => number,
  ) {
    this.maxTokens = positiveIntOr(maxTokens, DEFAULT_MAX_TOKENS);
  }

  /** Records a minted token (TK1, TK2). */
  mint(record: Omit<TokenRecord, "revoked">): RegistryStep {
    this.table.dropExpired(this.now());
    const step = mintStep(this.table.count(), this.maxTokens);
    if (step.ok) this.table.insert(record);
    return step;
  }

  /** TK3 to TK5. */
  revoke(id: string): RevokeStep {
    const nowMs = this.now();
    this.table.dropExpired(nowMs);
    const step = revokeStep(this.table.get(id), nowMs);
    if (step.ok && step.change) this.table.markRevoked(id);
    return step;
  }

  /** The revoked ids of live tokens, or only the version when the caller already has it. */
  revocations(knownVersion: number | null): RevocationSet {
    const version = this.table.version();
    if (knownVersion === version) return { version, ids: null };
    return { version, ids: this.table.revokedIds(this.now()) };
  }

  /** Live tokens, oldest first, a page (1 to 1000) at a time (`after`: the last id of the previous page). */
  list(after: string | null, limit: number): TokenRecord[] {
    return this.table.page(this.now(), after ?? "", tokenPageLimit(limit));
  }
}
