// A per-isolate cache of metadata-log lookups by stream name, for routing (docs/router.md). Entries live
// a short time and are then looked up again. Routing is only a performance decision (fencing keeps a stale
// view from producing a second writer), so a stale entry costs at most one more hop: the node it sends the
// request to looks the name up afresh and redirects once more.
//
// "No such stream" answers are cached too (negative entries, their own TTL and their own bound, so a scan
// of random names cannot push out the streams in use): without them a name that does not exist costs two
// MetaLog calls per request, the router's and the local node's. A negative entry is safe to trust because
// it only ever sends a request to the local node (R1), and a node never trusts a view for a name it does
// not hold: it looks the name up afresh, so a stream created a moment ago elsewhere is redirected to, not
// answered 404 by a stale entry. The router drops a negative entry as soon as a request it routed by it
// was answered with anything but a 404 (a create, a redirect: the name exists now), so this isolate stops
// sending the name's requests to the local node at once; other isolates keep theirs for at most
// NEGATIVE_CACHE_TTL_MS, which costs them one hop per request, never a wrong answer.
import type { StreamLookup } from "../core/meta/view.ts";

/** Where lookups come from: the MetaLog RPC (`metaLogClient(...).lookupStream`). */
export type LookupSource = (name: string) => Promise<StreamLookup>;

export interface ViewCacheOptions {
  /** How long an entry for a registered stream is trusted. */
  readonly ttlMs: number;
  /** How long a "no such stream" answer is trusted (default 1000; 0 turns negative caching off). */
  readonly negativeTtlMs?: number;
  /** Entries kept at most, positive and negative each (oldest dropped first). */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

interface Entry {
  readonly lookup: StreamLookup;
  readonly fetchedAtMs: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_NEGATIVE_TTL_MS = 1_000;

/** A map whose insertion order is the order of last refresh, oldest first, bounded in entries. */
class BoundedEntries {
  private readonly map = new Map<string, Entry>();
  constructor(private readonly maxEntries: number) {}

  get(name: string): Entry | undefined {
    return this.map.get(name);
  }

  set(name: string, entry: Entry): void {
    this.map.delete(name);
    this.map.set(name, entry);
    if (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next();
      if (oldest.done !== true) this.map.delete(oldest.value);
    }
  }

  delete(name: string): void {
    this.map.delete(name);
  }

  get size(): number {
    return this.map.size;
  }
}

export class ViewCache {
  // No sharing of in-flight lookups between requests: in a Worker, a request awaiting a promise whose I/O
  // belongs to another request is cancelled by the runtime as hung. Only plain data is shared.
  private readonly positive: BoundedEntries;
  private readonly negative: BoundedEntries;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly now: () => number;
  /** Lookups sent to the source (for tests and metrics). */
  misses = 0;

  constructor(options: ViewCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.negativeTtlMs = options.negativeTtlMs ?? DEFAULT_NEGATIVE_TTL_MS;
    const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.positive = new BoundedEntries(maxEntries);
    this.negative = new BoundedEntries(maxEntries);
    this.now = options.now ?? ((): number => Date.now());
  }

  /** The cached lookup if fresh enough, otherwise one from `source` (always from `source` when `fresh`). */
  async lookup(source: LookupSource, name: string, fresh = false): Promise<StreamLookup> {
    if (!fresh) {
      const cached = this.cached(name);
      if (cached !== null) return cached;
    }
    return this.fetch(source, name);
  }

  /** The fresh cached lookup of `name`, or null. */
  cached(name: string): StreamLookup | null {
    const nowMs = this.now();
    const hit = this.positive.get(name);
    if (hit !== undefined && nowMs - hit.fetchedAtMs < this.ttlMs) return hit.lookup;
    const miss = this.negative.get(name);
    if (miss !== undefined && nowMs - miss.fetchedAtMs < this.negativeTtlMs) return miss.lookup;
    return null;
  }

  /** Records what a proposal or a lookup elsewhere just learned. */
  remember(name: string, lookup: StreamLookup): void {
    // Never replace a newer view of the name with an older one (either kind: a delete is a newer "absent").
    const cached = this.positive.get(name) ?? this.negative.get(name);
    if (cached !== undefined && cached.lookup.version > lookup.version) return;
    this.invalidate(name);
    const entry = { lookup, fetchedAtMs: this.now() };
    if (lookup.stream !== null) this.positive.set(name, entry);
    else if (this.negativeTtlMs > 0) this.negative.set(name, entry);
  }

  invalidate(name: string): void {
    this.positive.delete(name);
    this.negative.delete(name);
  }

  /** Entries held for registered streams. */
  get size(): number {
    return this.positive.size;
  }

  /** Entries held for names the log did not hold. */
  get negativeSize(): number {
    return this.negative.size;
  }

  private async fetch(source: LookupSource, name: string): Promise<StreamLookup> {
    this.misses++;
    const lookup = await source(name);
    this.remember(name, lookup);
    return lookup;
  }
}
