// Snapshots: a round trip keeps everything (including the derived name index and load counts), and a
// corrupt text is refused.
import { describe, expect, it } from "vitest";
import { apply, decodeSnapshot, encodeSnapshot, fullView, type Command, type CommandOf } from "../../../src/core/meta/index.ts";
import { build, create, CTX, register } from "./fixtures.ts";

const state = build([
  register("a", 3, 2),
  register("b"),
  { type: "SetDraining", nodeId: "b", draining: true },
  create("x", { contentType: "text/plain" }),
  create("y"),
  create("z"),
  { type: "PlaceStream", streamId: "s1" },
  { type: "PlaceStream", streamId: "s2" },
  { type: "OpenStream", streamId: "s2", nodeId: "a", nodeEpoch: 3 },
  { type: "CloseStream", streamId: "s2", nodeId: "a", nodeEpoch: 3, epoch: 1 },
  { type: "SetDraining", nodeId: "b", draining: false },
  { type: "BeginTransfer", streamId: "s1", target: "b" },
  { type: "AcquireLease", nodeId: "a", nodeEpoch: 3, ttlMs: 1000 },
] satisfies Command[]);

describe("snapshots", () => {
  it("decode(encode(state)) has the same view, name index, load counts and counters", () => {
    const decoded = decodeSnapshot(encodeSnapshot(state));
    expect(fullView(decoded)).toEqual(fullView(state));
    expect([...decoded.streams.namesFrom("")]).toEqual([...state.streams.namesFrom("")]);
    expect(decoded.assigned).toEqual(state.assigned);
    expect(decoded.nextStreamSeq).toBe(4);
    expect(decoded.streams.get("s2")?.closedAtEpoch).toBe(1);
  });
  it("encoding is a fixed point: encode(decode(text)) === text", () => {
    const text = encodeSnapshot(state);
    expect(encodeSnapshot(decodeSnapshot(text))).toBe(text);
  });
  it("a decoded state keeps applying like the original", () => {
    const command: CommandOf<"CreateStream"> = { type: "CreateStream", name: "w", config: {} };
    const fromSnapshot = apply(decodeSnapshot(encodeSnapshot(state)), command, CTX);
    const direct = apply(state, command, CTX);
    expect(encodeSnapshot(fromSnapshot.state)).toBe(encodeSnapshot(direct.state));
  });
  it("a snapshot of another format or with broken records is refused", () => {
    const document = JSON.parse(encodeSnapshot(state)) as Record<string, unknown>;
    expect(() => decodeSnapshot(JSON.stringify({ ...document, format: "other" }))).toThrow(/format/);
    expect(() => decodeSnapshot(JSON.stringify({ ...document, streams: [["s1", "x", null, 0, 2, {}]] }))).toThrow(/disagree/);
    expect(() => decodeSnapshot(JSON.stringify({ ...document, version: -1 }))).toThrow(/version/);
    const twice = document.streams as unknown[];
    expect(() => decodeSnapshot(JSON.stringify({ ...document, streams: [twice[0], twice[0]] }))).toThrow(/duplicate/);
  });
});
