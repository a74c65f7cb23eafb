// The router's per-isolate cache of table lookups (definition and bucket leaders), trusted for a short
// time like the stream view cache: a stale entry costs a not_leader hop at a node, never a wrong answer.
// Bounded: at most MAX_CACHED_TABLES entries, the oldest dropped first.
import type { TableLookup } from "../core/meta/view.ts";

/** Tables one isolate remembers (MAX_TABLES is 1,000). */
const MAX_CACHED_TABLES = 1_000;

export class TableCache {
  private readonly entries = new Map<string, { readonly lookup: TableLookup; readonly atMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  async lookup(name: string, source: (name: string) => Promise<TableLookup>, fresh = false): Promise<TableLookup> {
    const cached = this.entries.get(name);
    if (!fresh && cached !== undefined && this.now() - cached.atMs < this.ttlMs) return cached.lookup;
    const lookup = await source(name);
    this.entries.delete(name);
    if (this.entries.size >= MAX_CACHED_TABLES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(name, { lookup, atMs: this.now() });
    return lookup;
  }

  invalidate(name: string): void {
    this.entries.delete(name);
  }
}
