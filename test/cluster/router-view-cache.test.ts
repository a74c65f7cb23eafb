// The router's per-isolate view cache (src/router/view-cache.ts): entries trusted for the TTL, then looked
// up again; "not registered" cached for its own (shorter) TTL and bound; `fresh` skips the cache; an older
// answer never replaces a newer one.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StreamLookup } from "../../src/core/meta/view.ts";
import { ViewCache } from "../../src/router/view-cache.ts";

function lookupOf(version: number, owner: string | null): StreamLookup {
  if (owner === null) return { version, stream: null, ownerNode: null, targetNode: null };
  return {
    version,
    stream: {
      id: "s1",
      name: "a",
      owner,
      epoch: 1,
      ownership: "opened",
      config: { contentType: "text/plain", ttlSeconds: null, expiresAtMs: null, fork: null },
    },
    ownerNode: { id: owner, epoch: 1, addr: `http://x/n/${owner}`, slots: 1, draining: false },
    targetNode: null,
  } as unknown as StreamLookup;
}

describe("ViewCache", () => {
  it("trusts an entry for its TTL, then looks the name up again", async () => {
    let nowMs = 0;
    let answer = lookupOf(1, "n1");
    const cache = new ViewCache({ ttlMs: 1_000, now: () => nowMs });
    const source = async (): Promise<StreamLookup> => answer;
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n1");
    answer = lookupOf(2, "n2");
    nowMs = 999;
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n1");
    expect((await cache.lookup(source, "a", true)).stream?.owner).toBe("n2");
    answer = lookupOf(3, "n3");
    nowMs = 2_000;
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n3");
    expect(cache.misses).toBe(3);
  });

  it("a name the log does not hold is trusted for the negative TTL only, then looked up again", async () => {
    let nowMs = 0;
    let answer = lookupOf(5, null);
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 1_000, now: () => nowMs });
    const source = async (): Promise<StreamLookup> => answer;
    expect((await cache.lookup(source, "a")).stream).toBeNull();
    answer = lookupOf(6, "n1");
    nowMs = 999;
    expect((await cache.lookup(source, "a")).stream).toBeNull();
    expect(cache.misses).toBe(1);
    nowMs = 1_000;
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n1");
    expect(cache.misses).toBe(2);
  });

  it("with a negative TTL of 0 a name the log does not hold is never cached", async () => {
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 0 });
    const source = async (): Promise<StreamLookup> => lookupOf(1, null);
    await cache.lookup(source, "a");
    await cache.lookup(source, "a");
    expect(cache.misses).toBe(2);
    expect(cache.negativeSize).toBe(0);
  });

  it("invalidating a name cached as absent makes the next lookup ask the log (a create through this router)", async () => {
    let answer = lookupOf(1, null);
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000 });
    const source = async (): Promise<StreamLookup> => answer;
    await cache.lookup(source, "a");
    answer = lookupOf(2, "n1");
    cache.invalidate("a");
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n1");
  });

  it("negative entries have their own bound: a scan of absent names never pushes out streams in use", async () => {
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000, maxEntries: 3 });
    cache.remember("live", lookupOf(1, "n1"));
    for (let i = 0; i < 10; i++) cache.remember(`absent-${i}`, lookupOf(1, null));
    expect(cache.size).toBe(1);
    expect(cache.negativeSize).toBe(3);
    expect(cache.cached("live")?.stream?.owner).toBe("n1");
    expect(cache.cached("absent-9")?.stream).toBeNull();
    expect(cache.cached("absent-0")).toBeNull();
  });

  it("keeps the newer of two answers, whether present or absent", async () => {
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000 });
    cache.remember("a", lookupOf(6, "n1"));
    cache.remember("a", lookupOf(4, "old"));
    expect(cache.cached("a")?.stream?.owner).toBe("n1");
    cache.remember("a", lookupOf(5, null));
    expect(cache.cached("a")?.stream?.owner).toBe("n1");
    cache.remember("a", lookupOf(7, null)); // deleted since
    expect(cache.cached("a")?.stream).toBeNull();
    expect(cache.size).toBe(0);
    cache.invalidate("a");
    expect(cache.negativeSize).toBe(0);
  });

  it("the cached answer of a name is the newest one remembered, present or absent", () => {
    const answer = fc.record({ name: fc.constantFrom("a", "b", "c", "d"), version: fc.nat(20), present: fc.boolean() });
    fc.assert(
      fc.property(fc.array(answer, { maxLength: 60 }), (answers) => {
        const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000, now: () => 0 });
        const newest = new Map<string, number>();
        for (const { name, version, present } of answers) {
          cache.remember(name, lookupOf(version, present ? "n1" : null));
          newest.set(name, Math.max(newest.get(name) ?? -1, version));
        }
        for (const [name, version] of newest) expect(cache.cached(name)?.version).toBe(version);
      }),
    );
  });

  it("positive and negative entries each stay within the bound", () => {
    const answer = fc.record({ name: fc.integer({ min: 0, max: 9 }), version: fc.nat(20), present: fc.boolean() });
    fc.assert(
      fc.property(fc.array(answer, { maxLength: 60 }), (answers) => {
        const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000, maxEntries: 2, now: () => 0 });
        for (const { name, version, present } of answers) {
          cache.remember(`s${name}`, lookupOf(version, present ? "n1" : null));
          expect(cache.size).toBeLessThanOrEqual(2);
          expect(cache.negativeSize).toBeLessThanOrEqual(2);
        }
      }),
    );
  });
});
