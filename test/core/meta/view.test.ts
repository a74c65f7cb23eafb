// The published view: full view, lookups by id and name, changes since a version, liveness.
import { describe, expect, it } from "vitest";
import {
  apply,
  changesSince,
  fullView,
  liveNodes,
  lookupStream,
  seedLiveness,
  touchedBy,
  type Command,
  type MetaState,
  type Touched,
} from "../../../src/core/meta/index.ts";
import { build, create, CTX, register } from "./fixtures.ts";

/** Applies commands, collecting the touched set of each accepted change (what MetaLog keeps per entry). */
function buildWithLog(commands: readonly Command[]): { state: MetaState; log: Touched[] } {
  let state = build([]);
  const log: Touched[] = [];
  for (const command of commands) {
    const applied = apply(state, command, CTX);
    if (applied.result.ok && applied.result.changed) log.push(touchedBy(command, applied.result));
    state = applied.state;
  }
  return { state, log };
}

const commands: Command[] = [
  register("a"),
  register("b"),
  create("x"),
  create("y"),
  { type: "PlaceStream", streamId: "s1" },
  { type: "BeginTransfer", streamId: "s1", target: "b" },
  { type: "DeleteStream", streamId: "s2" },
  { type: "AcquireLease", nodeId: "a", nodeEpoch: 1, ttlMs: 1000 },
];

describe("the view", () => {
  const { state, log } = buildWithLog(commands);
  it("the full view carries the version, nodes by id, streams with their pending transfer, and the lease", () => {
    const view = fullView(state);
    expect(view.version).toBe(8);
    expect(view.nodes.map((n) => n.id)).toEqual(["a", "b"]);
    expect(view.streams).toEqual([{ id: "s1", name: "x", owner: "a", epoch: 0, ownership: "placed", config: {}, transfer: { source: "a", target: "b" } }]);
    expect(view.lease?.holder).toBe("a");
  });
  it("a lookup by name and by id finds the same stream with its owner and target nodes", () => {
    const byName = lookupStream(state, { name: "x" });
    expect(byName).toEqual(lookupStream(state, { id: "s1" }));
    expect(byName.ownerNode?.addr).toBe("https://mink.test/n/a");
    expect(byName.targetNode?.id).toBe("b");
  });
  it("a lookup of an unknown or deleted stream answers null at the current version", () => {
    // With the nodes placement would choose among for the name (a holds s1, so b alone is least loaded).
    expect(lookupStream(state, { name: "y" })).toEqual({ version: 8, stream: null, ownerNode: null, targetNode: null, placeAmong: ["b"] });
    expect(lookupStream(state, { id: "s9" }).stream).toBeNull();
  });
  it("changes since a version list the current records touched after it, deleted streams apart", () => {
    const changes = changesSince(state, 4, log.slice(4));
    expect(changes).toMatchObject({ full: false, since: 4, version: 8, nodes: [], removedStreamIds: ["s2"] });
    if (changes.full) throw new Error("expected a delta");
    expect(changes.streams.map((s) => [s.id, s.transfer?.target])).toEqual([["s1", "b"]]);
    expect(changes.lease?.holder).toBe("a");
  });
  it("changes since the current version are empty and carry no lease", () => {
    const changes = changesSince(state, 8, []);
    expect(changes).toEqual({ full: false, since: 8, version: 8, nodes: [], streams: [], removedStreamIds: [] });
  });
  it("a created stream is touched under the id apply gave it", () => {
    expect(log[2]).toEqual({ streams: ["s1"] });
    expect(log[0]).toEqual({ nodes: ["a"] });
  });
});

describe("liveness (soft state)", () => {
  const state = build([register("b"), register("a"), register("c")]);
  it("a node is live while its last heartbeat is younger than leaseTtlMs (exactly leaseTtlMs old is dead)", () => {
    const seen = new Map([["a", 1000], ["b", 500], ["c", 999]]);
    expect(liveNodes(state, seen, 1500, 501).map((n) => n.id)).toEqual(["a"]);
    expect(liveNodes(state, seen, 1500, 502).map((n) => n.id)).toEqual(["a", "c"]);
  });
  it("a node that never sent a heartbeat is not live", () => {
    expect(liveNodes(state, new Map(), 0, 30_000)).toEqual([]);
  });
  it("after MetaLog restarts every registered node counts as seen at load time", () => {
    const seen = seedLiveness(state, 10_000);
    expect(liveNodes(state, seen, 39_999).map((n) => n.id)).toEqual(["a", "b", "c"]);
    expect(liveNodes(state, seen, 40_000)).toEqual([]);
  });
});
