// Wrappers around an ObjectStore for tests that steer or observe store calls: every call goes through one
// `around` function, which may wait, count, fail or record before and after the real call.
import type fc from "fast-check";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import type { StoreOperation } from "../../src/storage/memory-store.ts";

export type AroundStoreCall = <T>(op: StoreOperation, key: string, run: () => Promise<T>) => Promise<T>;

export function interceptStore(inner: ObjectStore, around: AroundStoreCall): ObjectStore {
  return {
    put: (key, body, options) => around("put", key, () => inner.put(key, body, options)),
    get: (key, range) => around("get", key, () => inner.get(key, range)),
    head: (key) => around("head", key, () => inner.head(key)),
    list: (prefix, options) => around("list", prefix, () => inner.list(prefix, options)),
    delete: (key) => around("delete", key, () => inner.delete(key)),
  };
}

export interface InFlightStats {
  inFlight: number;
  maxInFlight: number;
}

/**
 * Every store call waits for the fast-check scheduler before it runs and again before its answer returns,
 * so a property explores the interleavings of concurrent callers; `stats` measures calls in flight.
 */
export function scheduledStore(s: fc.Scheduler, inner: ObjectStore, stats: InFlightStats = { inFlight: 0, maxInFlight: 0 }): ObjectStore {
  return interceptStore(inner, async (op, key, run) => {
    stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
    try {
      await s.schedule(Promise.resolve(), `${op} ${key}`);
      const result = await run();
      await s.schedule(Promise.resolve(), `${op} ${key} answered`);
      return result;
    } finally {
      stats.inFlight--;
    }
  });
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
