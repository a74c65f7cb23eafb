// Row SUB-4 (pattern half) and SUB-6 (path half) of docs/protocol-rules.md: `*` matches one path segment,
// `**` any number (zero included), every other segment itself. Properties against a backtracking oracle.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { matchesPattern, parsePattern, parseStreamPath } from "../../../src/core/subscriptions/index.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const RUNS = propertyRuns(300);

/** The obvious recursive matcher: exponential in the worst case, fine for small inputs. */
function oracle(pattern: readonly string[], path: readonly string[]): boolean {
  const [head, ...rest] = pattern;
  if (head === undefined) return path.length === 0;
  if (head === "**") return Array.from({ length: path.length + 1 }, (_, i) => i).some((i) => oracle(rest, path.slice(i)));
  if (path.length === 0) return false;
  return (head === "*" || head === path[0]) && oracle(rest, path.slice(1));
}

const segment = fc.constantFrom("a", "b", "events", "x.y");
const patternSegment = fc.oneof(segment, fc.constant("*"), fc.constant("**"));
const pathArb = fc.array(segment, { minLength: 1, maxLength: 6 });
const patternArb = fc.array(patternSegment, { minLength: 1, maxLength: 6 });

describe("subscription patterns", () => {
  test("SUB-4: '*' is one segment, '**' any number, literals match themselves", () => {
    expect(matchesPattern("events/*", "events/sync-1")).toBe(true);
    expect(matchesPattern("events/*", "events")).toBe(false);
    expect(matchesPattern("events/*", "events/a/b")).toBe(false);
    expect(matchesPattern("events/**", "events")).toBe(true);
    expect(matchesPattern("events/**", "events/a/b/c")).toBe(true);
    expect(matchesPattern("**/log", "a/b/log")).toBe(true);
    expect(matchesPattern("**/log", "log")).toBe(true);
    expect(matchesPattern("a/**/z", "a/z")).toBe(true);
    expect(matchesPattern("a/**/z", "a/b/c/z")).toBe(true);
    expect(matchesPattern("a/**/z", "a/b/c")).toBe(false);
    expect(matchesPattern("**", "anything/at/all")).toBe(true);
    expect(matchesPattern("wake/pool", "wake/pool")).toBe(true);
    expect(matchesPattern("wake/pool", "wake/pool2")).toBe(false);
  });

  test("SUB-4: patterns and paths are normalized and checked", () => {
    expect(parsePattern("/events/*/")).toEqual({ ok: true, value: "events/*" });
    for (const bad of ["", "a//b", "a/*b", "**x", "__ds/*", "a/../b", 5]) expect(parsePattern(bad).ok).toBe(false);
    expect(parseStreamPath("manual/b")).toEqual({ ok: true, value: "manual/b" });
    expect(parseStreamPath("manual/*").ok).toBe(false);
  });

  test("property: the linear matcher agrees with the backtracking oracle", () => {
    fc.assert(
      fc.property(patternArb, pathArb, (pattern, path) => {
        expect(matchesPattern(pattern.join("/"), path.join("/"))).toBe(oracle(pattern, path));
      }),
      { numRuns: RUNS * 3 },
    );
  });

  test("property: every instantiation of a pattern matches it", () => {
    const instantiated = patternArb.chain((pattern) =>
      fc
        .tuple(...pattern.map((p) => (p === "**" ? fc.array(segment, { maxLength: 3 }) : p === "*" ? segment.map((s) => [s]) : fc.constant([p]))))
        .map((parts) => ({ pattern, path: parts.flat() })),
    );
    fc.assert(
      fc.property(instantiated, ({ pattern, path }) => {
        fc.pre(path.length > 0);
        expect(matchesPattern(pattern.join("/"), path.join("/"))).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  test("property: a pattern without wildcards matches exactly itself", () => {
    fc.assert(
      fc.property(pathArb, pathArb, (a, b) => {
        expect(matchesPattern(a.join("/"), b.join("/"))).toBe(a.join("/") === b.join("/"));
      }),
      { numRuns: RUNS },
    );
  });

  test("many '**' segments stay fast (no exponential backtracking)", () => {
    const pattern = Array.from({ length: 40 }, () => "**").join("/") + "/never";
    const path = Array.from({ length: 200 }, () => "a").join("/");
    expect(matchesPattern(pattern, path)).toBe(false);
  });
});
