// Decoded stream objects recently read back (compacted data is no longer in the tail cache), bounded by
// total bytes; least recently used first out. Concurrent reads of one key share one GET.
import { readManifest, type StreamObjectRef } from "../../storage/manifest.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { readStreamObject } from "../../storage/stream-object.ts";
import type { WalRecord } from "../../storage/record-codec.ts";

export class StreamObjectCache {
  private readonly entries = new Map<string, { records: Promise<readonly WalRecord[]>; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  get(key: string): Promise<readonly WalRecord[]> {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.records;
    }
    const entry = { records: readStreamObject(this.store, key).then((object) => object.records), bytes: 0 };
    this.entries.set(key, entry);
    entry.records.then(
      (records) => {
        if (this.entries.get(key) !== entry) return; // evicted while loading
        entry.bytes = records.reduce((sum, record) => sum + record.data.byteLength + record.meta.byteLength, 0);
        this.bytes += entry.bytes;
        this.evict(key);
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.records;
  }

  private evict(keep: string): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      if (key === keep) continue;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }
}

/** A stream's stream objects as its manifest lists them, null without a manifest (StreamRegistry's lister). */
export function manifestObjects(store: ObjectStore): (streamId: string) => Promise<readonly StreamObjectRef[] | null> {
  return async (streamId) => (await readManifest(store, streamId))?.manifest.objects ?? null;
}
