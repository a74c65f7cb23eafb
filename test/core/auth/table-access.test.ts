// Table AT of src/core/auth/table-access.ts, row by row, and with table AC: which token covers a table.
import { describe, expect, it } from "vitest";
import { decideAccess, type AccessClaims } from "../../../src/core/auth/access.ts";
import { tableRequestNeeds } from "../../../src/core/auth/table-access.ts";

const NOW_MS = 1_000;
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
    expect(tableRequestNeeds("POST", "/orders/p/partitions")).toEqual([{ op: "read", stream: "__ds/table/orders/" }]);
  });
  it("AT5, AT6: reads, lookups, prefix scans, changelogs and anything else need read", () => {
    for (const [method, rest] of [["GET", "/orders"], ["POST", "/orders/lookup"], ["POST", "/orders/prefix"], ["GET", "/orders/bucket/0/changelog"], ["POST", "/orders/nope"]]) {
      expect(tableRequestNeeds(method!, rest!)).toEqual([{ op: "read", stream: "__ds/table/orders/" }]);
    }
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
