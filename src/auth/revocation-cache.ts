// Each Worker isolate's copy of the revoked token ids, refreshed from the MetaLog at most once every
// REVOCATION_CACHE_MS, one refresh at a time (callers during a refresh wait for it). A refresh asks only
// for changes (the register's version), so an unchanged register costs one small RPC a period. A
// revocation is honoured everywhere within that period. When the MetaLog cannot answer, the last copy is
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
  private refreshing: Promise<void> | null = null;

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
      this.refreshing ??= this.refresh(source()).finally(() => {
        this.refreshing = null;
      });
      try {
        await this.refreshing;
      } catch (error) {
        if (this.now() - this.refreshedAtMs > this.periodMs * STALE_PERIODS) throw error;
      }
    }
    return this.ids;
  }

  private async refresh(source: RevocationSource): Promise<void> {
    const answer = await source.revocations(this.version);
    if (answer.ids !== null) this.ids = new Set(answer.ids);
    this.version = answer.version;
    this.refreshedAtMs = this.now();
  }
}
