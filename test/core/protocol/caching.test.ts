// Rows CCH-1..CCH-4 of docs/protocol-rules.md.
import { describe, expect, test } from "vitest";
import { cacheControl, ifNoneMatchMatches, readEtag } from "../../../src/core/protocol/caching.ts";
import { formatOffset } from "../../../src/core/protocol/offsets.ts";

const start = formatOffset(0);
const end = formatOffset(9);

describe("ETags", () => {
  test("CCH-1: the ETag names stream incarnation, start and end, quoted", () => {
    expect(readEtag("s12", start, end, false)).toBe(`"s12:${start}:${end}"`);
  });

  test("CCH-1 / CCH-3: closure changes the ETag, and so do new data and a new incarnation", () => {
    const open = readEtag("s12", start, end, false);
    expect(readEtag("s12", start, end, true)).toBe(`"s12:${start}:${end}:c"`);
    expect(readEtag("s12", start, formatOffset(10), false)).not.toBe(open);
    expect(readEtag("s13", start, end, false)).not.toBe(open);
  });

  test("CCH-2: If-None-Match matches the exact tag, a listed tag, a weak tag, or *", () => {
    const etag = readEtag("s1", start, end, false);
    expect(ifNoneMatchMatches(etag, etag)).toBe(true);
    expect(ifNoneMatchMatches(`"x", ${etag}`, etag)).toBe(true);
    expect(ifNoneMatchMatches(`W/${etag}`, etag)).toBe(true);
    expect(ifNoneMatchMatches("*", etag)).toBe(true);
  });

  test("CCH-3: a different or absent If-None-Match does not match", () => {
    const etag = readEtag("s1", start, end, false);
    expect(ifNoneMatchMatches('"wrong-etag"', etag)).toBe(false);
    expect(ifNoneMatchMatches(null, etag)).toBe(false);
    expect(ifNoneMatchMatches(readEtag("s1", start, end, true), etag)).toBe(false);
  });
});

describe("Cache-Control", () => {
  test("CCH-4: reads with data, and EOF, are publicly cacheable for up to 60 s", () => {
    const policy = "public, max-age=60, stale-while-revalidate=300";
    expect(cacheControl("read", { hasData: true, closed: false, lifetimeSeconds: null })).toBe(policy);
    expect(cacheControl("read", { hasData: false, closed: true, lifetimeSeconds: null })).toBe(policy);
  });

  test("CCH-4: never cached past the stream's own lifetime", () => {
    expect(cacheControl("read", { hasData: true, closed: false, lifetimeSeconds: 12.9 })).toBe(
      "public, max-age=12, stale-while-revalidate=300",
    );
    expect(cacheControl("read", { hasData: true, closed: false, lifetimeSeconds: 0.5 })).toBe("no-store");
  });

  test("CCH-4: an empty page at the tail of an open stream is a poll: no-store", () => {
    expect(cacheControl("read", { hasData: false, closed: false, lifetimeSeconds: null })).toBe("no-store");
  });

  test("CCH-4 / RD-6 / HD-1 / LP-4: offset=now, HEAD, long-poll 204, writes and errors are no-store; SSE no-cache", () => {
    expect(cacheControl("uncacheable")).toBe("no-store");
    expect(cacheControl("read")).toBe("no-store");
    expect(cacheControl("sse")).toBe("no-cache");
  });
});
