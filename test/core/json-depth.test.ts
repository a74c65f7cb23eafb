// Table JD (src/core/json-depth.ts): nesting depth, measured without recursion.
import { describe, expect, test } from "vitest";
import { nestsDeeperThan } from "../../src/core/json-depth.ts";

const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

describe("table JD", () => {
  test.each([null, true, 0, "s"])("JD1: a scalar %j nests 0 levels", (value) => {
    expect(nestsDeeperThan(value, 0)).toBe(false);
  });

  test.each([[[]], [{}]])("JD2: an empty array or object %j nests 1 level", (value) => {
    expect(nestsDeeperThan(value, 1)).toBe(false);
    expect(nestsDeeperThan(value, 0)).toBe(true);
  });

  test("JD3: a container is one level more than its deepest member, arrays and objects alike", () => {
    const value = { a: 1, b: [2, { c: [[]] }], d: {} }; // { [ { [ [] ] } ] }: 5 levels
    expect(nestsDeeperThan(value, 5)).toBe(false);
    expect(nestsDeeperThan(value, 4)).toBe(true);
  });

  test("JD3: a million levels are measured without overflowing the stack", () => {
    expect(nestsDeeperThan(nested(1_000_000), 64)).toBe(true);
    expect(nestsDeeperThan(nested(64), 64)).toBe(false);
  });
});
