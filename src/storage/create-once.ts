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
 * retry budget or on a fatal failure, and the deadline's reason once `deadline` aborted (the outcome is
 * then unknown: the caller treats it as a failed write, never as absent).
 */
export async function putCreateOnce(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  retry: ResolvedRetry,
  onRetry: () => void = () => {},
  deadline?: AbortSignal,
): Promise<CreateOutcome> {
  let uncertain = false;
  let failures = 0;
  // Each pass either returns, or follows a retryable failure (bounded by maxAttempts, or by the deadline),
  // or follows a 412 after a read-back found nothing (the key was created in between: the next read-back
  // settles it).
  for (let pass = 0; pass < retry.maxAttempts * 2 + 2; pass++) {
    deadline?.throwIfAborted();
    try {
      if (uncertain) {
        const existing = await readOrNull(store, key, deadline);
        if (existing !== null) return sameBytes(existing, body) ? { kind: "created" } : { kind: "exists" };
      }
      await store.put(key, body, { condition: { ifNoneMatch: "*" }, ...(deadline === undefined ? {} : { signal: deadline }) });
      return { kind: "created" };
    } catch (error) {
      deadline?.throwIfAborted();
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

export async function readOrNull(store: ObjectStore, key: string, deadline?: AbortSignal): Promise<Uint8Array | null> {
  try {
    return (await (deadline === undefined ? store.get(key) : store.get(key, undefined, { signal: deadline }))).body;
  } catch (error) {
    if (isStoreError(error, "not_found")) return null;
    throw error;
  }
}
