// Tables P, RN, SS, SD and HB (src/core/meta/node-rules.ts, liveness.ts), one test per row.
import { describe, expect, it } from "vitest";
import { apply, checkHeartbeat, emptyState, type CommandOf } from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";

describe("table P: a proposer carries its node epoch", () => {
  const state = build([register("a", 5), create("x")]);
  const place = (by?: { nodeId: string; nodeEpoch: number }): CommandOf<"PlaceStream"> =>
    by === undefined ? { type: "PlaceStream", streamId: "s1" } : { type: "PlaceStream", streamId: "s1", by };

  it("P1 a command without a proposer (admin API) passes the check", () => {
    expectChange(state, apply(state, place(), CTX));
  });
  it("P2 a proposer that is not registered is rejected as not_found", () => {
    expectRejected(state, apply(state, place({ nodeId: "ghost", nodeEpoch: 1 }), CTX), "not_found", { nodeId: "ghost" });
  });
  it("P3 a proposer at a lower epoch than recorded is rejected as stale_epoch with the current epoch", () => {
    expectRejected(state, apply(state, place({ nodeId: "a", nodeEpoch: 4 }), CTX), "stale_epoch", { currentEpoch: 5 });
  });
  it("P4 a proposer at a higher epoch than recorded is rejected as invalid: register first", () => {
    expectRejected(state, apply(state, place({ nodeId: "a", nodeEpoch: 6 }), CTX), "invalid", { currentEpoch: 5 });
  });
  it("P5 a proposer at the recorded epoch passes the check", () => {
    expectChange(state, apply(state, place({ nodeId: "a", nodeEpoch: 5 }), CTX));
  });
});

describe("table RN: RegisterNode", () => {
  it("RN1 a new node is recorded with slots defaulting to 1 and not draining", () => {
    const before = emptyState();
    const { node } = expectChange(before, apply(before, register("a", 7), CTX));
    expect(node).toEqual({ id: "a", epoch: 7, addr: "https://mink.test/n/a", slots: 1, draining: false });
  });
  it("RN1 a new node registered with slots keeps them", () => {
    const before = emptyState();
    expect(expectChange(before, apply(before, register("a", 7, 4), CTX)).node.slots).toBe(4);
  });
  it("RN2 RegisterNode at a lower epoch than recorded is rejected with the current epoch", () => {
    const before = build([register("a", 7)]);
    expectRejected(before, apply(before, register("a", 6), CTX), "stale_epoch", { nodeId: "a", currentEpoch: 7 });
  });
  it("RN3 RegisterNode at a higher epoch wins: new addr, slots kept unless given, draining kept", () => {
    const before = build([register("a", 7, 3), { type: "SetDraining", nodeId: "a", draining: true }]);
    const command: CommandOf<"RegisterNode"> = { type: "RegisterNode", nodeId: "a", nodeEpoch: 9, addr: "https://other/n/a" };
    const { node } = expectChange(before, apply(before, command, CTX));
    expect(node).toEqual({ id: "a", epoch: 9, addr: "https://other/n/a", slots: 3, draining: true });
    expect(expectChange(before, apply(before, register("a", 9, 2), CTX)).node.slots).toBe(2);
  });
  it("RN4 RegisterNode repeated at the same epoch with the same addr and slots is a no-op", () => {
    const before = build([register("a", 7, 2)]);
    expectNoop(before, apply(before, register("a", 7, 2), CTX));
    expectNoop(before, apply(before, { type: "RegisterNode", nodeId: "a", nodeEpoch: 7, addr: "https://mink.test/n/a" }, CTX));
  });
  it("RN5 RegisterNode at the same epoch with another addr or slot count is a conflict", () => {
    const before = build([register("a", 7)]);
    const other: CommandOf<"RegisterNode"> = { type: "RegisterNode", nodeId: "a", nodeEpoch: 7, addr: "https://elsewhere" };
    expectRejected(before, apply(before, other, CTX), "conflict", { currentEpoch: 7, addr: "https://mink.test/n/a" });
    expectRejected(before, apply(before, register("a", 7, 5), CTX), "conflict");
  });
});

describe("table SS: SetSlots", () => {
  const state = build([register("a", 1), register("b", 1), create("x"), { type: "PlaceStream", streamId: "s1" }]);
  it("SS1 SetSlots from a stale proposer is rejected", () => {
    const command: CommandOf<"SetSlots"> = { type: "SetSlots", nodeId: "a", slots: 3, by: { nodeId: "b", nodeEpoch: 0 } };
    expectRejected(state, apply(state, command, CTX), "stale_epoch", { currentEpoch: 1 });
  });
  it("SS2 SetSlots on an unregistered node is not_found", () => {
    expectRejected(state, apply(state, { type: "SetSlots", nodeId: "z", slots: 3 }, CTX), "not_found", { nodeId: "z" });
  });
  it("SS3 SetSlots to the same count is a no-op", () => {
    expectNoop(state, apply(state, { type: "SetSlots", nodeId: "a", slots: 1 }, CTX));
  });
  it("SS4 SetSlots changes the weight and moves nothing already placed", () => {
    const applied = apply(state, { type: "SetSlots", nodeId: "a", slots: 0 }, CTX);
    expect(expectChange(state, applied).node.slots).toBe(0);
    expect(applied.state.streams.get("s1")).toBe(state.streams.get("s1"));
    expect(applied.state.streams.get("s1")?.owner).toBe("a");
  });
});

describe("table SD: SetDraining", () => {
  const state = build([register("a", 1)]);
  it("SD1 SetDraining from an unregistered proposer is rejected", () => {
    const command: CommandOf<"SetDraining"> = { type: "SetDraining", nodeId: "a", draining: true, by: { nodeId: "q", nodeEpoch: 1 } };
    expectRejected(state, apply(state, command, CTX), "not_found");
  });
  it("SD2 SetDraining on an unregistered node is not_found", () => {
    expectRejected(state, apply(state, { type: "SetDraining", nodeId: "z", draining: true }, CTX), "not_found");
  });
  it("SD3 SetDraining to the current flag is a no-op", () => {
    expectNoop(state, apply(state, { type: "SetDraining", nodeId: "a", draining: false }, CTX));
  });
  it("SD4 SetDraining records the flag", () => {
    expect(expectChange(state, apply(state, { type: "SetDraining", nodeId: "a", draining: true }, CTX)).node.draining).toBe(true);
  });
});

describe("table HB: heartbeats", () => {
  const state = build([register("a", 5)]);
  it("HB1 a heartbeat from an unregistered node is not_found", () => {
    expect(checkHeartbeat(state, "z", 1)?.code).toBe("not_found");
  });
  it("HB2 a heartbeat at a stale node epoch is stale_epoch with the current epoch", () => {
    expect(checkHeartbeat(state, "a", 4)).toMatchObject({ code: "stale_epoch", details: { currentEpoch: 5 } });
  });
  it("HB3 a heartbeat at an unregistered higher epoch is invalid", () => {
    expect(checkHeartbeat(state, "a", 6)?.code).toBe("invalid");
  });
  it("HB4 a heartbeat at the recorded epoch is accepted", () => {
    expect(checkHeartbeat(state, "a", 5)).toBeNull();
  });
});
