// Table AS (src/core/auth/subscription-access.ts): which route needs what, and the property that makes
// binding a subscription to prefixes sound: every name a pattern matches begins with its literal start.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { patternLiteralStart, scopeOfBody, subscriptionNeeds, subscriptionRoute } from "../../../src/core/auth/subscription-access.ts";
import { matchesPattern } from "../../../src/core/subscriptions/paths.ts";
import { parseRequestTarget } from "../../../src/core/protocol/request-target.ts";
import { propertyRuns } from "../../support/property-runs.ts";

describe("table AS: routes", () => {
  test.each([
    ["PUT", "subscriptions/s1", { kind: "put", id: "s1" }],
    ["GET", "subscriptions/s1", { kind: "about", id: "s1" }],
    ["DELETE", "subscriptions/s1", { kind: "about", id: "s1" }],
    ["POST", "subscriptions/s1/claim", { kind: "about", id: "s1" }],
    ["POST", "subscriptions/s1/streams", { kind: "add_streams", id: "s1" }],
    ["DELETE", "subscriptions/s1/streams/a%2Fb", { kind: "about", id: "s1" }],
    ["POST", "subscriptions/s1/callback", { kind: "own_token" }],
    ["POST", "subscriptions/s1/ack", { kind: "own_token" }],
    ["POST", "subscriptions/s1/release", { kind: "own_token" }],
    ["GET", "jwks.json", { kind: "own_token" }],
    ["GET", "elsewhere", { kind: "other" }],
  ] as const)("%s %s", (method, rest, route) => {
    const target = parseRequestTarget(`/v1/stream/__ds/${rest}`);
    expect(target.ok && subscriptionRoute(method, target.value)).toEqual(route);
  });
});

describe("needs", () => {
  test("subscribe itself, then every stream, the pattern's literal start and the wake stream, of every scope", () => {
    expect(subscriptionNeeds({ streams: ["a/x"], pattern: "a/*", wakeStream: "w/1" }, { streams: ["b/y"], pattern: null, wakeStream: null })).toEqual([
      { op: "subscribe", stream: null },
      { op: "subscribe", stream: "a/" },
      { op: "subscribe", stream: "a/x" },
      { op: "subscribe", stream: "b/y" },
      { op: "subscribe", stream: "w/1" },
    ]);
  });
  test("a body's scope: the parts that parse (the route refuses the rest)", () => {
    expect(scopeOfBody({ streams: ["/a/b/", "*bad", 3], pattern: "c/**", wake_stream: "w" })).toEqual({ streams: ["a/b"], pattern: "c/**", wakeStream: "w" });
    expect(scopeOfBody("not an object")).toEqual({ streams: [], pattern: null, wakeStream: null });
  });
  test.each([
    ["a/b", "a/b"],
    ["a/*", "a/"],
    ["a/**", "a"],
    ["a/*/c", "a/"],
    ["**", ""],
    ["*/x", ""],
  ])("literal start of %s is %j", (pattern, start) => expect(patternLiteralStart(pattern)).toBe(start));
});

describe("the invariant", () => {
  const segment = fc.constantFrom("a", "b", "ab");
  const patternSegment = fc.constantFrom("a", "b", "ab", "*", "**");
  test("every path a pattern matches starts with the pattern's literal start", () => {
    fc.assert(
      fc.property(fc.array(patternSegment, { minLength: 1, maxLength: 4 }), fc.array(segment, { minLength: 1, maxLength: 5 }), (pat, seg) => {
        const pattern = pat.join("/");
        const path = seg.join("/");
        if (matchesPattern(pattern, path)) expect(path.startsWith(patternLiteralStart(pattern))).toBe(true);
      }),
      { numRuns: propertyRuns(2000) },
    );
  });
});
