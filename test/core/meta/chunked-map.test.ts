// ChunkedMap (src/core/meta): the persistent map the metadata state keeps its records in.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChunkedMap } from "../../../src/core/meta/index.ts";
import { propertyRuns } from "../../support/property-runs.ts";

describe("ChunkedMap", { timeout: 120_000 }, () => {
  it("behaves like a Map, and every version stays as it was", () => {
    const op = fc.record({ key: fc.string({ maxLength: 3 }), value: fc.integer(), remove: fc.boolean() });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        let map = ChunkedMap.empty<number>();
        const model = new Map<string, number>();
        const history: [ChunkedMap<number>, Map<string, number>][] = [];
        for (const { key, value, remove } of ops) {
          map = remove ? map.delete(key) : map.set(key, value);
          if (remove) model.delete(key);
          else model.set(key, value);
          history.push([map, new Map(model)]);
        }
        for (const [version, expected] of history) {
          expect(version.size).toBe(expected.size);
          expect(new Map(version.entries())).toEqual(expected);
        }
        expect([...ChunkedMap.fromEntries(map.entries()).entries()]).toEqual([...map.entries()]);
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});
