// The Iceberg metadata mink writes and the commit rule of a round (docs/tiering.md, tables MD and TC;
// src/core/tiering/iceberg-metadata.ts).
import { describe, expect, test } from "vitest";
import { definitionOf as definition } from "../../support/parse-definition.ts";
import { commitStep, currentManifests, newTableMetadata, tableUuidOf, tieredOffsetsOf, withEpoch, withSnapshot } from "../../../src/core/tiering/iceberg-metadata.ts";


const table = definition({ columns: [{ name: "id", type: "int" }, { name: "day", type: "string" }], primaryKey: ["id", "day"], buckets: 2, partitionBy: "day" });
const created = newTableMetadata({ definition: table, location: "s3://mink/tiered/t", tableUuid: "u-1", nowMs: 1_000, coordinatorEpoch: 3 });
const counts = { dataFiles: 1, records: 5, deleteFiles: 1, deletes: 2 };

describe("table MD: the metadata versions", () => {
  test("MD1: version 1 is format 2 with the schema, the partition spec and no snapshot, at the creator's epoch", () => {
    expect(created["format-version"]).toBe(2);
    expect(created.location).toBe("s3://mink/tiered/t");
    expect(created["last-column-id"]).toBe(4); // id, day, _bucket, _offset
    expect(created["last-partition-id"]).toBe(1000);
    expect(created["current-snapshot-id"]).toBeUndefined();
    expect(created.snapshots).toEqual([]);
    expect(commitStep(created, 3)).toEqual({ kind: "commit" });
  });

  test("MD2: a snapshot takes the next sequence number, its parent, the offsets and the epoch, and becomes current", () => {
    const first = withSnapshot(created, { snapshotId: 7, manifestList: "s3://mink/l1.avro", nowMs: 2_000, offsets: { s1: { position: 90, offset: 3 } }, manifests: [], counts, coordinatorEpoch: 3 });
    const second = withSnapshot(first, { snapshotId: 8, manifestList: "s3://mink/l2.avro", nowMs: 3_000, offsets: { s1: { position: 120, offset: 4 } }, manifests: [], counts: { ...counts, deleteFiles: 0, deletes: 0 }, coordinatorEpoch: 3 });
    expect(second["last-sequence-number"]).toBe(2);
    expect(second["current-snapshot-id"]).toBe(8);
    expect(second.refs).toEqual({ main: { "snapshot-id": 8, type: "branch" } });
    expect(second.snapshots.map((s) => [s["snapshot-id"], s["parent-snapshot-id"], s["sequence-number"], s.summary["operation"]])).toEqual([
      [7, undefined, 1, "overwrite"],
      [8, 7, 2, "append"],
    ]);
    expect(tieredOffsetsOf(second)).toEqual({ s1: { position: 120, offset: 4 } });
    expect(tieredOffsetsOf(first)).toEqual({ s1: { position: 90, offset: 3 } });
  });

  test("MD3: a fence version keeps the table state and changes only the epoch", () => {
    const first = withSnapshot(created, { snapshotId: 7, manifestList: "s3://mink/l1.avro", nowMs: 2_000, offsets: { s1: { position: 90, offset: 3 } }, manifests: [], counts, coordinatorEpoch: 3 });
    const fenced = withEpoch(first, 4, 5_000);
    expect({ ...fenced, properties: {}, "last-updated-ms": 0 }).toEqual({ ...first, properties: {}, "last-updated-ms": 0 });
    expect(tieredOffsetsOf(fenced)).toEqual(tieredOffsetsOf(first));
    expect(commitStep(fenced, 4)).toEqual({ kind: "commit" });
    expect(commitStep(fenced, 3)).toEqual({ kind: "fenced", latestEpoch: 4 });
  });

  test("MD5: a snapshot's manifests are those every snapshot of its ancestry added, oldest first", () => {
    const manifest = (path: string, sequenceNumber: number) => ({ path, lengthBytes: 10, content: 0 as const, sequenceNumber, snapshotId: sequenceNumber, files: 1, rows: 1 });
    const first = withSnapshot(created, { snapshotId: 7, manifestList: "l1", manifests: [manifest("m1", 1)], nowMs: 2, offsets: {}, counts, coordinatorEpoch: 3 });
    const second = withSnapshot(withEpoch(first, 4, 3), { snapshotId: 8, manifestList: "l2", manifests: [manifest("m2", 2), manifest("m3", 2)], nowMs: 4, offsets: {}, counts, coordinatorEpoch: 4 });
    expect(currentManifests(created)).toEqual([]);
    expect(currentManifests(first).map((m) => m.path)).toEqual(["m1"]);
    expect(currentManifests(second).map((m) => m.path)).toEqual(["m1", "m2", "m3"]);
  });

  test("MD6: the table UUID is in the standard form, version 4", () => {
    expect(tableUuidOf("0123456789abcdef0123456789abcdef")).toBe("01234567-89ab-4def-8123-456789abcdef");
    expect(tableUuidOf("ffffffffffffffffffffffffffffffff")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(() => tableUuidOf("not-hex")).toThrow();
  });

  test("MD4: no snapshot, or a summary without mink's offsets, tiers from the start", () => {
    expect(tieredOffsetsOf(created)).toEqual({});
  });
});

describe("table TC: the next step of a round", () => {
  test("TC1: no table yet: create version 1", () => {
    expect(commitStep(null, 1)).toEqual({ kind: "create" });
  });
  test("TC2: the latest version is of an older epoch: fence it first", () => {
    expect(commitStep(created, 4)).toEqual({ kind: "fence" });
  });
  test("TC3: the latest version is of this epoch: commit over it", () => {
    expect(commitStep(created, 3)).toEqual({ kind: "commit" });
  });
  test("TC4: a newer epoch wrote the latest version: fenced, naming that epoch", () => {
    expect(commitStep(created, 2)).toEqual({ kind: "fenced", latestEpoch: 3 });
  });
  test("TC4: a version that names no epoch (not mink's) counts as epoch 0: fenced over by any holder", () => {
    expect(commitStep({ ...created, properties: {} }, 1)).toEqual({ kind: "fence" });
  });
});
