// A small persistent (copy-on-write) map from string keys to values, so `apply` can return a new state
// without copying a million stream records. Keys hash (FNV-1a) into 32^3 = 32,768 leaf buckets held in a
// fixed three-level tree: a write copies one 32-slot array per level and one leaf bucket (about
// size/32,768 entries: ~30 at a million keys) and shares everything else with the previous map.
// Iteration order is deterministic: leaf by leaf, each leaf in insertion order, so a map rebuilt from its
// own iteration (snapshot decode) iterates the same way.

const BITS = 5;
const FANOUT = 1 << BITS;
const MASK = FANOUT - 1;
const LEVELS = 3;

type Leaf<V> = ReadonlyMap<string, V>;
/** An inner node: FANOUT children, each an inner node (above the last level) or a leaf. */
type Inner<V> = ReadonlyArray<Inner<V> | Leaf<V> | undefined>;

/** FNV-1a over UTF-16 code units; deterministic everywhere, fast enough for keys of a few dozen chars. */
function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function slot(hash: number, level: number): number {
  return (hash >>> (level * BITS)) & MASK;
}

function emptyInner<V>(): (Inner<V> | Leaf<V> | undefined)[] {
  return new Array<Inner<V> | Leaf<V> | undefined>(FANOUT).fill(undefined);
}

export class ChunkedMap<V> {
  private constructor(
    private readonly root: Inner<V>,
    readonly size: number,
  ) {}

  static empty<V>(): ChunkedMap<V> {
    return new ChunkedMap<V>(emptyInner<V>(), 0);
  }

  /** Builds a map from entries in one pass (no per-entry copying): used by snapshot decode. */
  static fromEntries<V>(entries: Iterable<readonly [string, V]>): ChunkedMap<V> {
    const root = emptyInner<V>();
    let size = 0;
    for (const [key, value] of entries) {
      const hash = hashKey(key);
      let node = root;
      for (let level = 0; level < LEVELS - 1; level++) {
        const index = slot(hash, level);
        node = (node[index] ??= emptyInner<V>()) as (Inner<V> | Leaf<V> | undefined)[];
      }
      const index = slot(hash, LEVELS - 1);
      const bucket = (node[index] ??= new Map<string, V>()) as Map<string, V>;
      if (!bucket.has(key)) size++;
      bucket.set(key, value);
    }
    return new ChunkedMap<V>(root, size);
  }

  private leaf(key: string): Leaf<V> | undefined {
    const hash = hashKey(key);
    let node: Inner<V> | undefined = this.root;
    for (let level = 0; level < LEVELS - 1 && node !== undefined; level++) {
      node = node[slot(hash, level)] as Inner<V> | undefined;
    }
    return node?.[slot(hash, LEVELS - 1)] as Leaf<V> | undefined;
  }

  get(key: string): V | undefined {
    return this.leaf(key)?.get(key);
  }

  has(key: string): boolean {
    return this.leaf(key)?.has(key) ?? false;
  }

  /** Copies the path to the key's leaf, lets `change` edit a copy of the leaf, and prunes emptied nodes. */
  private with(key: string, change: (bucket: Map<string, V>) => void): ChunkedMap<V> {
    const hash = hashKey(key);
    let sizeDelta = 0;
    const rebuild = (node: Inner<V> | undefined, level: number): Inner<V> | Leaf<V> | undefined => {
      const copy = node === undefined ? emptyInner<V>() : node.slice();
      const index = slot(hash, level);
      if (level === LEVELS - 1) {
        const bucket = new Map(copy[index] as Leaf<V> | undefined);
        const before = bucket.size;
        change(bucket);
        sizeDelta = bucket.size - before;
        copy[index] = bucket.size === 0 ? undefined : bucket;
      } else {
        copy[index] = rebuild(copy[index] as Inner<V> | undefined, level + 1);
      }
      return level > 0 && copy.every((child) => child === undefined) ? undefined : copy;
    };
    const root = (rebuild(this.root, 0) ?? emptyInner<V>()) as Inner<V>;
    return new ChunkedMap<V>(root, this.size + sizeDelta);
  }

  /** A new map with `key` set; this map is unchanged. */
  set(key: string, value: V): ChunkedMap<V> {
    return this.with(key, (bucket) => bucket.set(key, value));
  }

  /** A new map without `key` (this map itself when the key is absent). */
  delete(key: string): ChunkedMap<V> {
    if (!this.has(key)) return this;
    return this.with(key, (bucket) => bucket.delete(key));
  }

  *entries(): IterableIterator<[string, V]> {
    yield* walk(this.root, 0, (bucket) => bucket.entries());
  }

  *values(): IterableIterator<V> {
    yield* walk(this.root, 0, (bucket) => bucket.values());
  }
}

function* walk<V, T>(node: Inner<V>, level: number, each: (bucket: Leaf<V>) => IterableIterator<T>): IterableIterator<T> {
  for (const child of node) {
    if (child === undefined) continue;
    if (level === LEVELS - 1) yield* each(child as Leaf<V>);
    else yield* walk(child as Inner<V>, level + 1, each);
  }
}
