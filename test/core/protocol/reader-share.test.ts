// The live-reader admission rules RS-1..RS-4 (src/core/protocol/reader-share.ts), row by row.
import { describe, expect, test } from "vitest";
import { admitReader, defaultReaderShare } from "../../../src/core/protocol/reader-share.ts";

const caps = { maxLiveReaders: 10_000, maxLiveReadersPerToken: 2_500 };

describe("reader share (RS)", () => {
  test("RS-1: the node's pool full refuses anyone, with or without a token, naming MAX_LIVE_READERS", () => {
    for (const tokenId of ["t1", null]) {
      expect(admitReader({ active: 10_000, tokenActive: 0, tokenId }, caps)).toMatchObject({
        code: "limit_reached",
        details: { limit: "MAX_LIVE_READERS", max: 10_000 },
      });
    }
  });

  test("RS-1 before RS-2: both reached, the answer names the node's cap", () => {
    expect(admitReader({ active: 10_000, tokenActive: 2_500, tokenId: "t1" }, caps)?.details).toMatchObject({ limit: "MAX_LIVE_READERS" });
  });

  test("RS-2: a token at its share is refused while the pool has room, naming MAX_LIVE_READERS_PER_TOKEN", () => {
    expect(admitReader({ active: 2_500, tokenActive: 2_500, tokenId: "t1" }, caps)).toMatchObject({
      code: "limit_reached",
      details: { limit: "MAX_LIVE_READERS_PER_TOKEN", max: 2_500 },
    });
  });

  test("RS-2: a share larger than the pool is the pool", () => {
    expect(admitReader({ active: 5, tokenActive: 5, tokenId: "t1" }, { maxLiveReaders: 50, maxLiveReadersPerToken: 2_500 })).toBeNull();
    expect(admitReader({ active: 49, tokenActive: 49, tokenId: "t1" }, { maxLiveReaders: 50, maxLiveReadersPerToken: 2_500 })).toBeNull();
  });

  test("RS-3: without a token id only the pool counts", () => {
    expect(admitReader({ active: 9_999, tokenActive: 0, tokenId: null }, caps)).toBeNull();
  });

  test("RS-4: another token is admitted while one token sits at its share", () => {
    expect(admitReader({ active: 2_500, tokenActive: 0, tokenId: "t2" }, caps)).toBeNull();
    expect(admitReader({ active: 9_999, tokenActive: 2_499, tokenId: "t2" }, caps)).toBeNull();
  });

  test("the default share is a quarter of the pool, at least one", () => {
    expect(defaultReaderShare(10_000)).toBe(2_500);
    expect(defaultReaderShare(50)).toBe(12);
    expect(defaultReaderShare(2)).toBe(1);
  });
});
