// Tables TB, AP, TD and CB of src/core/meta/table-rules.ts, row by row; then, over random command sequences,
// that a bucket's leader epoch (its stream's epoch) only grows, the snapshot round trip of tables, and that
// a dead leader's buckets are re-led like its streams, by a coordinator-fenced ReassignStreams.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, collectableStreams, decodeSnapshot, encodeSnapshot, lookupTable, planReassignments, tablesOf, type CommandOf, type Coordinator, type MetaState } from "../../../src/core/meta/index.ts";
import { MAX_KEPT_SNAPSHOTS, MAX_PARTITIONS_PER_TABLE, MAX_TABLES, MAX_TOTAL_BUCKETS } from "../../../src/core/meta/table-rules.ts";
import type { BucketRecord, TableRecord } from "../../../src/core/meta/table-records.ts";
import { bucketStreamName, encodePartition } from "../../../src/core/tables/bucketing.ts";
import { MAX_PARTITION_STRING_LENGTH } from "../../../src/core/tables/rows.ts";
import { run, stepsArbitrary } from "./arbitraries.ts";
import { build, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";
import { propertyRuns } from "../../support/property-runs.ts";

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

/** Partitioned by the int column `day` (in the primary key), 2 buckets per partition. */
const BY_DAY = {
  columns: [{ name: "day", type: "int", nullable: false }, { name: "id", type: "string", nullable: false }],
  primaryKey: ["day", "id"],
  buckets: 2,
  partitionBy: "day",
};
/** Partitioned by the string column `region`, 1 bucket per partition. */
const BY_REGION = {
  columns: [{ name: "region", type: "string", nullable: false }, { name: "id", type: "string", nullable: false }],
  primaryKey: ["region", "id"],
  buckets: 1,
  partitionBy: "region",
};
/** Not partitioned, but a definition that parses (AP3 must not mistake it for one). */
const UNPARTITIONED = { columns: [{ name: "id", type: "string", nullable: false }], primaryKey: ["id"], buckets: 2 };

const addPartition = (table: string, value: string | number, leaders: readonly string[], coordinator = COORD): CommandOf<"AddPartition"> => ({
  type: "AddPartition",
  table,
  value,
  leaders,
  streamConfig: JSON_STREAM,
  coordinator,
});

/** The buckets of one partition of a table, in bucket order. */
const partitionBuckets = (state: MetaState, table: string, value: string | number): readonly BucketRecord[] =>
  state.tables.get(table)?.buckets.filter((b) => b.partition === value) ?? [];

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

function totalBucketsOf(state: MetaState): number {
  let total = 0;
  for (const table of state.tables.values()) total += table.buckets.length;
  return total;
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
  it("TB1b: leaders that do not fit a definition are invalid: one per bucket, none for a partitioned table", () => {
    const before = cluster();
    const keyed = { columns: [{ name: "id", type: "string", nullable: false }], primaryKey: ["id"], bucketKey: ["id"], buckets: 2 };
    const daily = { columns: [{ name: "day", type: "int", nullable: false }], primaryKey: ["day"], bucketKey: ["day"], buckets: 2, partitionBy: "day" };
    expectRejected(before, apply(before, createTable("k", ["a"], keyed), CTX), "invalid", { reason: "leaders_mismatch", leaders: 2 });
    expectRejected(before, apply(before, createTable("d", ["a", "b"], daily), CTX), "invalid", { reason: "leaders_mismatch", leaders: 0 });
    expectChange(before, apply(before, createTable("k", ["a", "b"], keyed), CTX));
    expectChange(before, apply(before, createTable("d", [], daily), CTX));
  });
  it("TB2: the same definition again is a no-op answering the existing record", () => {
    const before = build([createTable("t", ["a", "b"])], cluster());
    const { table } = expectNoop(before, apply(before, createTable("t", ["b", "a"], { columns: ["id"] }), CTX));
    expect(table.buckets.map((b) => before.streams.get(b.streamId)?.owner)).toEqual(["a", "b"]);
  });
  it("TB2: a partitioned table created again with leaders [] is a no-op, before and after its partitions came", () => {
    const before = build([createTable("d", [], BY_DAY)], cluster());
    expect(expectNoop(before, apply(before, createTable("d", [], BY_DAY), CTX)).table.buckets).toEqual([]);
    const partitioned = build([addPartition("d", 1, ["a", "b"]), addPartition("d", 2, ["b", "a"])], before);
    const { table } = expectNoop(partitioned, apply(partitioned, createTable("d", [], BY_DAY), CTX));
    expect(table.buckets).toHaveLength(4);
    // The definition still decides.
    expectRejected(partitioned, apply(partitioned, createTable("d", [], { ...BY_DAY, buckets: 3 }), CTX), "conflict", { reason: "definition_differs", buckets: 4 });
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
    expect(after.streams.idByName(bucketStreamName("t", null, 1))).toBe("s3");
    expect(after.assigned.get("a")).toBe(1);
    // The leaders see the bucket streams in the view like any stream.
    expect(lookupTable(after, "t").buckets.map((b) => [b.leaderNode?.id, b.stream?.ownership])).toEqual([["b", "placed"], ["a", "placed"]]);
    expect(lookupTable(after, "u")).toEqual({ version: after.version, table: null, buckets: [] });
  });
});

describe("table AP: AddPartition", () => {
  /** Table "d" partitioned by day (2 buckets a partition), "r" by region (1), "u" not partitioned. */
  function tables(): MetaState {
    return build([createTable("d", [], BY_DAY), createTable("r", [], BY_REGION), createTable("u", ["a", "b"], UNPARTITIONED)], cluster());
  }
  it("AP1: a stale coordinator epoch is fenced", () => {
    const before = tables();
    expectRejected(before, apply(before, addPartition("d", 1, ["a", "b"], { ...COORD, coordinatorEpoch: 0 }), CTX), "fenced", { holder: "a", coordinatorEpoch: 1 });
    expectRejected(before, apply(before, addPartition("d", 1, ["a", "b"], { ...COORD, nodeId: "b" }), CTX), "fenced");
  });
  it("AP2: no such table is not_found", () => {
    const before = tables();
    expectRejected(before, apply(before, addPartition("nope", 1, ["a", "b"]), CTX), "not_found", { table: "nope" });
  });
  it("AP3: a table without partitionBy, or whose definition does not parse, is not partitioned", () => {
    const before = build([createTable("bad", ["a"], { columns: ["id"] })], tables());
    expectRejected(before, apply(before, addPartition("u", 1, ["a", "b"]), CTX), "invalid", { reason: "not_partitioned", table: "u" });
    expectRejected(before, apply(before, addPartition("bad", 1, ["a"]), CTX), "invalid", { reason: "not_partitioned", table: "bad" });
  });
  it("AP4: a value that does not fit the partition column is invalid", () => {
    const before = tables();
    expectRejected(before, apply(before, addPartition("d", "1", ["a", "b"]), CTX), "invalid", { field: "value" });
    expectRejected(before, apply(before, addPartition("r", 7, ["a"]), CTX), "invalid", { field: "value" });
    expectRejected(before, apply(before, addPartition("r", "x".repeat(MAX_PARTITION_STRING_LENGTH + 1), ["a"]), CTX), "invalid", { field: "value" });
    // The longest value that fits is a partition.
    expectChange(before, apply(before, addPartition("r", "x".repeat(MAX_PARTITION_STRING_LENGTH), ["a"]), CTX));
  });
  it("AP5: a partition that exists is a no-op answering its buckets, whatever the leaders asked for", () => {
    const before = build([addPartition("d", 20261202, ["a", "b"]), addPartition("d", 20261203, ["b", "a"])], tables());
    const { buckets, table } = expectNoop(before, apply(before, addPartition("d", 20261202, ["b"]), CTX));
    expect(buckets).toEqual(partitionBuckets(before, "d", 20261202));
    expect(buckets.map((b) => b.bucket)).toEqual([0, 1]);
    expect(table).toBe(before.tables.get("d"));
    expect(buckets.map((b) => before.streams.get(b.streamId)?.owner)).toEqual(["a", "b"]);
  });
  it("AP6: leaders not one per bucket of the definition is invalid", () => {
    const before = tables();
    expectRejected(before, apply(before, addPartition("d", 1, ["a"]), CTX), "invalid", { reason: "leaders_mismatch", buckets: 2 });
    expectRejected(before, apply(before, addPartition("d", 1, ["a", "b", "a"]), CTX), "invalid", { reason: "leaders_mismatch", buckets: 2 });
    expectRejected(before, apply(before, addPartition("d", 1, []), CTX), "invalid", { reason: "leaders_mismatch", buckets: 2 });
  });
  it("AP7: a partition beyond MAX_PARTITIONS_PER_TABLE is refused; a repeat of one of them is still a no-op", () => {
    const base = tables();
    const full = [...Array(MAX_PARTITIONS_PER_TABLE).keys()].map((value): BucketRecord => ({ partition: `p${value}`, bucket: 0, streamId: `x${value}`, snapshots: [] }));
    const table: TableRecord = { name: "r", definition: BY_REGION, buckets: full };
    const before: MetaState = { ...base, tables: new Map([...base.tables, ["r", table]]) };
    expectRejected(before, apply(before, addPartition("r", "one-more", ["a"]), CTX), "limit_reached", { limit: "max_partitions", max: MAX_PARTITIONS_PER_TABLE });
    expectNoop(before, apply(before, addPartition("r", "p5", ["a"]), CTX));
    // One fewer: accepted.
    const almost: MetaState = { ...base, tables: new Map([...base.tables, ["r", { ...table, buckets: full.slice(1) }]]) };
    expectChange(almost, apply(almost, addPartition("r", "one-more", ["a"]), CTX));
  });
  it("AP8: buckets beyond MAX_TOTAL_BUCKETS in all are refused", () => {
    const base = tables();
    const used = MAX_TOTAL_BUCKETS - totalBucketsOf(base) - 1;
    const buckets = [...Array(used).keys()].map((bucket) => ({ partition: null, bucket, streamId: `y${bucket}`, snapshots: [] }));
    const before: MetaState = { ...base, tables: new Map([...base.tables, ["big", { name: "big", definition: null, buckets }]]) };
    // One bucket is left: a partition of "d" (2 buckets) does not fit, one of "r" (1 bucket) does.
    expectRejected(before, apply(before, addPartition("d", 1, ["a", "b"]), CTX), "limit_reached", { limit: "max_total_buckets", max: MAX_TOTAL_BUCKETS });
    expectChange(before, apply(before, addPartition("r", "eu", ["a"]), CTX));
  });
  it("AP9: a leader that is not registered or is declared dead is invalid", () => {
    const before = tables();
    expectRejected(before, apply(before, addPartition("d", 1, ["a", "q"]), CTX), "invalid", { bucket: 1, node: "q", reason: "not_registered" });
    expectRejected(before, apply(before, addPartition("d", 1, ["c", "a"]), CTX), "invalid", { bucket: 0, node: "c", reason: "declared_dead" });
  });
  it("AP10: a bucket stream name of the partition still taken (a leftover) is a conflict", () => {
    const before = build([{ type: "CreateStream", name: bucketStreamName("d", encodePartition(7), 1), config: {} }], tables());
    expectRejected(before, apply(before, addPartition("d", 7, ["a", "b"]), CTX), "conflict", { reason: "bucket_stream_exists", bucket: 1 });
    // Another partition's names are free.
    expectChange(before, apply(before, addPartition("d", 8, ["a", "b"]), CTX));
  });
  it("AP11: bucket i of the partition is a JSON stream under p/<encodePartition(value)> placed on leaders[i] at epoch 0, appended after the earlier partitions", () => {
    const before = build([addPartition("d", 1, ["a", "b"])], tables());
    const applied = apply(before, addPartition("d", -5, ["b", "a"]), CTX);
    const { buckets, table } = expectChange(before, applied);
    const seq = before.nextStreamSeq;
    expect(buckets).toEqual([
      { partition: -5, bucket: 0, streamId: `s${seq}`, snapshots: [] },
      { partition: -5, bucket: 1, streamId: `s${seq + 1}`, snapshots: [] },
    ]);
    expect(table.buckets.map((b) => [b.partition, b.bucket])).toEqual([[1, 0], [1, 1], [-5, 0], [-5, 1]]);
    const after = applied.state;
    expect(after.tables.get("d")).toEqual(table);
    expect(after.nextStreamSeq).toBe(seq + 2);
    expect(after.streams.get(`s${seq}`)).toEqual({ id: `s${seq}`, name: bucketStreamName("d", encodePartition(-5), 0), owner: "b", epoch: 0, ownership: "placed", config: JSON_STREAM });
    expect(after.streams.idByName(`__ds/table/d/p/${encodePartition(-5)}/b/1`)).toBe(`s${seq + 1}`);
    expect(after.streams.get(`s${seq + 1}`)?.owner).toBe("a");
    // A string value: its key escapes `/`, so the name has exactly the segments of a bucket stream.
    const region = expectChange(after, apply(after, addPartition("r", "eu/west", ["a"]), CTX));
    expect(apply(after, addPartition("r", "eu/west", ["a"]), CTX).state.streams.get(region.buckets[0]!.streamId)?.name).toBe(`__ds/table/r/p/${encodePartition("eu/west")}/b/0`);
    expect(encodePartition("eu/west")).not.toContain("/");
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
    expect(after.streams.idByName(bucketStreamName("t", null, 0))).toBeUndefined();
    expect(after.assigned.get("a")).toBeUndefined();
    const again = build([createTable("t", ["a"])], after);
    expect(again.tables.get("t")?.buckets[0]?.streamId).not.toBe(table.buckets[0]?.streamId);
  });
  it("TD3: a partitioned table goes with the bucket streams of every partition", () => {
    const before = build([createTable("d", [], BY_DAY), addPartition("d", 1, ["a", "b"]), addPartition("d", 2, ["b", "a"]), createTable("t", ["a"])], cluster());
    const ids = before.tables.get("d")?.buckets.map((b) => b.streamId) ?? [];
    expect(ids).toHaveLength(4);
    const applied = apply(before, { type: "DropTable", name: "d" }, CTX);
    const { table } = expectChange(before, applied);
    expect(table.buckets.map((b) => b.streamId)).toEqual(ids);
    const after = applied.state;
    expect(after.tables.has("d")).toBe(false);
    for (const id of ids) expect(after.streams.get(id)).toBeUndefined();
    for (const value of [1, 2]) for (const bucket of [0, 1]) expect(after.streams.idByName(bucketStreamName("d", encodePartition(value), bucket))).toBeUndefined();
    // The other table's bucket is untouched; the partitions' names are free for a new table of that name.
    expect(after.streams.get(before.tables.get("t")?.buckets[0]?.streamId ?? "")).toBeDefined();
    const again = build([createTable("d", [], BY_DAY), addPartition("d", 1, ["a", "b"])], after);
    expect(partitionBuckets(again, "d", 1).map((b) => b.streamId).some((id) => ids.includes(id))).toBe(false);
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
  it("DS2b: a partition's bucket stream is not deleted as a stream either", () => {
    const state = build([createTable("d", [], BY_DAY), addPartition("d", 3, ["a", "b"])], cluster());
    for (const { streamId } of partitionBuckets(state, "d", 3)) {
      expectRejected(state, apply(state, { type: "DeleteStream", streamId }, CTX), "invalid", { reason: "table_bucket", table: "d" });
    }
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
  it("CB5, CB2: a partition's bucket is found by its stream id; the same stream under another bucket number is not_found", () => {
    const base = build([createTable("d", [], BY_DAY), addPartition("d", 1, ["a", "a"]), addPartition("d", 2, ["a", "a"])], cluster());
    // Bucket 1 of partition 2: the fourth bucket of the table, and not buckets[1].
    const target = partitionBuckets(base, "d", 2)[1]!;
    const state = build([{ type: "OpenStream", streamId: target.streamId, nodeId: "a", nodeEpoch: 1 }], base);
    const applied = apply(state, commit("d", 1, target.streamId, 1, 10), CTX);
    const { bucket } = expectChange(state, applied);
    expect(bucket).toEqual({ ...target, snapshots: [snapshotAt(10)] });
    // Only that bucket holds the snapshot.
    expect(applied.state.tables.get("d")?.buckets.map((b) => [b.partition, b.bucket, b.snapshots.length])).toEqual([[1, 0, 0], [1, 1, 0], [2, 0, 0], [2, 1, 1]]);
    expectRejected(state, apply(state, commit("d", 0, target.streamId, 1, 10), CTX), "not_found", { table: "d", bucket: 0 });
    expectRejected(state, apply(state, commit("d", 3, target.streamId, 1, 10), CTX), "not_found", { table: "d", bucket: 3 });
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
      { numRuns: propertyRuns(200) },
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
  it("a snapshot round trip keeps a partitioned table: each bucket's partition, and its number within its partition", () => {
    const base = build([createTable("d", [], BY_DAY), addPartition("d", 20261202, ["a", "b"]), createTable("r", [], BY_REGION), addPartition("r", "eu/west", ["a"]), addPartition("d", -1, ["b", "a"]), addPartition("r", "5", ["b"])], cluster());
    const streamId = partitionBuckets(base, "d", -1)[1]!.streamId;
    const state = build([{ type: "OpenStream", streamId, nodeId: "a", nodeEpoch: 1 }, commit("d", 1, streamId, 1, 10)], base);
    const decoded = decodeSnapshot(encodeSnapshot(state));
    expect(decoded.tables.get("d")?.buckets.map((b) => [b.partition, b.bucket])).toEqual([[20261202, 0], [20261202, 1], [-1, 0], [-1, 1]]);
    expect(decoded.tables.get("r")?.buckets.map((b) => [b.partition, b.bucket])).toEqual([["eu/west", 0], ["5", 0]]);
    expect([...decoded.tables.values()]).toEqual([...state.tables.values()]);
    expect(encodeSnapshot(decoded)).toBe(encodeSnapshot(state));
    // After the round trip the log goes on as before: a repeat is a no-op, a new partition is added.
    expectNoop(decoded, apply(decoded, addPartition("d", -1, ["a", "b"]), CTX));
    expect(expectChange(decoded, apply(decoded, addPartition("d", 0, ["a", "b"]), CTX)).buckets.map((b) => b.bucket)).toEqual([0, 1]);
  });
  it("lookupTable's buckets carry their partition (null for a table without partitions)", () => {
    const state = build([createTable("d", [], BY_DAY), addPartition("d", 1, ["a", "b"]), addPartition("d", 2, ["b", "a"]), createTable("t", ["a"])], cluster());
    const lookup = lookupTable(state, "d");
    expect(lookup.buckets.map((b) => [b.partition, b.bucket, b.leaderNode?.id, b.stream?.name])).toEqual([
      [1, 0, "a", bucketStreamName("d", encodePartition(1), 0)],
      [1, 1, "b", bucketStreamName("d", encodePartition(1), 1)],
      [2, 0, "b", bucketStreamName("d", encodePartition(2), 0)],
      [2, 1, "a", bucketStreamName("d", encodePartition(2), 1)],
    ]);
    expect(lookupTable(state, "t").buckets.map((b) => b.partition)).toEqual([null]);
    expect(lookupTable(build([createTable("e", [], BY_DAY)], state), "e").buckets).toEqual([]);
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
