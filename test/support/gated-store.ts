// A store whose PUTs wait at a gate until the test opens it, measuring how many were in flight at once.
import type { ByteRange, GetResult, ListOptions, ListResult, ObjectInfo, ObjectStore, PutOptions, PutResult } from "../../src/storage/object-store.ts";

/** Delegates to a store; PUTs wait at a gate until `open()`, and concurrency is measured. */
export class GatedStore implements ObjectStore {
  private waiting: (() => void)[] = [];
  private gated = true;
  inFlight = 0;
  maxInFlight = 0;
  constructor(readonly inner: ObjectStore) {}
  get pendingPuts(): number {
    return this.waiting.length;
  }
  open(): void {
    this.gated = false;
    for (const release of this.waiting.splice(0)) release();
  }
  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      if (this.gated) await new Promise<void>((resolve) => this.waiting.push(resolve));
      return await this.inner.put(key, body, options);
    } finally {
      this.inFlight--;
    }
  }
  get(key: string, range?: ByteRange): Promise<GetResult> {
    return this.inner.get(key, range);
  }
  head(key: string): Promise<ObjectInfo | null> {
    return this.inner.head(key);
  }
  list(prefix: string, options?: ListOptions): Promise<ListResult> {
    return this.inner.list(prefix, options);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}
