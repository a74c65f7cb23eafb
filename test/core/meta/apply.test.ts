// apply is total (malformed input is rejected, never thrown), versions count changes, replay is strict.
import { describe, expect, it } from "vitest";
import { apply, emptyState, replay, type LogEntry } from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectRejected, register } from "./fixtures.ts";

describe("apply is total", () => {
  const state = build([register("a")]);
  const malformed: [string, unknown][] = [
    ["not an object", "RegisterNode"],
    ["null", null],
    ["an array", []],
    ["an unknown type", { type: "Nope" }],
    ["a missing field", { type: "OpenStream", streamId: "s1", nodeId: "a" }],
    ["a negative epoch", { type: "RegisterNode", nodeId: "b", nodeEpoch: -1, addr: "x" }],
    ["a fractional slot count", { type: "SetSlots", nodeId: "a", slots: 1.5 }],
    ["an empty node id", { type: "RegisterNode", nodeId: "", nodeEpoch: 1, addr: "x" }],
    ["an unexpected field", { type: "PlaceStream", streamId: "s1", extra: true }],
    ["a config that is not a JSON object", { type: "CreateStream", name: "x", config: [1] }],
    ["a config holding a non-JSON value", { type: "CreateStream", name: "x", config: { at: new Date(0) } }],
    ["a zero lease ttl", { type: "AcquireLease", nodeId: "a", nodeEpoch: 1, ttlMs: 0 }],
    ["a malformed proposer", { type: "PlaceStream", streamId: "s1", by: { nodeId: "a" } }],
  ];
  for (const [what, command] of malformed) {
    it(`a command with ${what} is rejected as invalid and changes nothing`, () => {
      expectRejected(state, apply(state, command, CTX), "invalid");
    });
  }
  it("a stream configuration over 16 KiB of JSON is rejected as too_large", () => {
    expectRejected(state, apply(state, create("x", { blob: "x".repeat(16 * 1024) }), CTX), "too_large", { maxChars: 16 * 1024 });
  });
  it("a context time that is not a non-negative integer is rejected as invalid", () => {
    expectRejected(state, apply(state, register("b"), { nowMs: Number.NaN }), "invalid");
  });
});

describe("versions and replay", () => {
  it("the version counts accepted changes only: no-ops and rejections do not move it", () => {
    const state = build([register("a"), register("a"), create("x"), create("x")]);
    expect(state.version).toBe(2);
    expect(apply(state, register("a", 0), CTX).state.version).toBe(2);
  });
  it("replay of the accepted commands rebuilds the same state", () => {
    const commands = [register("a"), create("x"), { type: "PlaceStream", streamId: "s1" } as const];
    const entries: LogEntry[] = commands.map((command, i) => ({ index: i + 1, command, nowMs: CTX.nowMs }));
    const replayed = replay(emptyState(), entries);
    expect(replayed.version).toBe(3);
    expect(replayed.streams.get("s1")).toEqual(build(commands).streams.get("s1"));
  });
  it("replay refuses an entry that does not follow the version", () => {
    expect(() => replay(emptyState(), [{ index: 2, command: register("a"), nowMs: 0 }])).toThrow(/does not follow/);
  });
  it("replay refuses an entry that does not apply (a corrupt log)", () => {
    const entries: LogEntry[] = [
      { index: 1, command: register("a", 5), nowMs: 0 },
      { index: 2, command: register("a", 4), nowMs: 0 },
    ];
    expect(() => replay(emptyState(), entries)).toThrow(/did not apply/);
  });
});
