// The router's per-isolate view cache (src/router/view-cache.ts): entries trusted for the TTL, then looked
// up again; "not registered" never cached; `fresh` skips the cache; an older answer never replaces a newer.
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

  it("never caches a name the log does not hold, and keeps the newer of two answers", async () => {
    const cache = new ViewCache({ ttlMs: 60_000 });
    let answer = lookupOf(5, null);
    const source = async (): Promise<StreamLookup> => answer;
    expect((await cache.lookup(source, "a")).stream).toBeNull();
    answer = lookupOf(6, "n1");
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n1");
    cache.remember("a", lookupOf(4, "old"));
    expect((await cache.lookup(source, "a")).stream?.owner).toBe("n1");
    cache.invalidate("a");
    expect(cache.size).toBe(0);
  });
});
