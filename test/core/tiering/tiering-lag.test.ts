// How far a tiered copy is behind (docs/tiering.md, table LG; src/core/tiering/tiering-lag.ts).
import { describe, expect, test } from "vitest";
import { tieringLag } from "../../../src/core/tiering/tiering-lag.ts";

const offsets = { s1: { position: 100, offset: 4 }, s2: { position: 0, offset: 0 } };

describe("table LG: the lag of a tiered copy", () => {
  test("LG1: records behind are summed over buckets; a bucket never tiered counts from 0; the time is the snapshot's age", () => {
    expect(tieringLag([{ streamId: "s1", records: 6 }, { streamId: "s2", records: 1 }, { streamId: "s3", records: 3 }], offsets, 1_000, 4_000)).toEqual({ lagRecords: 6, lagMs: 3_000 });
  });
  test("LG2: nothing behind is no lag at all, whatever the snapshot's age", () => {
    expect(tieringLag([{ streamId: "s1", records: 4 }, { streamId: "s2", records: 0 }], offsets, 1_000, 90_000)).toEqual({ lagRecords: 0, lagMs: 0 });
  });
  test("LG3: a bucket whose leader did not say makes the lag unknown; no snapshot yet makes its time unknown", () => {
    expect(tieringLag([{ streamId: "s1", records: null }], offsets, 1_000, 4_000)).toEqual({ lagRecords: null, lagMs: null });
    expect(tieringLag([{ streamId: "s3", records: 2 }], {}, null, 4_000)).toEqual({ lagRecords: 2, lagMs: null });
  });
});
