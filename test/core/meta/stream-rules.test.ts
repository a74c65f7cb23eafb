// Tables CS, DS, OS and CL (src/core/meta/stream-rules.ts), one test per row.
import { describe, expect, it } from "vitest";
import { apply, emptyState, type CommandOf, type MetaState } from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";

const open = (streamId: string, nodeId: string, nodeEpoch = 1): CommandOf<"OpenStream"> => ({ type: "OpenStream", streamId, nodeId, nodeEpoch });
const close = (streamId: string, nodeId: string, epoch: number, nodeEpoch = 1): CommandOf<"CloseStream"> => ({
  type: "CloseStream",
  streamId,
  nodeId,
  nodeEpoch,
  epoch,
});
const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });

/** Nodes a and b; s1 placed on a (a has the lower id and equal load). */
function placedOnA(): MetaState {
  return build([register("a"), register("b"), create("x"), place("s1")]);
}

describe("table CS: CreateStream", () => {
  it("CS1 CreateStream from a stale proposer is rejected", () => {
    const before = build([register("a", 3)]);
    const command: CommandOf<"CreateStream"> = { type: "CreateStream", name: "x", config: {}, by: { nodeId: "a", nodeEpoch: 2 } };
    expectRejected(before, apply(before, command, CTX), "stale_epoch", { currentEpoch: 3 });
  });
  it("CS2 CreateStream of a new name gets the next stable id, unplaced at epoch 0", () => {
    const before = emptyState();
    const { stream } = expectChange(before, apply(before, create("orders", { contentType: "application/json" }), CTX));
    expect(stream).toEqual({ id: "s1", name: "orders", owner: null, epoch: 0, ownership: "unplaced", config: { contentType: "application/json" } });
    const after = build([create("orders"), create("other")]);
    expect(after.streams.idByName("other")).toBe("s2");
  });
  it("CS2 a name created again after a delete gets a new id: ids are never reused", () => {
    const before = build([create("x"), { type: "DeleteStream", streamId: "s1" }]);
    expect(expectChange(before, apply(before, create("x"), CTX)).stream.id).toBe("s2");
  });
  it("CS3 CreateStream of an existing name with the same config (any key order) is a no-op", () => {
    const before = build([create("x", { a: 1, b: "two" })]);
    expect(expectNoop(before, apply(before, create("x", { b: "two", a: 1 }), CTX)).stream.id).toBe("s1");
  });
  it("CS4 CreateStream of an existing name with another config is a conflict naming the stream", () => {
    const before = build([create("x", { a: 1 })]);
    expectRejected(before, apply(before, create("x", { a: 2 }), CTX), "conflict", { streamId: "s1" });
  });
});

describe("table DS: DeleteStream", () => {
  it("DS1 DeleteStream from an unregistered proposer is rejected", () => {
    const before = build([create("x")]);
    const command: CommandOf<"DeleteStream"> = { type: "DeleteStream", streamId: "s1", by: { nodeId: "q", nodeEpoch: 1 } };
    expectRejected(before, apply(before, command, CTX), "not_found", { nodeId: "q" });
  });
  it("DS2 DeleteStream of an unknown stream is not_found", () => {
    const before = emptyState();
    expectRejected(before, apply(before, { type: "DeleteStream", streamId: "s9" }, CTX), "not_found", { streamId: "s9" });
  });
  it("DS3 DeleteStream removes the record, the name and a pending transfer, and frees the owner's load", () => {
    const before = build([{ type: "BeginTransfer", streamId: "s1", target: "b" }], placedOnA());
    const applied = apply(before, { type: "DeleteStream", streamId: "s1" }, CTX);
    expect(expectChange(before, applied).stream.id).toBe("s1");
    expect(applied.state.streams.get("s1")).toBeUndefined();
    expect(applied.state.streams.idByName("x")).toBeUndefined();
    expect(applied.state.transfers.has("s1")).toBe(false);
    expect(applied.state.assigned.get("a")).toBeUndefined();
  });
});

describe("table OS: OpenStream", () => {
  it("OS1 OpenStream at a stale node epoch is rejected with the current node epoch", () => {
    const before = build([register("a", 2)], placedOnA());
    expectRejected(before, apply(before, open("s1", "a", 1), CTX), "stale_epoch", { currentEpoch: 2 });
  });
  it("OS2 OpenStream of an unknown stream is not_found", () => {
    const before = placedOnA();
    expectRejected(before, apply(before, open("s9", "a"), CTX), "not_found");
  });
  it("OS3 OpenStream during a pending transfer is rejected with the target", () => {
    const before = build([{ type: "BeginTransfer", streamId: "s1", target: "b" }], placedOnA());
    expectRejected(before, apply(before, open("s1", "b"), CTX), "transfer_pending", { source: "a", target: "b" });
    expectRejected(before, apply(before, open("s1", "a"), CTX), "transfer_pending", { target: "b" });
  });
  it("OS4 OpenStream of an unplaced stream is invalid: place it first", () => {
    const before = build([register("a"), create("x")]);
    expectRejected(before, apply(before, open("s1", "a"), CTX), "invalid", { ownership: "unplaced" });
  });
  it("OS5 OpenStream from the placed owner bumps the epoch and opens", () => {
    const before = placedOnA();
    const { stream } = expectChange(before, apply(before, open("s1", "a"), CTX));
    expect(stream).toMatchObject({ owner: "a", epoch: 1, ownership: "opened" });
  });
  it("OS5 OpenStream again from the owner (a restart) bumps the epoch again", () => {
    const before = build([open("s1", "a")], placedOnA());
    expect(expectChange(before, apply(before, open("s1", "a"), CTX)).stream.epoch).toBe(2);
  });
  it("OS6 OpenStream of a stream placed or opened on another node is held_by that node", () => {
    const placed = placedOnA();
    expectRejected(placed, apply(placed, open("s1", "b"), CTX), "held_by", { owner: "a", epoch: 0, ownership: "placed" });
    const opened = build([open("s1", "a")], placed);
    expectRejected(opened, apply(opened, open("s1", "b"), CTX), "held_by", { owner: "a", epoch: 1, ownership: "opened" });
  });
  it("OS7 OpenStream of a closed stream makes the opener the owner at the next epoch", () => {
    const before = build([open("s1", "a"), close("s1", "a", 1)], placedOnA());
    const { stream } = expectChange(before, apply(before, open("s1", "b"), CTX));
    expect(stream).toEqual({ id: "s1", name: "x", owner: "b", epoch: 2, ownership: "opened", config: {} });
  });
});

describe("table CL: CloseStream", () => {
  const opened = build([open("s1", "a")], placedOnA());
  it("CL1 CloseStream at a stale node epoch is rejected", () => {
    const before = build([register("a", 2)], opened);
    expectRejected(before, apply(before, close("s1", "a", 1, 1), CTX), "stale_epoch", { currentEpoch: 2 });
  });
  it("CL2 CloseStream of an unknown stream is not_found", () => {
    expectRejected(opened, apply(opened, close("s9", "a", 1), CTX), "not_found");
  });
  it("CL3 CloseStream of an unplaced stream is invalid", () => {
    const before = build([register("a"), create("x")]);
    expectRejected(before, apply(before, close("s1", "a", 0), CTX), "invalid", { ownership: "unplaced" });
  });
  it("CL4 CloseStream by a node that is not the owner is held_by the owner", () => {
    expectRejected(opened, apply(opened, close("s1", "b", 1), CTX), "held_by", { owner: "a", epoch: 1 });
  });
  it("CL5 CloseStream repeated at the epoch it closed at is a no-op", () => {
    const before = build([close("s1", "a", 1)], opened);
    expectNoop(before, apply(before, close("s1", "a", 1), CTX));
  });
  it("CL6 CloseStream at an epoch older than the stream's is stale_epoch with the current epoch", () => {
    const before = build([open("s1", "a")], opened);
    expectRejected(before, apply(before, close("s1", "a", 1), CTX), "stale_epoch", { currentEpoch: 2 });
  });
  it("CL7 CloseStream at an epoch the stream never reached, or of a stream closed earlier, is invalid", () => {
    expectRejected(opened, apply(opened, close("s1", "a", 5), CTX), "invalid", { currentEpoch: 1 });
  });
  it("CL8 CloseStream by the owner at the current epoch closes the stream at that epoch", () => {
    const { stream } = expectChange(opened, apply(opened, close("s1", "a", 1), CTX));
    expect(stream).toMatchObject({ owner: "a", epoch: 1, ownership: "closed", closedAtEpoch: 1 });
  });
  it("CL8 CloseStream of a placed, never opened stream by its owner closes it at its epoch", () => {
    const before = placedOnA();
    expect(expectChange(before, apply(before, close("s1", "a", 0), CTX)).stream).toMatchObject({ ownership: "closed", closedAtEpoch: 0 });
  });
});
