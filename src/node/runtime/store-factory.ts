// The object store a node writes to: the S3 endpoint from its settings, or, when S3_ENDPOINT is
// `memory://<name>`, an in-memory store shared by everything in the isolate under that name (tests in the
// workers pool use it to inject faults and to survive Durable Object restarts; never in production).
import { MemoryStore } from "../../storage/memory-store.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { objectStoreFromSettings, type ObjectStoreSettings } from "../../storage/store-from-env.ts";

const MEMORY_SCHEME = "memory://";
const REGISTRY_KEY = Symbol.for("mink.memoryStores");

/** The in-memory store named `name` in this isolate (created on first use). */
export function memoryStore(name: string): MemoryStore {
  const holder = globalThis as unknown as { [REGISTRY_KEY]?: Map<string, MemoryStore> };
  const stores: Map<string, MemoryStore> = (holder[REGISTRY_KEY] ??= new Map<string, MemoryStore>());
  let store = stores.get(name);
  if (store === undefined) {
    store = new MemoryStore();
    stores.set(name, store);
  }
  return store;
}

export function nodeObjectStore(settings: ObjectStoreSettings): ObjectStore {
  if (settings.S3_ENDPOINT.startsWith(MEMORY_SCHEME)) return memoryStore(settings.S3_ENDPOINT.slice(MEMORY_SCHEME.length));
  return objectStoreFromSettings(settings);
}
