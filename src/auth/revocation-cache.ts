// Each Worker isolate's copy of the revoked token ids, refreshed from the MetaLog when it is older than
// REVOCATION_CACHE_MS. A refresh asks only for changes (the register's version), so an unchanged register
// costs one small RPC a period. A revocation is honoured everywhere within that period. Each request that
// finds the copy stale refreshes it itself: a refresh is never shared between requests, because the
// Workers runtime ties I/O to the request that started it (a request waiting on another's RPC fails when
// that one ends first); the few requests at a period's boundary each make the small call. When the MetaLog cannot answer, the last copy is
// kept; a copy older than a few periods is not trusted and requests are refused as unavailable instead.
import type { RevocationSet } from "../ports/meta-log-client.ts";

export const DEFAULT_REVOCATION_CACHE_MS = 1_000;
/** Periods a copy may outlive its refresh when the MetaLog is unreachable, before requests are refused. */
const STALE_PERIODS = 30;

export interface RevocationSource {
  revocations(knownVersion: number | null): Promise<RevocationSet>;
}

export class RevocationCache {
  private version: number | null = null;
  private ids: ReadonlySet<string> = new Set();
  private refreshedAtMs = -Infinity;

  constructor(
    private readonly periodMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * The current revocations, refreshed first when the copy is older than the period (the source is made
   * only then: most requests cost no stub); throws when stale and unreachable.
   */
  async revoked(source: () => RevocationSource): Promise<ReadonlySet<string>> {
    if (this.now() - this.refreshedAtMs >= this.periodMs) {
      try {
        await this.refresh(source());
      } catch (error) {
        if (this.now() - this.refreshedAtMs > this.periodMs * STALE_PERIODS) throw error;
      }
    }
    return this.ids;
  }

  private async refresh(source: RevocationSource): Promise<void> {
    const answer = await source.revocations(this.version);
    // Refreshes may overlap and land out of order: a later version never gives way to an earlier one.
    if (this.version !== null && answer.version < this.version) return;
    if (answer.ids !== null) this.ids = new Set(answer.ids);
    this.version = answer.version;
    this.refreshedAtMs = this.now();
  }
}
