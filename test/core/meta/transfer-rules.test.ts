// Tables BT and CT (src/core/meta/transfer-rules.ts), one test per row, and the whole handoff of docs/transfers.md.
import { describe, expect, it } from "vitest";
import { apply, lookupStream, type CommandOf, type MetaState } from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";

const begin = (target: string, streamId = "s1"): CommandOf<"BeginTransfer"> => ({ type: "BeginTransfer", streamId, target });
const complete = (closedEpoch: number, streamId = "s1"): CommandOf<"CompleteTransfer"> => ({ type: "CompleteTransfer", streamId, closedEpoch });
const openOn = (nodeId: string): CommandOf<"OpenStream"> => ({ type: "OpenStream", streamId: "s1", nodeId, nodeEpoch: 1 });
const closeOn = (nodeId: string, epoch: number): CommandOf<"CloseStream"> => ({ type: "CloseStream", streamId: "s1", nodeId, nodeEpoch: 1, epoch });

/** Nodes a, b, c; s1 opened by a at epoch 1. */
function openedOnA(): MetaState {
  return build([register("a"), register("b"), register("c"), create("x"), { type: "PlaceStream", streamId: "s1" }, openOn("a")]);
}

describe("table BT: BeginTransfer", () => {
  const state = openedOnA();
  it("BT1 BeginTransfer from a stale proposer is rejected", () => {
    const command: CommandOf<"BeginTransfer"> = { type: "BeginTransfer", streamId: "s1", target: "b", by: { nodeId: "a", nodeEpoch: 0 } };
    expectRejected(state, apply(state, command, CTX), "stale_epoch", { currentEpoch: 1 });
  });
  it("BT2 BeginTransfer of an unknown stream is not_found", () => {
    expectRejected(state, apply(state, begin("b", "s9"), CTX), "not_found", { streamId: "s9" });
  });
  it("BT3 the same BeginTransfer twice is a no-op", () => {
    const before = build([begin("b")], state);
    expect(expectNoop(before, apply(before, begin("b"), CTX)).transfer).toEqual({ source: "a", target: "b" });
  });
  it("BT4 a BeginTransfer to another target while one is pending is rejected with the pending target", () => {
    const before = build([begin("b")], state);
    expectRejected(before, apply(before, begin("c"), CTX), "transfer_pending", { source: "a", target: "b" });
  });
  it("BT5 BeginTransfer to an unregistered target is not_found", () => {
    expectRejected(state, apply(state, begin("z"), CTX), "not_found", { target: "z" });
  });
  it("BT6 BeginTransfer to a target without slots or draining is invalid", () => {
    const slotless = build([{ type: "SetSlots", nodeId: "b", slots: 0 }], state);
    expectRejected(slotless, apply(slotless, begin("b"), CTX), "invalid", { target: "b", slots: 0 });
    const draining = build([{ type: "SetDraining", nodeId: "b", draining: true }], state);
    expectRejected(draining, apply(draining, begin("b"), CTX), "invalid", { draining: true });
  });
  it("BT7 BeginTransfer of an unplaced stream is invalid", () => {
    const before = build([create("y")], state);
    expectRejected(before, apply(before, begin("b", "s2"), CTX), "invalid", { ownership: "unplaced" });
  });
  it("BT8 BeginTransfer to the node that already owns the stream is invalid", () => {
    expectRejected(state, apply(state, begin("a"), CTX), "invalid", { owner: "a" });
  });
  it("BT9 BeginTransfer records source and target, and lookups route to the target", () => {
    const applied = apply(state, begin("b"), CTX);
    expect(expectChange(state, applied).transfer).toEqual({ source: "a", target: "b" });
    const lookup = lookupStream(applied.state, { name: "x" });
    expect(lookup.stream?.transfer).toEqual({ source: "a", target: "b" });
    expect(lookup.targetNode?.id).toBe("b");
  });
});

describe("table CT: CompleteTransfer", () => {
  const pending = build([begin("b")], openedOnA());
  const closed = build([closeOn("a", 1)], pending);
  it("CT1 CompleteTransfer from an unregistered proposer is rejected", () => {
    const command: CommandOf<"CompleteTransfer"> = { type: "CompleteTransfer", streamId: "s1", closedEpoch: 1, by: { nodeId: "q", nodeEpoch: 1 } };
    expectRejected(closed, apply(closed, command, CTX), "not_found", { nodeId: "q" });
  });
  it("CT2 CompleteTransfer of an unknown stream is not_found", () => {
    expectRejected(closed, apply(closed, complete(1, "s9"), CTX), "not_found", { streamId: "s9" });
  });
  it("CT3 CompleteTransfer with no transfer pending (a duplicate) changes nothing", () => {
    const done = build([complete(1)], closed);
    expectRejected(done, apply(done, complete(1), CTX), "not_found", { owner: "b", epoch: 1, ownership: "placed" });
  });
  it("CT4 CompleteTransfer before the source closed the stream is a conflict", () => {
    expectRejected(pending, apply(pending, complete(1), CTX), "conflict", { ownership: "opened", currentEpoch: 1 });
  });
  it("CT5 a stale CompleteTransfer naming an earlier close changes nothing", () => {
    // The stream was closed at 1, reopened and closed at 2 before the transfer began: a completion naming 1 is stale.
    const history = build([closeOn("a", 1), openOn("a"), closeOn("a", 2), begin("b")], openedOnA());
    expectRejected(history, apply(history, complete(1), CTX), "stale_epoch", { currentEpoch: 2 });
  });
  it("CT6 CompleteTransfer naming an epoch the stream never closed at is invalid", () => {
    expectRejected(closed, apply(closed, complete(7), CTX), "invalid", { currentEpoch: 1 });
  });
  it("CT7 CompleteTransfer at exactly the closed epoch re-points the stream and drops the record in one step", () => {
    const applied = apply(closed, complete(1), CTX);
    const { stream } = expectChange(closed, applied);
    expect(stream).toEqual({ id: "s1", name: "x", owner: "b", epoch: 1, ownership: "placed", config: {} });
    expect(applied.state.transfers.has("s1")).toBe(false);
    expect(applied.state.assigned.get("b")).toBe(1);
    expect(applied.state.assigned.get("a")).toBeUndefined();
  });
  it("the handoff: the target opens at the closed epoch + 1 and the source is held off", () => {
    const handedOff = build([complete(1)], closed);
    expectRejected(handedOff, apply(handedOff, openOn("a"), CTX), "held_by", { owner: "b" });
    expect(expectChange(handedOff, apply(handedOff, openOn("b"), CTX)).stream).toMatchObject({ owner: "b", epoch: 2, ownership: "opened" });
  });
});
