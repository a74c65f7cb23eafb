// Tables TB, TD and CB of src/core/meta/table-rules.ts, row by row; then, over random command sequences,
// that a bucket's leader epoch (its stream's epoch) only grows, the snapshot round trip of tables, and that
// a dead leader's buckets are re-led like its streams, by a coordinator-fenced ReassignStreams.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, collectableStreams, decodeSnapshot, encodeSnapshot, lookupTable, planReassignments, tablesOf, type CommandOf, type Coordinator, type MetaState } from "../../../src/core/meta/index.ts";
import { MAX_KEPT_SNAPSHOTS, MAX_TABLES, MAX_TOTAL_BUCKETS } from "../../../src/core/meta/table-rules.ts";
import { bucketStreamName } from "../../../src/core/tables/bucketing.ts";
import { run, stepsArbitrary } from "./arbitraries.ts";
import { build, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";

const COORD: Coordinator = { nodeId: "a", nodeEpoch: 1, coordinatorEpoch: 1 };
const JSON_STREAM = { contentType: "application/json" };

const createTable = (name: string, leaders: readonly string[], definition: CommandOf<"CreateTable">["definition"] = { columns: ["id"] }, coordinator = COORD): CommandOf<"CreateTable"> => ({
  type: "CreateTable",
  name,
  definition,
  leaders,
  streamConfig: JSON_STREAM,
  coordinator,
});

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

const bucketStream = (state: MetaState, table: string, bucket: number) => {
  const id = state.tables.get(table)?.buckets[bucket]?.streamId ?? "";
  return state.streams.get(id);
};
const snapshotAt = (position: number) => ({ key: `k${position}`, coveredOffset: position, coveredPosition: position, rows: 1, bytes: 10 });
const commit = (table: string, bucket: number, streamId: string, epoch: number, position: number, nodeId = "a"): CommandOf<"CommitBucketSnapshot"> => ({
  type: "CommitBucketSnapshot",
  table,
  bucket,
  streamId,
  epoch,
  snapshot: snapshotAt(position),
  by: { nodeId, nodeEpoch: 1 },
});

describe("table TB: CreateTable", () => {
  it("TB1: a stale coordinator epoch is fenced", () => {
    const before = cluster();
    expectRejected(before, apply(before, createTable("t", ["a"], {}, { ...COORD, coordinatorEpoch: 0 }), CTX), "fenced", { holder: "a", coordinatorEpoch: 1 });
  });
  it("TB2: the same definition again is a no-op answering the existing record", () => {
    const before = build([createTable("t", ["a", "b"])], cluster());
    const { table } = expectNoop(before, apply(before, createTable("t", ["b", "a"], { columns: ["id"] }), CTX));
    expect(table.buckets.map((b) => before.streams.get(b.streamId)?.owner)).toEqual(["a", "b"]);
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
    const buckets = [...Array(MAX_TOTAL_BUCKETS).keys()].map((bucket) => ({ partition: null, bucket, streamId: `s${bucket + 1}`, snapshots: [] }));
    const before: MetaState = { ...cluster(), tables: new Map([["big", { name: "big", definition: null, buckets }]]) };
    expectRejected(before, apply(before, createTable("t", ["a"]), CTX), "limit_reached", { limit: "max_total_buckets" });
  });
  it("TB6: a leader that is not registered or is declared dead is invalid", () => {
    const before = cluster();
    expectRejected(before, apply(before, createTable("t", ["a", "q"]), CTX), "invalid", { bucket: 1, node: "q", reason: "not_registered" });
    expectRejected(before, apply(before, createTable("t", ["c"]), CTX), "invalid", { bucket: 0, node: "c", reason: "declared_dead" });
  });
  it("TB7: a bucket stream name still taken (a leftover) is a conflict", () => {
    const before = build([{ type: "CreateStream", name: bucketStreamName("t", null, 1), config: {} }], cluster());
    expectRejected(before, apply(before, createTable("t", ["a", "b"]), CTX), "conflict", { reason: "bucket_stream_exists", bucket: 1 });
  });
  it("TB8: bucket i is a JSON stream placed on leaders[i] at epoch 0, with fresh consecutive stream ids", () => {
    const before = build([{ type: "CreateStream", name: "x", config: {} }], cluster());
    const { table } = expectChange(before, apply(before, createTable("t", ["b", "a"]), CTX));
    expect(table.buckets).toEqual([
      { partition: null, bucket: 0, streamId: "s2", snapshots: [] },
      { partition: null, bucket: 1, streamId: "s3", snapshots: [] },
    ]);
    const after = apply(before, createTable("t", ["b", "a"]), CTX).state;
    expect(after.nextStreamSeq).toBe(4);
    expect(after.streams.get("s2")).toEqual({ id: "s2", name: bucketStreamName("t", null, 0), owner: "b", epoch: 0, ownership: "placed", config: JSON_STREAM });
    expect(after.streamIdsByName.get(bucketStreamName("t", null, 1))).toBe("s3");
    expect(after.assigned.get("a")).toBe(1);
    // The leaders see the bucket streams in the view like any stream.
    expect(lookupTable(after, "t").buckets.map((b) => [b.leaderNode?.id, b.stream?.ownership])).toEqual([["b", "placed"], ["a", "placed"]]);
    expect(lookupTable(after, "u")).toEqual({ version: after.version, table: null, buckets: [] });
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
  it("TD3: the table and its bucket streams go, and their stream ids are never issued again", () => {
    const before = build([createTable("t", ["a"])], cluster());
    const { table } = expectChange(before, apply(before, { type: "DropTable", name: "t" }, CTX));
    const after = apply(before, { type: "DropTable", name: "t" }, CTX).state;
    expect(after.tables.has("t")).toBe(false);
    expect(after.streams.get(table.buckets[0]?.streamId ?? "")).toBeUndefined();
    expect(after.streamIdsByName.get(bucketStreamName("t", null, 0))).toBeUndefined();
    expect(after.assigned.get("a")).toBeUndefined();
    const again = build([createTable("t", ["a"])], after);
    expect(again.tables.get("t")?.buckets[0]?.streamId).not.toBe(table.buckets[0]?.streamId);
  });
});

describe("table DS with tables", () => {
  it("DS2b: a table's bucket stream is not deleted as a stream; once the table is dropped it is gone with it", () => {
    const state = build([createTable("t", ["a"])], cluster());
    const streamId = state.tables.get("t")?.buckets[0]?.streamId ?? "";
    expectRejected(state, apply(state, { type: "DeleteStream", streamId }, CTX), "invalid", { reason: "table_bucket", table: "t" });
    const dropped = build([{ type: "DropTable", name: "t" }], state);
    expectRejected(dropped, apply(dropped, { type: "DeleteStream", streamId }, CTX), "not_found");
  });
});

describe("table CB: CommitBucketSnapshot", () => {
  /** Table t with one bucket led by a, opened at epoch 1. */
  function opened(): { state: MetaState; streamId: string } {
    const state = build([createTable("t", ["a"])], cluster());
    const streamId = state.tables.get("t")?.buckets[0]?.streamId ?? "";
    return { state: build([{ type: "OpenStream", streamId, nodeId: "a", nodeEpoch: 1 }], state), streamId };
  }
  it("CB1: a stale proposer is refused", () => {
    const { state, streamId } = opened();
    expectRejected(state, apply(state, { ...commit("t", 0, streamId, 1, 10), by: { nodeId: "a", nodeEpoch: 0 } }, CTX), "stale_epoch");
  });
  it("CB2: an unknown table, bucket or a bucket of another stream is not_found", () => {
    const { state, streamId } = opened();
    expectRejected(state, apply(state, commit("u", 0, streamId, 1, 10), CTX), "not_found", { table: "u" });
    expectRejected(state, apply(state, commit("t", 1, streamId, 1, 10), CTX), "not_found", { bucket: 1 });
    expectRejected(state, apply(state, commit("t", 0, "s999", 1, 10), CTX), "not_found");
  });
  it("CB3: a leader at an older epoch, or a node that does not lead, is fenced", () => {
    const { state, streamId } = opened();
    const reopened = build([{ type: "OpenStream", streamId, nodeId: "a", nodeEpoch: 1 }], state);
    expectRejected(reopened, apply(reopened, commit("t", 0, streamId, 1, 10), CTX), "fenced", { owner: "a", epoch: 2 });
    expectRejected(reopened, apply(reopened, commit("t", 0, streamId, 2, 10, "b"), CTX), "fenced");
    // Placed, not opened yet: nobody leads at any epoch.
    const placed = build([createTable("p", ["a"])], cluster());
    const placedId = placed.tables.get("p")?.buckets[0]?.streamId ?? "";
    expectRejected(placed, apply(placed, commit("p", 0, placedId, 0, 10), CTX), "fenced");
  });
  it("CB4: a snapshot covering no more than the newest kept one is a no-op", () => {
    const { state, streamId } = opened();
    const once = build([commit("t", 0, streamId, 1, 10)], state);
    expectNoop(once, apply(once, commit("t", 0, streamId, 1, 10), CTX));
    expectNoop(once, apply(once, commit("t", 0, streamId, 1, 5), CTX));
  });
  it("CB5: the newest MAX_KEPT_SNAPSHOTS are kept, the older are dropped and named", () => {
    const { state, streamId } = opened();
    const two = build([commit("t", 0, streamId, 1, 10), commit("t", 0, streamId, 1, 20)], state);
    const { bucket, dropped } = expectChange(two, apply(two, commit("t", 0, streamId, 1, 30), CTX));
    expect(bucket.snapshots.map((n) => n.coveredPosition)).toEqual([20, 30]);
    expect(bucket.snapshots).toHaveLength(MAX_KEPT_SNAPSHOTS);
    expect(dropped).toEqual([snapshotAt(10)]);
  });
});

describe("leaders are stream owners: epochs and re-leading", () => {
  it("a bucket's leader epoch is its stream's epoch: it only grows while its table exists", () => {
    fc.assert(
      fc.property(stepsArbitrary, (scenario) => {
        for (const { before, applied } of run(scenario)) {
          for (const [name, table] of before.tables) {
            if (!applied.state.tables.has(name)) continue;
            for (const bucket of table.buckets) {
              const was = before.streams.get(bucket.streamId)?.epoch ?? 0;
              expect(applied.state.streams.get(bucket.streamId)?.epoch ?? 0).toBeGreaterThanOrEqual(was);
            }
          }
        }
      }),
      { numRuns: 200 },
    );
  });
  it("a dead leader's opened bucket is re-led by the coordinator's ReassignStreams, and the new leader's open takes a higher epoch", () => {
    const state = build([register("d"), createTable("t", ["a", "d"])], cluster());
    const streamId = state.tables.get("t")?.buckets[1]?.streamId ?? "";
    const openedByD = build([{ type: "OpenStream", streamId, nodeId: "d", nodeEpoch: 1 }, { type: "DeclareDead", nodeId: "d", nodeEpoch: 1, coordinator: COORD }], state);
    const moves = planReassignments(openedByD, new Set(["a", "b"]), 10);
    expect(moves).toEqual([{ streamId, target: "b" }]);
    // A stale coordinator cannot re-lead it.
    const stale = { ...COORD, coordinatorEpoch: 0 };
    expectRejected(openedByD, apply(openedByD, { type: "ReassignStreams", moves, coordinator: stale }, CTX), "fenced");
    const moved = build([{ type: "ReassignStreams", moves, coordinator: COORD }], openedByD);
    expect(bucketStream(moved, "t", 1)).toMatchObject({ owner: "b", ownership: "placed", epoch: 1, orphanOf: { node: "d" } });
  });
  it("a snapshot round trip keeps the tables and their snapshots", () => {
    const state = build([createTable("t", ["a", "b"], { columns: [{ name: "id", type: "string" }] })], cluster());
    const streamId = state.tables.get("t")?.buckets[0]?.streamId ?? "";
    const withSnapshot = build([{ type: "OpenStream", streamId, nodeId: "a", nodeEpoch: 1 }, commit("t", 0, streamId, 1, 10)], state);
    const decoded = decodeSnapshot(encodeSnapshot(withSnapshot));
    expect([...decoded.tables.values()]).toEqual([...withSnapshot.tables.values()]);
    expect(encodeSnapshot(decoded)).toBe(encodeSnapshot(withSnapshot));
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
