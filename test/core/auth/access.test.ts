// Tables AC and AN (src/core/auth/access.ts), row by row, and the invariant the table exists for: a
// token never allows an operation it does not grant, nor a stream outside its prefixes.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ACCESS_OPS, coversStream, decideAccess, streamRequestNeeds, type AccessClaims, type AccessInput, type AccessNeed } from "../../../src/core/auth/access.ts";

const NOW = 1_800_000_000_000;
const claims: AccessClaims = { id: "t1", prefixes: ["demo/"], ops: ["read", "append"], expiresAtMs: NOW + 60_000 };
const input = (over: Partial<AccessInput>): AccessInput => ({
  token: { kind: "verified", claims },
  needs: [{ op: "read", stream: "demo/a" }],
  nowMs: NOW,
  isRevoked: () => false,
  ...over,
});
const codeOf = (i: AccessInput): string => {
  const decision = decideAccess(i);
  return decision.ok ? "allowed" : decision.error.code;
};

describe("table AC", () => {
  test("AC1: no bearer token is 401", () => expect(codeOf(input({ token: { kind: "missing" } }))).toBe("unauthorized"));
  test("AC2: a token that does not verify is 401, with the reason", () => {
    const decision = decideAccess(input({ token: { kind: "invalid", reason: "bad signature" } }));
    expect(decision.ok ? null : [decision.error.code, decision.error.message]).toEqual(["unauthorized", "the bearer token is not valid: bad signature"]);
  });
  test("AC3: expired at exp exactly, and not yet valid before nbf", () => {
    expect(codeOf(input({ nowMs: claims.expiresAtMs }))).toBe("unauthorized");
    expect(codeOf(input({ nowMs: claims.expiresAtMs - 1 }))).toBe("allowed");
    expect(codeOf(input({ token: { kind: "verified", claims: { ...claims, notBeforeMs: NOW + 1 } } }))).toBe("unauthorized");
  });
  test("AC4: a revoked id is 401 whatever it grants", () => expect(codeOf(input({ isRevoked: (id) => id === "t1" }))).toBe("unauthorized"));
  test("AC5: an operation not granted is 403 naming it", () => {
    const decision = decideAccess(input({ needs: [{ op: "delete", stream: "demo/a" }] }));
    expect(decision.ok ? null : [decision.error.code, decision.error.details]).toEqual(["forbidden", { op: "delete" }]);
  });
  test("AC6: a stream outside every prefix is 403 naming it", () => {
    const decision = decideAccess(input({ needs: [{ op: "read", stream: "other/a" }] }));
    expect(decision.ok ? null : [decision.error.code, decision.error.details]).toEqual(["forbidden", { op: "read", stream: "other/a" }]);
  });
  test("AC7: granted operation on a covered stream is allowed; an op-only need checks the op alone", () => {
    expect(codeOf(input({}))).toBe("allowed");
    expect(codeOf(input({ needs: [{ op: "append", stream: null }] }))).toBe("allowed");
    expect(codeOf(input({ needs: [{ op: "subscribe", stream: null }] }))).toBe("forbidden");
  });
  test("rows in order: an invalid token learns nothing about the grant (401 before 403)", () => {
    expect(codeOf(input({ nowMs: claims.expiresAtMs, needs: [{ op: "delete", stream: "x" }] }))).toBe("unauthorized");
  });
  test("the empty prefix covers every stream; a prefix is a string prefix, not a path segment", () => {
    expect(coversStream([""], "anything/at/all")).toBe(true);
    expect(coversStream(["demo"], "demonstration")).toBe(true);
    expect(coversStream(["demo/"], "demo")).toBe(false);
  });
});

describe("table AN: what a stream request needs", () => {
  test.each([
    ["GET", null, [{ op: "read", stream: "s" }]],
    ["HEAD", null, [{ op: "read", stream: "s" }]],
    ["POST", null, [{ op: "append", stream: "s" }]],
    ["PUT", null, [{ op: "create", stream: "s" }]],
    ["PUT", "src", [{ op: "create", stream: "s" }, { op: "read", stream: "src" }]],
    ["DELETE", null, [{ op: "delete", stream: "s" }]],
    ["PATCH", null, []],
  ] as const)("%s (fork source %s)", (method, forkedFrom, needs) => {
    expect(streamRequestNeeds(method, "s", forkedFrom)).toEqual(needs);
  });
});

describe("the invariant", () => {
  const op = fc.constantFrom(...ACCESS_OPS);
  const name = fc.stringMatching(/^[a-c/]{0,6}$/);
  test("an allowed request only needs granted operations on covered streams", () => {
    fc.assert(
      fc.property(fc.uniqueArray(op, { minLength: 1 }), fc.array(name, { minLength: 1, maxLength: 3 }), fc.array(fc.record({ op, stream: name })), (ops, prefixes, needs: AccessNeed[]) => {
        const decision = decideAccess(input({ token: { kind: "verified", claims: { ...claims, ops, prefixes } }, needs }));
        const within = needs.every((need) => ops.includes(need.op) && need.stream !== null && prefixes.some((p) => need.stream!.startsWith(p)));
        expect(decision.ok).toBe(within);
      }),
    );
  });
});
