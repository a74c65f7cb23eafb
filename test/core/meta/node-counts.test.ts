// Table NC (src/core/meta/node-counts.ts): what each node owns, streams of the stream API apart from table buckets.
import { describe, expect, test } from "vitest";
import { ownedCountsByNode } from "../../../src/core/meta/node-counts.ts";
import type { Ownership } from "../../../src/core/meta/state.ts";

const record = (name: string, owner: string | null, ownership: Ownership = "opened") => ({ name, owner, ownership });

describe("table NC", () => {
  test("NC1: an unplaced stream counts for no node", () => {
    expect(ownedCountsByNode([record("demo/a", null, "unplaced")]).size).toBe(0);
  });

  test("NC2: a table bucket (named __ds/table/...) counts as a table bucket of its owner, opened or not", () => {
    const counts = ownedCountsByNode([record("__ds/table/orders/b/0", "n1"), record("__ds/table/orders/p/eu/b/1", "n1", "placed")]);
    expect(counts.get("n1")).toEqual({ streams: 0, openedStreams: 0, tableBuckets: 2 });
  });

  test("NC3: any other stream counts as a stream of its owner, and as opened when it is", () => {
    const counts = ownedCountsByNode([record("demo/a", "n1"), record("demo/b", "n1", "placed"), record("__ds/tables", "n2"), record("demo/c", "n2", "closed")]);
    expect(counts.get("n1")).toEqual({ streams: 2, openedStreams: 1, tableBuckets: 0 });
    expect(counts.get("n2")).toEqual({ streams: 2, openedStreams: 1, tableBuckets: 0 });
  });
});
