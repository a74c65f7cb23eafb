// Table AT of src/core/auth/table-access.ts, row by row, and with table AC: which token covers a table.
import { describe, expect, it } from "vitest";
import { decideAccess, type AccessClaims } from "../../../src/core/auth/access.ts";
import { requestNeeds } from "../../../src/core/auth/request-needs.ts";
import { parseRequestTarget } from "../../../src/core/protocol/request-target.ts";

const NOW_MS = 1_000;
/** Table AT on the target of `/v1/table<rest>`, as the Worker's entry parses it. */
function tableRequestNeeds(method: string, rest: string): ReturnType<typeof requestNeeds> {
  const target = parseRequestTarget(`/v1/table${rest}`);
  if (!target.ok) throw new Error(target.error.message);
  return requestNeeds(method, target.value, null);
}
const claims = (prefixes: string[], ops: AccessClaims["ops"]): AccessClaims => ({ id: "t1", prefixes, ops, expiresAtMs: NOW_MS + 1 });
const allowed = (prefixes: string[], ops: AccessClaims["ops"], method: string, rest: string): boolean =>
  decideAccess({ token: { kind: "verified", claims: claims(prefixes, ops) }, needs: tableRequestNeeds(method, rest), nowMs: NOW_MS, isRevoked: () => false }).ok;

describe("table AT: what a table request needs", () => {
  it("AT1: the list needs read on __ds/table/", () => {
    expect(tableRequestNeeds("GET", "")).toEqual([{ op: "read", stream: "__ds/table/" }]);
    expect(tableRequestNeeds("GET", "/")).toEqual([{ op: "read", stream: "__ds/table/" }]);
  });
  it("AT2, AT3: PUT needs create, DELETE needs delete, on the table", () => {
    expect(tableRequestNeeds("PUT", "/orders")).toEqual([{ op: "create", stream: "__ds/table/orders/" }]);
    expect(tableRequestNeeds("DELETE", "/orders")).toEqual([{ op: "delete", stream: "__ds/table/orders/" }]);
  });
  it("AT4: table- and bucket-addressed writes (in a partition too) and adding a partition need append", () => {
    for (const rest of ["/orders/write", "/orders/bucket/3/write", "/orders/p/i20000000000005/bucket/3/write", "/orders/partitions"]) {
      expect(tableRequestNeeds("POST", rest)).toEqual([{ op: "append", stream: "__ds/table/orders/" }]);
    }
  });
  it("AT5: reads, lookups, prefix scans and changelogs need read", () => {
    for (const [method, rest] of [["GET", "/orders"], ["POST", "/orders/lookup"], ["POST", "/orders/prefix"], ["GET", "/orders/bucket/0/changelog"]]) {
      expect(tableRequestNeeds(method!, rest!)).toEqual([{ op: "read", stream: "__ds/table/orders/" }]);
    }
  });
  it("AT6: a path that is no table route needs a valid token and nothing more (the route answers 404)", () => {
    for (const rest of ["/orders/p/partitions", "/orders/bucket/x/write", "/orders/a/b/c"]) expect(tableRequestNeeds("POST", rest)).toEqual([]);
  });
  it("with table AC: a prefix covers a table as it covers its bucket streams' names; a stream prefix never does", () => {
    expect(allowed([""], ["append"], "POST", "/orders/write")).toBe(true);
    expect(allowed(["__ds/table/orders/"], ["append"], "POST", "/orders/write")).toBe(true);
    expect(allowed(["__ds/table/orders/"], ["append"], "POST", "/orders2/write")).toBe(false);
    expect(allowed(["__ds/table/orders/"], ["read"], "POST", "/orders/write")).toBe(false);
    expect(allowed(["orders/"], ["append", "read", "create"], "PUT", "/orders")).toBe(false);
    expect(allowed(["__ds/table/"], ["read"], "GET", "")).toBe(true);
    expect(allowed(["__ds/table/orders/"], ["read"], "GET", "")).toBe(false);
  });
});
