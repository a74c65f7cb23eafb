// Table RT (src/core/protocol/request-target.ts) row by row, and the two properties the one parse rests on:
// the canonical spelling parses back to the same target, and every spelling of a request that is not refused
// means what its canonical spelling means.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { formatTarget, parseRequestTarget, type RequestTarget } from "../../../src/core/protocol/request-target.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const parsed = (path: string): RequestTarget => {
  const target = parseRequestTarget(path);
  if (!target.ok) throw new Error(`${path}: ${target.error.message}`);
  return target.value;
};
const refused = (path: string): string | null => {
  const target = parseRequestTarget(path);
  return target.ok ? null : target.error.code;
};

describe("table RT", () => {
  test("RT1: malformed percent-encoding, dot segments and control characters are refused", () => {
    for (const path of ["/v1/stream/a%zz", "/v1/stream/a/%2e%2e/b", "/v1/stream/%2E", "/v1/stream/a%00b", "/v1/stream/a%0A"]) expect(refused(path), path).toBe("invalid");
  });
  test("RT2: a word or number of the API spelled with % is refused, wherever it stands", () => {
    for (const path of [
      "/v1/table/t/writ%65",
      "/v1/table/t/%77rite",
      "/v1/stream/%5F%5Fds/subscriptions/x",
      "/v1/stream/__ds/%73ubscriptions/x",
      "/v1/stream/__ds/subscriptions/x/%63laim",
      "/v1/stream/__ds%2Fsubscriptions%2Fx",
      "/%76%31/stream/a",
      "/v1/%73tream/a",
      "/%6E/node-0/v1/stream/a",
      "/%61dmin/nodes",
      "/v1/table/t/%62ucket/0/write",
      "/v1/table/t/bucket/%30/write",
      "/v1/table/t/%70/k/bucket/0/write",
    ]) {
      expect(refused(path), path).toBe("invalid");
    }
  });
  test("RT3: a stream name is the rest of the path, each segment decoded once; %2F is a slash", () => {
    expect(parsed("/v1/stream/a/b")).toEqual({ kind: "stream", node: null, name: "a/b" });
    expect(parsed("/v1/stream/a%2Fb")).toEqual({ kind: "stream", node: null, name: "a/b" });
    expect(parsed("/v1/stream/%61/b")).toEqual({ kind: "stream", node: null, name: "a/b" });
    expect(parsed("/v1/stream/a%2561")).toEqual({ kind: "stream", node: null, name: "a%61" });
    expect(parsed("/n/node-1/v1/stream/x%20y")).toEqual({ kind: "stream", node: "node-1", name: "x y" });
    expect(parsed("/v1/stream/x/__ds")).toEqual({ kind: "stream", node: null, name: "x/__ds" });
  });
  test("RT4, RT5, RT6: the reserved namespace, written plainly", () => {
    expect(parsed("/v1/stream/__ds/jwks.json")).toEqual({ kind: "jwks", node: null });
    expect(parsed("/v1/stream/__ds/subscriptions/s%2D1")).toEqual({ kind: "subscription", node: null, id: "s-1", action: "config", stream: null });
    expect(parsed("/n/a/v1/stream/__ds/subscriptions/s/streams")).toMatchObject({ kind: "subscription", node: "a", action: "streams" });
    expect(parsed("/v1/stream/__ds/subscriptions/s/streams/a%2Fb/c")).toMatchObject({ action: "stream", stream: "a/b/c" });
    for (const action of ["callback", "ack", "claim", "release"]) expect(parsed(`/v1/stream/__ds/subscriptions/s/${action}`)).toMatchObject({ action });
    expect(parsed("/v1/stream/__ds/elsewhere")).toEqual({ kind: "reserved", node: null, rest: ["elsewhere"] });
    expect(parsed("/v1/stream/__ds/subscriptions/s/bogus")).toMatchObject({ kind: "reserved" });
  });
  test("RT7, RT8: tables and buckets", () => {
    expect(parsed("/v1/table")).toEqual({ kind: "table_list", node: null });
    expect(parsed("/v1/table/orders")).toEqual({ kind: "table", node: null, table: "orders", action: "definition" });
    expect(parsed("/v1/table/%6Frders/write")).toEqual({ kind: "table", node: null, table: "orders", action: "write" });
    expect(parsed("/v1/table/t/bucket/3/changelog")).toEqual({ kind: "bucket", node: null, table: "t", partition: null, bucket: 3, op: "changelog" });
    expect(parsed("/n/n1/v1/table/t/p/s2026%23%5D12!/bucket/0/write")).toEqual({ kind: "bucket", node: "n1", table: "t", partition: "s2026#]12!", bucket: 0, op: "write" });
    expect(parsed("/v1/table/t/bucket/01/write")).toMatchObject({ kind: "unknown" });
    expect(parsed("/v1/table/t/nope")).toMatchObject({ kind: "unknown" });
  });
  test("RT9, RT10: health, the operator's paths, anything else", () => {
    expect(parsed("/health")).toEqual({ kind: "health" });
    expect(parsed("/metrics")).toEqual({ kind: "operator", segments: ["metrics"] });
    expect(parsed("/admin/streams/a%2Fb")).toEqual({ kind: "operator", segments: ["admin", "streams", "a/b"] });
    expect(parsed("/")).toEqual({ kind: "unknown", segments: [""] });
    expect(parsed("/v2/stream/a")).toMatchObject({ kind: "unknown" });
  });
});

/** A path segment of names and words, from characters a client may send (any of them may then be encoded). */
const segmentText = fc.string({ unit: fc.constantFrom(..."ab_-.~!*'()%/:@?#&=+$, é日".split("")), minLength: 1, maxLength: 6 });
const words = ["v1", "stream", "table", "__ds", "subscriptions", "streams", "bucket", "p", "write", "lookup", "prefix", "partitions", "changelog", "claim", "n", "admin", "0", "7"];
const pathOf = fc.array(fc.oneof(fc.constantFrom(...words), segmentText), { minLength: 1, maxLength: 8 }).map((segments) => `/${segments.map(encodeURIComponent).join("/")}`);

/** One character spelled every way a client may: as itself when it can be, %XX, %xx. */
function respell(path: string, choices: readonly number[]): string {
  let i = 0;
  return path.replace(/%[0-9A-F]{2}|[A-Za-z0-9_~.!*'()-]/g, (unit) => {
    const choice = choices[i++ % choices.length] ?? 0;
    const hex = unit.startsWith("%") ? unit.slice(1) : unit.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");
    if (choice === 0) return unit;
    return choice === 1 ? `%${hex}` : `%${hex.toLowerCase()}`;
  });
}

describe("one parse", () => {
  test("the canonical spelling of a target parses back to the same target", () => {
    fc.assert(
      fc.property(pathOf, (path) => {
        const target = parseRequestTarget(path);
        if (!target.ok) return;
        const again = parseRequestTarget(formatTarget(target.value));
        expect(again.ok && again.value).toEqual(target.value);
        expect(formatTarget(target.value)).toBe(formatTarget(again.ok ? again.value : target.value));
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });
  test("any spelling of a path is refused or means exactly what the canonical path means", () => {
    fc.assert(
      fc.property(pathOf, fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 12 }), (path, choices) => {
        const canonical = parseRequestTarget(path);
        const spelled = parseRequestTarget(respell(path, choices));
        if (!spelled.ok) return;
        expect(canonical.ok && canonical.value).toEqual(spelled.value);
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });
});
