// The object-store contract: one suite, run unchanged against every adapter and server (the in-memory
// store, the embedded S3 endpoint, radosgw). Everything mink's fencing relies on is asserted here.
//
// Each run writes under a fresh random prefix, so the suite can share a bucket with other runs.

import { describe, expect, it } from "vitest";
import { isStoreError, listAll, unquoteEtag, type ObjectStore } from "../../src/storage/object-store.ts";

const encoder = new TextEncoder();
const bytes = (text: string): Uint8Array => encoder.encode(text);
const text = (body: Uint8Array): string => new TextDecoder().decode(body);

/** Deterministic pseudo-random bytes, so large objects can be checked without keeping a second copy. */
function patterned(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

async function settleAll<T>(promises: Promise<T>[]): Promise<{ won: T[]; lost: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    won: results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])),
    lost: results.flatMap((r): unknown[] => (r.status === "rejected" ? [r.reason as unknown] : [])),
  };
}

/** Runs `tasks` with at most `limit` in flight. */
async function inBatches(count: number, limit: number, task: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += limit) {
    await Promise.all(Array.from({ length: Math.min(limit, count - start) }, (_, j) => task(start + j)));
  }
}

export function objectStoreContract(storeName: string, makeStore: () => ObjectStore): void {
  describe(`object-store contract: ${storeName}`, () => {
    const run = `contract-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    let counter = 0;
    const freshKey = (name: string): string => `${run}/${++counter}/${name}`;

    it("stores and returns bytes with an unquoted ETag", async () => {
      const store = makeStore();
      const key = freshKey("plain");
      const { etag } = await store.put(key, bytes("hello"));
      expect(etag).not.toMatch(/"/);
      expect(etag.length).toBeGreaterThan(0);
      const got = await store.get(key);
      expect(text(got.body)).toBe("hello");
      expect(got).toMatchObject({ key, size: 5, etag, rangeStart: 0 });
      expect(await store.head(key)).toEqual({ key, size: 5, etag });
    });

    it("stores an empty object", async () => {
      const store = makeStore();
      const key = freshKey("empty");
      await store.put(key, new Uint8Array(0));
      const got = await store.get(key);
      expect(got.body.byteLength).toBe(0);
      expect(got.size).toBe(0);
    });

    it("a missing key is not_found on get, null on head, and deleting it succeeds", async () => {
      const store = makeStore();
      const key = freshKey("missing");
      await expect(store.get(key)).rejects.toSatisfy((e) => isStoreError(e, "not_found"));
      expect(await store.head(key)).toBeNull();
      await expect(store.delete(key)).resolves.toBeUndefined();
    });

    it("delete removes an object", async () => {
      const store = makeStore();
      const key = freshKey("deleted");
      await store.put(key, bytes("x"));
      await store.delete(key);
      expect(await store.head(key)).toBeNull();
    });

    it("keys with spaces, unicode and URL-reserved characters round-trip", async () => {
      const store = makeStore();
      const names = ["a b", "plus+sign", "eq=ual&amp", "tilde~", "ünï/cødé", "star*(x)!", "percent%20"];
      for (const name of names) {
        const key = freshKey(name);
        await store.put(key, bytes(name));
        expect(text((await store.get(key)).body)).toBe(name);
        const listed = await store.list(key);
        expect(listed.objects.map((o) => o.key)).toEqual([key]);
      }
    });

    it("If-None-Match: of 16 concurrent creators of one key exactly one wins", async () => {
      const store = makeStore();
      const key = freshKey("race-create");
      const writers = Array.from({ length: 16 }, (_, i) => store.put(key, bytes(`writer-${i}`), { condition: { ifNoneMatch: "*" } }).then(() => i));
      const { won, lost } = await settleAll(writers);
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(15);
      for (const error of lost) expect(isStoreError(error, "precondition_failed")).toBe(true);
      expect(text((await store.get(key)).body)).toBe(`writer-${won[0]}`);
    });

    it("If-None-Match on an existing key fails and leaves it unchanged", async () => {
      const store = makeStore();
      const key = freshKey("exists");
      const first = await store.put(key, bytes("first"));
      await expect(store.put(key, bytes("second"), { condition: { ifNoneMatch: "*" } })).rejects.toSatisfy((e) =>
        isStoreError(e, "precondition_failed"),
      );
      const got = await store.get(key);
      expect(text(got.body)).toBe("first");
      expect(got.etag).toBe(first.etag);
    });

    it("If-Match: of 16 concurrent compare-and-swaps on one ETag exactly one wins", async () => {
      const store = makeStore();
      const key = freshKey("race-cas");
      const { etag } = await store.put(key, bytes("v0"), { condition: { ifNoneMatch: "*" } });
      const writers = Array.from({ length: 16 }, (_, i) => store.put(key, bytes(`v1-by-${i}`), { condition: { ifMatch: etag } }).then(() => i));
      const { won, lost } = await settleAll(writers);
      expect(won).toHaveLength(1);
      for (const error of lost) expect(isStoreError(error, "precondition_failed")).toBe(true);
      expect(text((await store.get(key)).body)).toBe(`v1-by-${won[0]}`);
    });

    it("If-Match: a stale ETag fails, the current one succeeds, a missing key fails", async () => {
      const store = makeStore();
      const key = freshKey("cas");
      const v1 = await store.put(key, bytes("v1"));
      const v2 = await store.put(key, bytes("v2"), { condition: { ifMatch: v1.etag } });
      expect(v2.etag).not.toBe(v1.etag);
      await expect(store.put(key, bytes("v3"), { condition: { ifMatch: v1.etag } })).rejects.toSatisfy((e) =>
        isStoreError(e, "precondition_failed"),
      );
      const v3 = await store.put(key, bytes("v3"), { condition: { ifMatch: v2.etag } });
      expect((await store.head(key))?.etag).toBe(v3.etag);
      await expect(store.put(freshKey("cas-missing"), bytes("x"), { condition: { ifMatch: v3.etag } })).rejects.toSatisfy((e) =>
        isStoreError(e, "precondition_failed"),
      );
    });

    it("If-Match accepts the ETag quoted or bare, whatever form the server matches", async () => {
      const store = makeStore();
      const key = freshKey("etag-forms");
      const v1 = await store.put(key, bytes("v1"));
      const v2 = await store.put(key, bytes("v2"), { condition: { ifMatch: `"${v1.etag}"` } });
      const v3 = await store.put(key, bytes("v3"), { condition: { ifMatch: unquoteEtag(v2.etag) } });
      await expect(store.put(key, bytes("v4"), { condition: { ifMatch: `"${v2.etag}"` } })).rejects.toSatisfy((e) =>
        isStoreError(e, "precondition_failed"),
      );
      expect((await store.get(key)).etag).toBe(v3.etag);
    });

    it("ranged reads: a window, an open end, a suffix, a suffix longer than the object", async () => {
      const store = makeStore();
      const key = freshKey("ranges");
      await store.put(key, bytes("0123456789"));
      const window = await store.get(key, { offset: 2, length: 3 });
      expect([text(window.body), window.rangeStart, window.size]).toEqual(["234", 2, 10]);
      const openEnd = await store.get(key, { offset: 7 });
      expect([text(openEnd.body), openEnd.rangeStart]).toEqual(["789", 7]);
      const pastEnd = await store.get(key, { offset: 8, length: 100 });
      expect(text(pastEnd.body)).toBe("89");
      const suffix = await store.get(key, { suffixLength: 4 });
      expect([text(suffix.body), suffix.rangeStart, suffix.size]).toEqual(["6789", 6, 10]);
      const longSuffix = await store.get(key, { suffixLength: 50 });
      expect([text(longSuffix.body), longSuffix.rangeStart]).toEqual(["0123456789", 0]);
    });

    it("a range that starts past the end is refused, also on an empty object", async () => {
      const store = makeStore();
      const key = freshKey("range-past-end");
      await store.put(key, bytes("abc"));
      await expect(store.get(key, { offset: 3 })).rejects.toSatisfy((e) => isStoreError(e, "fatal"));
      const empty = freshKey("range-empty");
      await store.put(empty, new Uint8Array(0));
      await expect(store.get(empty, { offset: 0 })).rejects.toSatisfy((e) => isStoreError(e, "fatal"));
    });

    it("rewriting identical bytes keeps the ETag; different bytes change it", async () => {
      const store = makeStore();
      const key = freshKey("etag-content");
      const v1 = await store.put(key, bytes("same"));
      const again = await store.put(key, bytes("same"), { condition: { ifMatch: v1.etag } });
      expect(again.etag).toBe(v1.etag);
      const changed = await store.put(key, bytes("other"), { condition: { ifMatch: again.etag } });
      expect(changed.etag).not.toBe(v1.etag);
    });

    it("objects of 8 MiB and more round-trip whole and by range", async () => {
      const store = makeStore();
      const key = freshKey("large");
      const size = 9 * 1024 * 1024 + 17;
      const body = patterned(size, 42);
      await store.put(key, body, { condition: { ifNoneMatch: "*" } });
      const got = await store.get(key);
      expect(got.size).toBe(size);
      expect(Buffer.from(got.body).equals(Buffer.from(body))).toBe(true);
      const middle = await store.get(key, { offset: 5_000_000, length: 1_000_000 });
      expect(Buffer.from(middle.body).equals(Buffer.from(body.subarray(5_000_000, 6_000_000)))).toBe(true);
    });

    it("lists every key past 1,000 in order, page by page, and after a start key", { timeout: 120_000 }, async () => {
      const store = makeStore();
      const prefix = `${freshKey("many")}/`;
      const count = 1_050;
      const keys = Array.from({ length: count }, (_, i) => `${prefix}${i.toString().padStart(5, "0")}`);
      await inBatches(count, 32, (i) => store.put(keys[i]!, bytes(String(i))));

      const listed: string[] = [];
      for await (const object of listAll(store, prefix)) listed.push(object.key);
      expect(listed).toEqual(keys);

      const firstPage = await store.list(prefix, { maxKeys: 100 });
      expect(firstPage.objects.map((o) => o.key)).toEqual(keys.slice(0, 100));
      expect(firstPage.nextContinuationToken).toBeDefined();
      const secondPage = await store.list(prefix, { maxKeys: 100, continuationToken: firstPage.nextContinuationToken! });
      expect(secondPage.objects.map((o) => o.key)).toEqual(keys.slice(100, 200));

      const tail = await store.list(prefix, { startAfter: keys[1_039]! });
      expect(tail.objects.map((o) => o.key)).toEqual(keys.slice(1_040));
      expect(tail.nextContinuationToken).toBeUndefined();
      expect(tail.objects[0]).toMatchObject({ size: 4 });
    });

    it("list of an unused prefix is empty", async () => {
      const store = makeStore();
      const page = await store.list(`${freshKey("nothing")}/`);
      expect(page).toEqual({ objects: [] });
    });
  });
}
