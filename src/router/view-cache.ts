// A per-isolate cache of metadata-log lookups by stream name, for routing (DESIGN section 5). Entries live
// a short time and are then looked up again. Routing is only a performance decision (fencing keeps a stale
// view from producing a second writer), so a stale entry costs at most one more hop: the node it sends the
// request to looks the name up afresh and redirects once more.
//
// A name the log does not hold is never cached: "not registered" means "serve here", and trusting a stale
// one could answer 404 for a stream that was just created elsewhere.
import type { StreamLookup } from "../core/meta/view.ts";

/** Where lookups come from: the MetaLog RPC (`metaLogClient(...).lookupStream`). */
export type LookupSource = (name: string) => Promise<StreamLookup>;

export interface ViewCacheOptions {
  /** How long an entry is trusted. */
  readonly ttlMs: number;
  /** Entries kept at most (oldest dropped first). */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

interface Entry {
  readonly lookup: StreamLookup;
  readonly fetchedAtMs: number;
}

export class ViewCache {
  // No sharing of in-flight lookups between requests: in a Worker, a request awaiting a promise whose I/O
  // belongs to another request is cancelled by the runtime as hung. Only plain data is shared.
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Lookups sent to the source (for tests and metrics). */
  misses = 0;

  constructor(options: ViewCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? ((): number => Date.now());
  }

  /** The cached lookup if fresh enough, otherwise one from `source` (always from `source` when `fresh`). */
  async lookup(source: LookupSource, name: string, fresh = false): Promise<StreamLookup> {
    if (!fresh) {
      const entry = this.entries.get(name);
      if (entry !== undefined && this.now() - entry.fetchedAtMs < this.ttlMs) return entry.lookup;
    }
    return this.fetch(source, name);
  }

  /** Records what a proposal or a lookup elsewhere just learned. */
  remember(name: string, lookup: StreamLookup): void {
    const cached = this.entries.get(name);
    // Never replace a newer view of the name with an older one.
    if (cached !== undefined && cached.lookup.version > lookup.version) return;
    // Delete and set again: the map's order is the order of last refresh, oldest first.
    this.entries.delete(name);
    if (lookup.stream === null) return;
    this.entries.set(name, { lookup, fetchedAtMs: this.now() });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }

  invalidate(name: string): void {
    this.entries.delete(name);
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetch(source: LookupSource, name: string): Promise<StreamLookup> {
    this.misses++;
    const lookup = await source(name);
    this.remember(name, lookup);
    return lookup;
  }
}
