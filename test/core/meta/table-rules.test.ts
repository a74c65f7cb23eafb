// Tables TB, TD and LB of src/core/meta/table-rules.ts, row by row; then the leader epoch's growth over
// random command sequences and the snapshot round trip of tables.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, collectableStreams, decodeSnapshot, encodeSnapshot, planBucketReleads, releadCommands, tablesOf, type CommandOf, type Coordinator, type MetaState } from "../../../src/core/meta/index.ts";
import { MAX_TABLES, MAX_TOTAL_BUCKETS } from "../../../src/core/meta/table-rules.ts";
import { run, stepsArbitrary } from "./arbitraries.ts";
import { build, CTX, expectChange, expectNoop, expectRejected, NOW_MS, register } from "./fixtures.ts";

const COORD: Coordinator = { nodeId: "a", nodeEpoch: 1, coordinatorEpoch: 1 };

const createTable = (name: string, leaders: readonly string[], definition: CommandOf<"CreateTable">["definition"] = { columns: ["id"] }, coordinator = COORD): CommandOf<"CreateTable"> => ({
  type: "CreateTable",
  name,
  definition,
  leaders,
  coordinator,
});
const lead = (table: string, bucket: number, node: string, coordinator = COORD): CommandOf<"LeadBucket"> => ({ type: "LeadBucket", table, bucket, node, coordinator });

/** Nodes a (holding the lease at coordinator epoch 1), b and c; c declared dead. */
function cluster(): MetaState {
  return build([
    register("a"),
    register("b"),
    register("c"),
    { type: "AcquireLease", nodeId: "a", nodeEpoch: 1, ttlMs: 60_000 },
    { type: "DeclareDead", nodeId: "c", nodeEpoch: 1, coordinator: COORD },
  ]);
}

describe("table TB: CreateTable", () => {
  it("TB1: a stale coordinator epoch is fenced", () => {
    const before = cluster();
    expectRejected(before, apply(before, createTable("t", ["a"], {}, { ...COORD, coordinatorEpoch: 0 }), CTX), "fenced", { holder: "a", coordinatorEpoch: 1 });
  });
  it("TB2: the same definition again is a no-op answering the existing record", () => {
    const before = build([createTable("t", ["a", "b"])], cluster());
    const { table } = expectNoop(before, apply(before, createTable("t", ["b", "a"], { columns: ["id"] }), CTX));
    expect(table.buckets.map((b) => b.leader)).toEqual(["a", "b"]);
  });
  it("TB3: another definition or bucket count is a conflict", () => {
    const before = build([createTable("t", ["a", "b"])], cluster());
    expectRejected(before, apply(before, createTable("t", ["a", "b"], { columns: ["other"] }), CTX), "conflict", { reason: "definition_differs", buckets: 2 });
    expectRejected(before, apply(before, createTable("t", ["a"]), CTX), "conflict", { buckets: 2 });
  });
  it("TB4: a table beyond MAX_TABLES is refused", () => {
    const tables = new Map([...Array(MAX_TABLES).keys()].map((i) => [`t${i}`, { name: `t${i}`, definition: null, buckets: [] }] as const));
    const before: MetaState = { ...cluster(), tables };
    expectRejected(before, apply(before, createTable("one-more", ["a"]), CTX), "limit_reached", { limit: "max_tables", max: MAX_TABLES });
  });
  it("TB5: buckets beyond MAX_TOTAL_BUCKETS in all are refused", () => {
    const buckets = [...Array(MAX_TOTAL_BUCKETS).keys()].map((bucket) => ({ bucket, leader: "a", leaderEpoch: 1, streamId: `s${bucket + 1}` }));
    const before: MetaState = { ...cluster(), tables: new Map([["big", { name: "big", definition: null, buckets }]]) };
    expectRejected(before, apply(before, createTable("t", ["a"]), CTX), "limit_reached", { limit: "max_total_buckets" });
  });
  it("TB6: a leader that is not registered or is declared dead is invalid", () => {
    const before = cluster();
    expectRejected(before, apply(before, createTable("t", ["a", "q"]), CTX), "invalid", { bucket: 1, node: "q", reason: "not_registered" });
    expectRejected(before, apply(before, createTable("t", ["c"]), CTX), "invalid", { bucket: 0, node: "c", reason: "declared_dead" });
  });
  it("TB7: buckets get their leaders at epoch 1 and fresh consecutive stream ids", () => {
    const before = build([{ type: "CreateStream", name: "x", config: {} }], cluster());
    const { table } = expectChange(before, apply(before, createTable("t", ["b", "a"]), CTX));
    expect(table.buckets).toEqual([
      { bucket: 0, leader: "b", leaderEpoch: 1, streamId: "s2" },
      { bucket: 1, leader: "a", leaderEpoch: 1, streamId: "s3" },
    ]);
    const after = apply(before, createTable("t", ["b", "a"]), CTX).state;
    expect(after.nextStreamSeq).toBe(4);
    expect(after.streamIdsByName.get("t")).toBeUndefined();
  });
});

describe("table TD: DropTable", () => {
  it("TD1: a stale proposer is refused", () => {
    const before = build([createTable("t", ["a"]), register("b", 2)], cluster());
    expectRejected(before, apply(before, { type: "DropTable", name: "t", by: { nodeId: "b", nodeEpoch: 1 } }, CTX), "stale_epoch");
  });
  it("TD2: no such table is not_found", () => {
    const before = cluster();
    expectRejected(before, apply(before, { type: "DropTable", name: "t" }, CTX), "not_found", { table: "t" });
  });
  it("TD3: the table goes and its stream ids are never issued again", () => {
    const before = build([createTable("t", ["a"])], cluster());
    const { table } = expectChange(before, apply(before, { type: "DropTable", name: "t" }, CTX));
    const after = apply(before, { type: "DropTable", name: "t" }, CTX).state;
    expect(after.tables.has("t")).toBe(false);
    const again = build([createTable("t", ["a"])], after);
    expect(again.tables.get("t")?.buckets[0]?.streamId).not.toBe(table.buckets[0]?.streamId);
  });
});

describe("table LB: LeadBucket", () => {
  it("LB1: a stale coordinator's LeadBucket is fenced", () => {
    const stale = build([createTable("t", ["a"])], cluster());
    // The lease expires and b acquires it at coordinator epoch 2: a's epoch 1 is stale.
    const later = { nowMs: NOW_MS + 120_000 };
    const before = build([{ type: "AcquireLease", nodeId: "b", nodeEpoch: 1, ttlMs: 60_000 }], stale, later);
    expectRejected(before, apply(before, lead("t", 0, "b"), later), "fenced", { holder: "b", coordinatorEpoch: 2 });
    expectChange(before, apply(before, lead("t", 0, "b", { nodeId: "b", nodeEpoch: 1, coordinatorEpoch: 2 }), later));
  });
  it("LB2: an unknown table or bucket is not_found", () => {
    const before = build([createTable("t", ["a"])], cluster());
    expectRejected(before, apply(before, lead("u", 0, "b"), CTX), "not_found", { table: "u" });
    expectRejected(before, apply(before, lead("t", 1, "b"), CTX), "not_found", { bucket: 1 });
  });
  it("LB3: a node not registered or declared dead cannot lead", () => {
    const before = build([createTable("t", ["a"])], cluster());
    expectRejected(before, apply(before, lead("t", 0, "q"), CTX), "invalid", { reason: "not_registered" });
    expectRejected(before, apply(before, lead("t", 0, "c"), CTX), "invalid", { reason: "declared_dead" });
  });
  it("LB4: the new leader gets the next epoch, also when it leads already (a restart)", () => {
    const before = build([createTable("t", ["a", "b"])], cluster());
    const { bucket } = expectChange(before, apply(before, lead("t", 1, "a"), CTX));
    expect(bucket).toEqual({ bucket: 1, leader: "a", leaderEpoch: 2, streamId: before.tables.get("t")?.buckets[1]?.streamId });
    const moved = apply(before, lead("t", 1, "a"), CTX).state;
    expect(moved.tables.get("t")?.buckets[0]).toEqual(before.tables.get("t")?.buckets[0]);
    expect(expectChange(moved, apply(moved, lead("t", 1, "a"), CTX)).bucket.leaderEpoch).toBe(3);
  });
});

describe("table invariants over random command sequences", () => {
  it("a bucket's leader epoch only grows while its table exists, and every accepted LeadBucket raises it", () => {
    fc.assert(
      fc.property(stepsArbitrary, (scenario) => {
        for (const { before, entry, applied } of run(scenario)) {
          for (const [name, table] of before.tables) {
            const after = applied.state.tables.get(name);
            if (after === undefined) continue;
            for (const bucket of table.buckets) expect(after.buckets[bucket.bucket]?.leaderEpoch ?? 0).toBeGreaterThanOrEqual(bucket.leaderEpoch);
          }
          const command = entry.command;
          if (command.type === "LeadBucket" && applied.result.ok) {
            const earlier = before.tables.get(command.table)?.buckets[command.bucket]?.leaderEpoch ?? Infinity;
            expect(applied.state.tables.get(command.table)?.buckets[command.bucket]?.leaderEpoch).toBeGreaterThan(earlier);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
  it("a snapshot round trip keeps the tables", () => {
    const state = build([createTable("t", ["a", "b"], { columns: [{ name: "id", type: "string" }] }), lead("t", 0, "b")], cluster());
    const decoded = decodeSnapshot(encodeSnapshot(state));
    expect([...decoded.tables.values()]).toEqual([...state.tables.values()]);
    expect(encodeSnapshot(decoded)).toBe(encodeSnapshot(state));
  });
});

describe("planBucketReleads: the tick re-leads buckets of dead leaders", () => {
  it("re-leads only buckets of declared-dead leaders, to the least-loaded live node, lowest id on ties", () => {
    const state = build([register("d"), createTable("t", ["a", "b", "b"])], cluster());
    // c is dead: give it buckets directly (CreateTable refuses a dead leader).
    const table = state.tables.get("t");
    if (table === undefined) throw new Error("no table");
    const withDead: MetaState = { ...state, tables: new Map([["t", { ...table, buckets: table.buckets.map((b) => (b.bucket === 0 ? b : { ...b, leader: "c" })) }]]) };
    const plan = planBucketReleads(withDead, new Set(["a", "b", "d"]), 10);
    // Loads: a 1, b 0, d 0 -> b (lowest id of the two least loaded), then d.
    expect(plan).toEqual([
      { table: "t", bucket: 1, node: "b" },
      { table: "t", bucket: 2, node: "d" },
    ]);
    expect(planBucketReleads(withDead, new Set(["a", "b", "d"]), 1)).toHaveLength(1);
    expect(planBucketReleads(withDead, new Set(), 10)).toEqual([]);
    expect(planBucketReleads(state, new Set(["a", "b", "d"]), 10)).toEqual([]);
    // The plan's commands are accepted and give each re-led bucket a higher leader epoch.
    const after = build(releadCommands(plan, COORD), withDead);
    expect(after.tables.get("t")?.buckets.map((b) => [b.leader, b.leaderEpoch])).toEqual([["a", 1], ["b", 2], ["d", 2]]);
  });
  it("tablesOf lists the tables by name", () => {
    const state = build([createTable("z", ["a"]), createTable("m", ["b"])], cluster());
    expect(tablesOf(state).map((t) => t.name)).toEqual(["m", "z"]);
  });
});

describe("table GC with tables", () => {
  it("GC1: a live table's bucket streams are kept; a dropped table's are collected", () => {
    const state = build([createTable("t", ["a", "b"])], cluster());
    const ids = state.tables.get("t")?.buckets.map((b) => b.streamId) ?? [];
    expect(collectableStreams(state, ids).collect).toEqual([]);
    const dropped = build([{ type: "DropTable", name: "t" }], state);
    expect(collectableStreams(dropped, ids).collect).toEqual(ids);
  });
});
