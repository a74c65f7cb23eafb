// Per-key serialization of async sections: the node's paths that await the metadata log or the store
// take the lock of the stream's name (creates, deletes, opens, hand-offs) or the store write lock.

/** Serializes async sections per key (a stream name): creates, deletes, opens. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Whether a section of `key` runs or waits now. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }

  async run<T>(key: string, section: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await section();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
