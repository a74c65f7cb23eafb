// The stream listing (src/core/meta/stream-listing.ts): the query string (table LQ), the paging decision
// (table LS) row by row, the records of a page, and a property: paging through every page from the start
// yields exactly the sorted matching names, each once, whatever the names, the prefix and the page size.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareNames,
  listStreams,
  pageOfNames,
  parseStreamListQuery,
  type NameSource,
  type StreamListQuery,
} from "../../../src/core/meta/index.ts";
import { build, create, register } from "./fixtures.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const NAMES = ["a", "demo/a", "demo/b", "demo/b/x", "demo/c", "demo0", "demp", "z"];
/** Names already in code-unit order, as a stream table yields them. */
const sorted = (names: readonly string[]): NameSource => ({ namesFrom: (from) => names.filter((name) => name >= from) });
const q = (prefix: string, after: string | null, limit: number): StreamListQuery => ({ prefix, after, limit });

describe("table LQ: the query string", () => {
  const raw = (prefix: string | null, after: string | null, limit: string | null) => parseStreamListQuery({ prefix, after, limit });

  it("LQ1, LQ3, LQ4: absent or empty prefix and after, absent limit: every stream from the first, 100 a page", () => {
    expect(raw(null, null, null)).toEqual({ ok: true, value: { prefix: "", after: null, limit: 100 } });
    expect(raw("", "", null)).toEqual({ ok: true, value: { prefix: "", after: null, limit: 100 } });
    expect(raw("demo/", "demo/b", "7")).toEqual({ ok: true, value: { prefix: "demo/", after: "demo/b", limit: 7 } });
    // Neither has to be a stream name: any string within the bounds pages correctly.
    expect(raw("de", "/", "1000")).toEqual({ ok: true, value: { prefix: "de", after: "/", limit: 1000 } });
  });

  it("LQ2: a prefix or after over 1024 characters, or with a control character, is invalid", () => {
    for (const [prefix, after] of [["x".repeat(1025), null], [null, "x".repeat(1025)], ["a\u0000", null], [null, "a\nb"], ["\u007f", null]] as const) {
      const parsed = raw(prefix, after, null);
      expect(parsed.ok, JSON.stringify([prefix, after])).toBe(false);
      if (!parsed.ok) expect(parsed.error.code).toBe("invalid");
    }
    expect(raw("x".repeat(1024), "y".repeat(1024), null).ok).toBe(true);
  });

  it("LQ5: a limit that is not a whole number from 1 to 1000 is invalid", () => {
    for (const limit of ["0", "1001", "-1", "1.5", "1e2", "", " 5", "abc", "99999999999"]) {
      const parsed = raw(null, null, limit);
      expect(parsed.ok, limit).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error.code).toBe("invalid");
        expect(parsed.error.message).toContain("limit must be a whole number from 1 to 1000");
      }
    }
    expect(raw(null, null, "1")).toMatchObject({ ok: true, value: { limit: 1 } });
  });
});

describe("table LS: one page", () => {
  it("LS1: only names that start with the prefix; every name for the empty prefix", () => {
    expect(pageOfNames(sorted(NAMES), q("demo/", null, 100))).toEqual({ names: ["demo/a", "demo/b", "demo/b/x", "demo/c"], next: null });
    expect(pageOfNames(sorted(NAMES), q("", null, 100))).toEqual({ names: NAMES, next: null });
    expect(pageOfNames(sorted(NAMES), q("demo/b", null, 100)).names).toEqual(["demo/b", "demo/b/x"]);
    expect(pageOfNames(sorted(NAMES), q("nothing", null, 100))).toEqual({ names: [], next: null });
  });

  it("LS2: after is exclusive, whether or not it is a name", () => {
    expect(pageOfNames(sorted(NAMES), q("demo/", "demo/b", 100)).names).toEqual(["demo/b/x", "demo/c"]);
    expect(pageOfNames(sorted(NAMES), q("demo/", "demo/bb", 100)).names).toEqual(["demo/c"]);
  });

  it("LS3, LS4: at most limit names; next is the last one when more match, null on the last page (also when it is exactly full)", () => {
    expect(pageOfNames(sorted(NAMES), q("demo/", null, 2))).toEqual({ names: ["demo/a", "demo/b"], next: "demo/b" });
    expect(pageOfNames(sorted(NAMES), q("demo/", "demo/b", 2))).toEqual({ names: ["demo/b/x", "demo/c"], next: null });
    // More names follow, but none with the prefix: the listing is over.
    expect(pageOfNames(sorted(NAMES), q("demo/", "demo/a", 3))).toEqual({ names: ["demo/b", "demo/b/x", "demo/c"], next: null });
    expect(pageOfNames(sorted(NAMES), q("", "demp", 1))).toEqual({ names: ["z"], next: null });
    expect(pageOfNames(sorted(NAMES), q("", "demo0", 1))).toEqual({ names: ["demp"], next: "demp" });
  });

  it("LS5: an after before the prefix's range starts at its first name; one past it gives an empty last page", () => {
    expect(pageOfNames(sorted(NAMES), q("demo/", "a", 1))).toEqual({ names: ["demo/a"], next: "demo/a" });
    expect(pageOfNames(sorted(NAMES), q("demo/", "demo0", 10))).toEqual({ names: [], next: null });
    expect(pageOfNames(sorted(NAMES), q("demo/", "zzz", 10))).toEqual({ names: [], next: null });
    expect(pageOfNames(sorted([]), q("", null, 10))).toEqual({ names: [], next: null });
  });

  it("orders by UTF-16 code unit, not by locale: upper case before lower case, an astral character before U+FFFF", () => {
    const names = ["b", "B", "a", "\u{1F600}", "\uFFFF", "é"].sort(compareNames);
    expect(names).toEqual(["B", "a", "b", "é", "\u{1F600}", "\uFFFF"]);
    expect(pageOfNames(sorted(names), q("", "b", 2))).toEqual({ names: ["é", "\u{1F600}"], next: "\u{1F600}" });
  });

  it("refuses a limit below 1 (the caller checks the query first)", () => {
    expect(() => pageOfNames(sorted(NAMES), q("", null, 0))).toThrow(RangeError);
  });
});

describe("the stream table's names and the page's records", () => {
  it("LS6: a table bucket's stream name is never listed, whatever the prefix", () => {
    const state = build([create("__ds/table/t/b/0"), create("__ds"), create("a")]);
    expect(pageOfNames(state.streams, q("", null, 10)).names).toEqual(["__ds", "a"]);
    expect(pageOfNames(state.streams, q("__ds/", null, 10))).toEqual({ names: [], next: null });
  });

  it("the in-memory table yields every name from a starting name on, in code-unit order", () => {
    const state = build(["m", "c", "x", "a", "\u{1F600}", "\uFFFF"].map((name) => create(name)));
    expect([...state.streams.namesFrom("")]).toEqual(["a", "c", "m", "x", "\u{1F600}", "\uFFFF"]);
    expect([...state.streams.namesFrom("d")]).toEqual(["m", "x", "\u{1F600}", "\uFFFF"]);
  });

  it("lists the records of a page with the owner's address and the pending transfer, at the state's version", () => {
    const state = build([
      register("a"),
      register("b"),
      create("demo/two", { contentType: "text/plain" }),
      create("demo/one"),
      create("other"),
      { type: "PlaceStream", streamId: "s1" },
      { type: "BeginTransfer", streamId: "s1", target: "b" },
    ]);
    expect(pageOfNames(state.streams, q("", null, 10)).names).toEqual(["demo/one", "demo/two", "other"]);
    const listing = listStreams(state, q("demo/", null, 1));
    expect(listing).toEqual({
      version: state.version,
      streams: [{ stream: { id: "s2", name: "demo/one", owner: null, epoch: 0, ownership: "unplaced", config: {} }, ownerAddress: null }],
      next: "demo/one",
    });
    const second = listStreams(state, q("demo/", "demo/one", 1));
    expect(second.next).toBeNull();
    expect(second.streams).toEqual([
      {
        stream: { id: "s1", name: "demo/two", owner: "a", epoch: 0, ownership: "placed", config: { contentType: "text/plain" }, transfer: { source: "a", target: "b" } },
        ownerAddress: "https://mink.test/n/a",
      },
    ]);
  });
});

describe("property: paging through every page", () => {
  // Short names over a small alphabet (with a slash, an upper-case letter and an astral character), so
  // prefixes often match and names often share prefixes.
  const alphabet = fc.constantFrom("a", "b", "/", "B", "é", "\u{1F600}");
  const nameArbitrary = fc.array(alphabet, { minLength: 1, maxLength: 5 }).map((chars) => chars.join(""));

  it("yields exactly the sorted names that start with the prefix, each once, in order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(nameArbitrary, { maxLength: 60 }),
        fc.array(alphabet, { maxLength: 2 }).map((chars) => chars.join("")),
        fc.integer({ min: 1, max: 7 }),
        (names, prefix, limit) => {
          const inOrder = [...names].sort(compareNames);
          const expected = inOrder.filter((name) => name.startsWith(prefix));
          const seen: string[] = [];
          let after: string | null = null;
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThanOrEqual(expected.length + 1);
            const page = pageOfNames(sorted(inOrder), { prefix, after, limit });
            expect(page.names.length).toBeLessThanOrEqual(limit);
            seen.push(...page.names);
            if (page.next === null) break;
            // A page with a next is full, and its next is its last name.
            expect(page.names.length).toBe(limit);
            expect(page.next).toBe(page.names.at(-1));
            after = page.next;
          }
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: propertyRuns(500) },
    );
  });
});
