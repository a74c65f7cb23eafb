// Table RT of src/core/meta/tiering-rules.ts (docs/tiering.md): RecordTiering, the coordinator's record of
// a committed tiering round, row by row; and that the record survives the log's snapshot.
import { describe, expect, it } from "vitest";
import { apply, decodeSnapshot, encodeSnapshot, type CommandOf, type Coordinator, type MetaState } from "../../../src/core/meta/index.ts";
import { build, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";

const COORD: Coordinator = { nodeId: "a", nodeEpoch: 1, coordinatorEpoch: 1 };

/** Nodes a (holding the lease at coordinator epoch 1) and b; table t with one bucket led by b. */
function withTable(): MetaState {
  return build([
    register("a"),
    register("b"),
    { type: "AcquireLease", nodeId: "a", nodeEpoch: 1, ttlMs: 60_000 },
    { type: "CreateTable", name: "t", definition: { columns: ["id"] }, leaders: ["b"], streamConfig: { contentType: "application/json" }, coordinator: COORD },
  ]);
}

const record = (version: number, coordinator = COORD, table = "t"): CommandOf<"RecordTiering"> => ({
  type: "RecordTiering",
  table,
  tiered: { version, snapshotId: 1000 + version, tieredAtMs: 5_000 + version, records: 10 * version },
  coordinator,
});

describe("table RT: RecordTiering", () => {
  it("RT1: a coordinator that is not the lease holder at its epoch is fenced, naming the holder", () => {
    const state = withTable();
    expectRejected(state, apply(state, record(2, { ...COORD, coordinatorEpoch: 0 }), CTX), "fenced");
    expectRejected(state, apply(state, record(2, { nodeId: "b", nodeEpoch: 1, coordinatorEpoch: 1 }), CTX), "fenced");
  });

  it("RT2: no such table is not_found", () => {
    const state = withTable();
    expectRejected(state, apply(state, record(2, COORD, "nope"), CTX), "not_found");
  });

  it("RT4 then RT3: the record is kept; the same or an older version later is a no-op", () => {
    const state = withTable();
    const first = apply(state, record(3), CTX);
    expect(expectChange(state, first).tiered.version).toBe(3);
    expect(first.state.tables.get("t")?.tiered).toEqual({ version: 3, snapshotId: 1003, tieredAtMs: 5_003, records: 30 });
    expect(expectNoop(first.state, apply(first.state, record(3), CTX)).tiered.version).toBe(3);
    expect(expectNoop(first.state, apply(first.state, record(2), CTX)).tiered.version).toBe(3);
    const later = apply(first.state, record(4), CTX);
    expect(expectChange(first.state, later).tiered.version).toBe(4);
  });

  it("the record survives the log's snapshot; a table never tiered has none", () => {
    const state = withTable();
    const recorded = apply(state, record(3), CTX).state;
    expect(decodeSnapshot(encodeSnapshot(recorded)).tables.get("t")?.tiered).toEqual({ version: 3, snapshotId: 1003, tieredAtMs: 5_003, records: 30 });
    expect(decodeSnapshot(encodeSnapshot(state)).tables.get("t")?.tiered).toBeUndefined();
  });
});
