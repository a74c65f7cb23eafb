// docs/router.md: one test per row of the routing table in src/core/routing.ts, and the
// property that a stale view can only misdirect: whatever the view, routing never names a node to serve
// a stream other than this one, its owner, or its transfer target.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NodeRecord, Ownership } from "../../src/core/meta/state.ts";
import type { StreamView } from "../../src/core/meta/view.ts";
import { routeStream, type RoutingInput } from "../../src/core/routing.ts";

const node = (id: string): NodeRecord => ({ id, epoch: 1, addr: `https://mink.test/n/${id}`, slots: 1, draining: false });

function stream(ownership: Ownership, owner: string | null, transfer?: { source: string; target: string }): StreamView {
  return {
    name: "a/b",
    id: "s1",
    owner,
    epoch: 3,
    ownership,
    ...(ownership === "closed" ? { closedAtEpoch: 3 } : {}),
    config: {},
    ...(transfer === undefined ? {} : { transfer }),
  };
}

function input(view: StreamView | null, overrides: Partial<RoutingInput> = {}): RoutingInput {
  const owner = view?.owner ?? null;
  const target = view?.transfer?.target ?? null;
  return {
    lookup: { stream: view, ownerNode: owner === null ? null : node(owner), targetNode: target === null ? null : node(target) },
    name: "a/b",
    hereNodeId: "n0",
    at: "router",
    mode: "redirect",
    ...overrides,
  };
}

describe("routing (table R)", () => {
  it("R1 a name that is not registered is served here, at the router or a node", () => {
    expect(routeStream(input(null))).toEqual({ kind: "serve", nodeId: "n0", rule: "R1" });
    expect(routeStream(input(null, { at: "node", hereNodeId: "n2" }))).toEqual({ kind: "serve", nodeId: "n2", rule: "R1" });
  });
  it("R1a at the router a new name goes to a node placement would choose among, the same one for the same name; a node serves it itself", () => {
    const among = (placeAmong: readonly string[], name: string, at: "router" | "node" = "router") =>
      routeStream({ ...input(null, { at, name }), lookup: { stream: null, ownerNode: null, targetNode: null, placeAmong } });
    expect(among(["n2"], "x")).toEqual({ kind: "serve", nodeId: "n2", rule: "R1a" });
    for (const name of ["x", "y", "tenant/a", "é"]) expect(among(["n1", "n2"], name)).toEqual(among(["n1", "n2"], name));
    const chosen = new Set(Array.from({ length: 64 }, (_, i) => (among(["n0", "n1", "n2"], `s-${i}`) as { nodeId: string }).nodeId));
    expect(chosen).toEqual(new Set(["n0", "n1", "n2"])); // spread over the tie, not all to one node
    expect(among(["n1", "n2"], "x", "node")).toEqual({ kind: "serve", nodeId: "n0", rule: "R1" });
    expect(among([], "x")).toEqual({ kind: "serve", nodeId: "n0", rule: "R1" });
  });

  it("R2 the transfer target parks requests until the transfer settles", () => {
    const view = stream("opened", "n1", { source: "n1", target: "n0" });
    expect(routeStream(input(view))).toEqual({ kind: "park", nodeId: "n0", rule: "R2" });
    expect(routeStream(input(view, { at: "node" }))).toEqual({ kind: "park", nodeId: "n0", rule: "R2" });
  });

  it("R3 the router sends a stream with a pending transfer to the target, not the owner", () => {
    const view = stream("opened", "n1", { source: "n1", target: "n2" });
    expect(routeStream(input(view))).toEqual({ kind: "redirect", node: node("n2"), rule: "R3" });
    expect(routeStream(input(view, { mode: "forward" }))).toEqual({ kind: "forward", node: node("n2"), rule: "R3" });
  });

  it("R3 the transfer's source sends a request on to the target (which parks it)", () => {
    const view = stream("opened", "n1", { source: "n1", target: "n2" });
    expect(routeStream(input(view, { at: "node", hereNodeId: "n1" }))).toEqual({ kind: "redirect", node: node("n2"), rule: "R3" });
  });

  it("R4 a node other than the target or the source answers 409 during a transfer, naming the target", () => {
    const view = stream("opened", "n1", { source: "n1", target: "n2" });
    expect(routeStream(input(view, { at: "node", hereNodeId: "n3" }))).toEqual({
      kind: "transfer_pending",
      target: "n2",
      targetAddr: "https://mink.test/n/n2",
      rule: "R4",
    });
  });

  it("R5 an opened or placed stream owned here is served here", () => {
    for (const ownership of ["opened", "placed"] as const) {
      expect(routeStream(input(stream(ownership, "n0")))).toEqual({ kind: "serve", nodeId: "n0", rule: "R5" });
    }
  });

  it("R6 an opened or placed stream owned elsewhere goes to its owner: 307, or forwarded by the router", () => {
    for (const ownership of ["opened", "placed"] as const) {
      expect(routeStream(input(stream(ownership, "n1")))).toEqual({ kind: "redirect", node: node("n1"), rule: "R6" });
      expect(routeStream(input(stream(ownership, "n1"), { mode: "forward" }))).toEqual({ kind: "forward", node: node("n1"), rule: "R6" });
    }
  });

  it("R6 a node never forwards: a request that reached the wrong node is redirected even in forwarding mode", () => {
    expect(routeStream(input(stream("opened", "n1"), { at: "node", mode: "forward" }))).toEqual({ kind: "redirect", node: node("n1"), rule: "R6" });
  });

  it("R7 a closed stream, or one created and never placed, is served here (the open re-places it)", () => {
    expect(routeStream(input(stream("closed", "n1")))).toEqual({ kind: "serve", nodeId: "n0", rule: "R7" });
    expect(routeStream(input(stream("unplaced", null)))).toEqual({ kind: "serve", nodeId: "n0", rule: "R7" });
  });

  it("a view that names a node it has no record for answers unavailable instead of guessing an address", () => {
    const view = stream("opened", "n1");
    const decision = routeStream({ ...input(view), lookup: { stream: view, ownerNode: null, targetNode: null } });
    expect(decision.kind).toBe("unavailable");
  });

  it("a stale view can only misdirect: the node it names is here, the owner or the transfer target (property)", () => {
    const ids = ["n0", "n1", "n2"];
    const arbitraryView = fc.option(
      fc.record({
        ownership: fc.constantFrom<Ownership>("unplaced", "placed", "opened", "closed"),
        owner: fc.constantFrom(...ids),
        transferTarget: fc.option(fc.constantFrom(...ids)),
      }),
    );
    fc.assert(
      fc.property(arbitraryView, fc.constantFrom(...ids), fc.constantFrom("router" as const, "node" as const), fc.constantFrom("redirect" as const, "forward" as const), (v, here, at, mode) => {
        const view =
          v === null
            ? null
            : stream(v.ownership, v.ownership === "unplaced" ? null : v.owner, v.transferTarget === null ? undefined : { source: v.owner, target: v.transferTarget });
        const decision = routeStream(input(view, { hereNodeId: here, at, mode }));
        const allowed = new Set([here, view?.owner, view?.transfer?.target]);
        switch (decision.kind) {
          case "serve":
          case "park":
            expect(decision.nodeId).toBe(here);
            break;
          case "redirect":
          case "forward":
            expect(allowed.has(decision.node.id)).toBe(true);
            expect(decision.node.id).not.toBe(here);
            if (at === "node") expect(decision.kind).toBe("redirect");
            break;
          case "transfer_pending":
            expect(decision.target).toBe(view?.transfer?.target);
            break;
          case "unavailable":
            throw new Error("every node in this property has a record");
        }
      }),
    );
  });
});
