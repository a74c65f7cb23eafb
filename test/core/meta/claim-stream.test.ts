// Table CM (src/core/meta/claim-stream.ts), one test per row, then the property that makes the claim safe:
// over random logs, a ClaimStream leaves exactly the records that CreateStream, PlaceStream and
// OpenStream (each proposed only where the create path proposes it) would have left, in one entry.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, lookupStream, type CommandOf, type MetaState, type Proposer } from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";
import { run, stepsArbitrary } from "./arbitraries.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const by = (nodeId: string, nodeEpoch = 1): Proposer => ({ nodeId, nodeEpoch });
const claim = (name: string, proposer: Proposer, config: Record<string, string | number> = {}): CommandOf<"ClaimStream"> => ({ type: "ClaimStream", name, config, by: proposer });
const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });

describe("table CM: ClaimStream", () => {
  it("CM1 ClaimStream from a stale proposer is rejected, and one without a proposer is invalid", () => {
    const before = build([register("a", 3)]);
    expectRejected(before, apply(before, claim("x", by("a", 2)), CTX), "stale_epoch", { currentEpoch: 3 });
    expectRejected(before, apply(before, { type: "ClaimStream", name: "x", config: {} } as never, CTX), "invalid", { field: "by" });
  });
  it("CM2 ClaimStream of a name registered with another config is a conflict naming the stream", () => {
    const before = build([register("a"), create("x", { v: 1 })]);
    expectRejected(before, apply(before, claim("x", by("a"), { v: 2 }), CTX), "conflict", { streamId: "s1" });
  });
  it("CM3 ClaimStream with no eligible node is unavailable and writes nothing (no unplaced record left)", () => {
    const before = build([register("a", 1, 0)]);
    expectRejected(before, apply(before, claim("x", by("a")), CTX), "unavailable", { eligibleNodes: 0 });
  });
  it("CM4 ClaimStream of a new name placed on the proposer opens it at epoch 1, in one entry", () => {
    const before = build([register("a"), register("b")]);
    const value = expectChange(before, apply(before, claim("x", by("a"), { contentType: "text/plain" }), CTX));
    expect(value.opened).toBe(true);
    expect(value.stream).toEqual({ id: "s1", name: "x", owner: "a", epoch: 1, ownership: "opened", config: { contentType: "text/plain" } });
    expect(value.ownerNode?.addr).toBe("https://mink.test/n/a");
  });
  it("CM4 ClaimStream of a new name placed on another node leaves it placed there at epoch 0, with that node's address", () => {
    const before = build([register("a"), register("b"), create("first"), place("s1")]); // a holds one: b is next
    const value = expectChange(before, apply(before, claim("x", by("a")), CTX));
    expect(value.opened).toBe(false);
    expect(value.stream).toMatchObject({ owner: "b", epoch: 0, ownership: "placed" });
    expect(value.ownerNode?.id).toBe("b");
  });
  it("CM4 ClaimStream among equally loaded nodes places and opens the stream on the proposer (PS5's tie), not the lowest id", () => {
    const before = build([register("a"), register("b"), register("c")]);
    const value = expectChange(before, apply(before, claim("x", by("c")), CTX));
    expect(value).toMatchObject({ opened: true, stream: { owner: "c", epoch: 1, ownership: "opened" } });
  });
  it("CM4 ClaimStream of a name a CreateStream left unplaced places it (and opens it on the proposer)", () => {
    const before = build([register("a"), create("x")]);
    const value = expectChange(before, apply(before, claim("x", by("a")), CTX));
    expect(value).toMatchObject({ opened: true, stream: { id: "s1", owner: "a", epoch: 1, ownership: "opened" } });
  });
  it("CM5 ClaimStream by the node a create was placed on opens it at epoch 1 (the PUT sent there by a 307)", () => {
    const before = build([register("a"), register("b"), create("first"), place("s1"), claim("x", by("a"))]);
    const value = expectChange(before, apply(before, claim("x", by("b")), CTX));
    expect(value).toMatchObject({ opened: true, stream: { id: "s2", owner: "b", epoch: 1, ownership: "opened" } });
  });
  it("CM6 ClaimStream whose open is refused (a transfer pending) keeps the steps before it and says it did not open", () => {
    const before = build([register("a"), register("b"), create("x"), place("s1"), { type: "BeginTransfer", streamId: "s1", target: "b" }]);
    const value = expectNoop(before, apply(before, claim("x", by("a")), CTX));
    expect(value.opened).toBe(false);
    expect(value.stream).toMatchObject({ owner: "a", epoch: 0, ownership: "placed" });
  });
  it("CM7 ClaimStream of a stream already opened (a repeat) is a no-op with the record, by the owner or anyone", () => {
    const before = build([register("a"), register("b"), claim("x", by("a"))]);
    for (const proposer of [by("a"), by("b")]) {
      const value = expectNoop(before, apply(before, claim("x", proposer), CTX));
      expect(value).toMatchObject({ opened: false, stream: { owner: "a", epoch: 1, ownership: "opened" } });
    }
  });
});

/** What the create path proposed before ClaimStream: CreateStream, PlaceStream when unplaced, OpenStream when placed on the proposer at epoch 0. */
function stepByStep(state: MetaState, command: CommandOf<"ClaimStream">): MetaState {
  const created = apply(state, { type: "CreateStream", name: command.name, config: command.config, by: command.by }, CTX);
  if (!created.result.ok) return state;
  let at = created.state;
  let stream = created.result.value.stream;
  if (stream.ownership === "unplaced") {
    const placed = apply(at, { type: "PlaceStream", streamId: stream.id, by: command.by }, CTX);
    if (!placed.result.ok) return state; // the claim writes nothing then (CM3)
    at = placed.state;
    stream = placed.result.value.stream;
  }
  if (stream.owner === command.by.nodeId && stream.ownership === "placed" && stream.epoch === 0) {
    const opened = apply(at, { type: "OpenStream", streamId: stream.id, nodeId: command.by.nodeId, nodeEpoch: command.by.nodeEpoch }, CTX);
    if (opened.result.ok) at = opened.state;
  }
  return at;
}

describe("ClaimStream is CreateStream, PlaceStream and OpenStream in one entry", () => {
  it("CM over random logs: the same records, assignment counts and next id as the three commands, at most one version later", () => {
    fc.assert(
      fc.property(stepsArbitrary, fc.constantFrom("n1", "n2", "fresh"), fc.constantFrom("a", "b", "c"), fc.boolean(), (scenario, name, nodeId, otherConfig) => {
        const transitions = run(scenario);
        const state = transitions.at(-1)?.applied.state ?? transitions[0]!.before;
        const command = claim(name, by(nodeId, state.nodes.get(nodeId)?.epoch ?? 1), otherConfig ? { v: 2 } : {});
        const claimed = apply(state, command, CTX);
        const expected = stepByStep(state, command);
        if (!claimed.result.ok || !claimed.result.changed) {
          expect(claimed.state).toBe(state);
          expect(lookupStream(expected, { name }).stream).toEqual(lookupStream(state, { name }).stream);
          return;
        }
        expect(claimed.state.version).toBe(state.version + 1);
        expect(lookupStream(claimed.state, { name }).stream).toEqual(lookupStream(expected, { name }).stream);
        expect([...claimed.state.assigned]).toEqual([...expected.assigned]);
        expect(claimed.state.nextStreamSeq).toBe(expected.nextStreamSeq);
        const record = lookupStream(claimed.state, { name }).stream;
        expect(claimed.result.value.opened).toBe(record?.ownership === "opened" && record.owner === nodeId && lookupStream(state, { name }).stream?.ownership !== "opened");
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
