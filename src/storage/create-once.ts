// A create-only PUT (`If-None-Match: *`) that survives lost answers on any ObjectStore: after a retryable
// failure it reads the key back before sending again, since a resent conditional PUT whose first answer was
// lost would collide with itself. Shared by the WAL writer, the sealer and stream objects.

import { isStoreError, sameBytes, type ObjectStore } from "./object-store.ts";
import type { ResolvedRetry } from "./retry-policy.ts";

/** `created`: our bytes are at the key (written now, or found there after a lost answer). */
export type CreateOutcome = { kind: "created" } | { kind: "exists" };

/**
 * Creates `key` with `If-None-Match: *`, surviving lost answers: after a retryable failure it reads the key
 * back before sending again. `exists` means other bytes hold the key. Throws the store's error after the
 * retry budget or on a fatal failure.
 */
export async function putCreateOnce(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  retry: ResolvedRetry,
  onRetry: () => void = () => {},
): Promise<CreateOutcome> {
  let uncertain = false;
  let failures = 0;
  // Each pass either returns, or follows a retryable failure (bounded by maxAttempts), or follows a 412
  // after a read-back found nothing (the key was created in between: the next read-back settles it).
  for (let pass = 0; pass < retry.maxAttempts * 2 + 2; pass++) {
    try {
      if (uncertain) {
        const existing = await readOrNull(store, key);
        if (existing !== null) return sameBytes(existing, body) ? { kind: "created" } : { kind: "exists" };
      }
      await store.put(key, body, { condition: { ifNoneMatch: "*" } });
      return { kind: "created" };
    } catch (error) {
      if (isStoreError(error, "precondition_failed")) {
        if (!uncertain) return { kind: "exists" };
        continue;
      }
      if (!isStoreError(error, "retryable") || ++failures >= retry.maxAttempts) throw error;
      uncertain = true;
      onRetry();
      await retry.sleep(retry.backoffMs(failures));
    }
  }
  throw new Error(`conditional create of ${key} did not settle`);
}

export async function readOrNull(store: ObjectStore, key: string): Promise<Uint8Array | null> {
  try {
    return (await store.get(key)).body;
  } catch (error) {
    if (isStoreError(error, "not_found")) return null;
    throw error;
  }
}
