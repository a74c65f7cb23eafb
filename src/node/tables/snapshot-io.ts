// The object-store calls every part of table S's shell shares (docs/tables.md, "Snapshots in the object
// store"): an object read as UTF-8 text (a missing or non-UTF-8 one is null, so a corrupt snapshot is told
// apart from a failing store), and requests run a bounded number at a time.
import { isStoreError, type ObjectStore } from "../../storage/object-store.ts";

/** Part requests (HEAD, PUT, GET) and deletes in flight at once for one call. */
const REQUESTS_IN_FLIGHT = 8;

// Fatal: a part that is not UTF-8 is corrupt. ignoreBOM keeps a leading U+FEFF, so the text is the bytes.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The object as UTF-8 text; null when it is missing or not UTF-8. */
export async function readText(store: ObjectStore, key: string): Promise<string | null> {
  let body: Uint8Array;
  try {
    body = (await store.get(key)).body;
  } catch (error) {
    if (isStoreError(error, "not_found")) return null;
    throw error;
  }
  try {
    return decoder.decode(body);
  } catch {
    return null;
  }
}

/** Runs `run` over `items` with at most REQUESTS_IN_FLIGHT at once; after a failure no new item starts. */
export async function forEachBounded<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await run(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REQUESTS_IN_FLIGHT, items.length) }, worker));
}
