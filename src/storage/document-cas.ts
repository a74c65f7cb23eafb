// Compare-and-swap of a small JSON document in the object store, shared by manifests and checkpoints: read
// it with its ETag, plan the next value, write it `If-None-Match: *` or `If-Match`, and re-plan after a lost
// race; a retryable failure re-reads, and our own bytes found there mean the write whose answer was lost landed.

import { isStoreError, sameBytes, type ObjectStore } from "./object-store.ts";
import { resolveRetry, type RetryOptions } from "./retry-policy.ts";

/** Compare-and-swap (of a manifest or checkpoint) kept losing; the caller may retry later. */
class CasContentionError extends Error {
  override readonly name = "CasContentionError";
}

export interface ManifestWriteOptions {
  /** Compare-and-swap rounds lost to other writers before `CasContentionError` (default 8). */
  maxCasAttempts?: number;
  retry?: RetryOptions;
}

/** A small document as read: decoded value, ETag, and the exact bytes (to recognise our own lost write). */
export interface DocumentSnapshot<T> {
  value: T;
  etag: string;
  bytes: Uint8Array;
}

export async function readDocument<T>(
  store: ObjectStore,
  key: string,
  decode: (bytes: Uint8Array) => T,
): Promise<DocumentSnapshot<T> | null> {
  try {
    const { body, etag } = await store.get(key);
    return { value: decode(body), etag, bytes: body };
  } catch (error) {
    if (isStoreError(error, "not_found")) return null;
    throw error;
  }
}

/**
 * The compare-and-swap loop shared by manifests and checkpoints. `plan` sees the current state (a fresh
 * decode each time, null when absent) and returns the value to write (the current one: nothing to write);
 * it may throw to refuse. The write is `If-None-Match: *` when absent, else `If-Match` on the ETag read.
 * A lost CAS re-reads and re-plans. After a retryable failure the state is re-read, and our own bytes there
 * mean the write whose answer was lost landed.
 */
export async function compareAndSwap<T>(
  store: ObjectStore,
  key: string,
  codec: { encode: (value: T) => Uint8Array; decode: (bytes: Uint8Array) => T },
  initial: DocumentSnapshot<T> | null | undefined,
  plan: (current: T | null) => T,
  options: ManifestWriteOptions,
): Promise<{ value: T; etag: string }> {
  const retry = resolveRetry(options.retry);
  const maxCasAttempts = options.maxCasAttempts ?? 8;
  let current = initial === undefined ? await readDocument(store, key, codec.decode) : initial;
  let inDoubt: Uint8Array | undefined;
  let failures = 0;
  for (let casLosses = 0; casLosses < maxCasAttempts; ) {
    if (inDoubt !== undefined && current !== null && sameBytes(current.bytes, inDoubt)) return current;
    const next = plan(current === null ? null : codec.decode(current.bytes));
    const bytes = codec.encode(next);
    if (current !== null && sameBytes(bytes, current.bytes)) return current;
    try {
      const condition = current === null ? { ifNoneMatch: "*" as const } : { ifMatch: current.etag };
      const { etag } = await store.put(key, bytes, { condition, contentType: "application/json" });
      return { value: codec.decode(bytes), etag };
    } catch (error) {
      if (isStoreError(error, "precondition_failed")) {
        casLosses++;
      } else if (isStoreError(error, "retryable") && ++failures < retry.maxAttempts) {
        inDoubt = bytes;
        await retry.sleep(retry.backoffMs(failures));
      } else {
        throw error;
      }
      current = await readDocument(store, key, codec.decode);
    }
  }
  throw new CasContentionError(`${key}: compare-and-swap lost ${maxCasAttempts} times`);
}
