// Which files of a tiered table are orphans (docs/tiering.md, table OF; src/core/tiering/orphan-files.ts).
import { describe, expect, test } from "vitest";
import { orphanedFiles, roundFilePrefix } from "../../../src/core/tiering/orphan-files.ts";

const key = (epoch: number, snapshotId: number, kind: string) => `tiered/t/data/${roundFilePrefix(epoch, snapshotId)}abc-${kind}`;

describe("table OF: orphaned files", () => {
  const committed = new Set([10, 11]);
  test("OF1: a file of a committed snapshot is kept, whatever its epoch", () => {
    expect(orphanedFiles([key(1, 10, "data.parquet"), key(3, 11, "list.avro")], committed, 3)).toEqual([]);
  });
  test("OF2: a file of an older epoch's snapshot that was never committed is an orphan", () => {
    expect(orphanedFiles([key(2, 12, "data.parquet"), key(1, 13, "m0.avro")], committed, 3)).toEqual([key(2, 12, "data.parquet"), key(1, 13, "m0.avro")]);
  });
  test("OF3: a file of the latest epoch not committed yet may be a round in flight: kept", () => {
    expect(orphanedFiles([key(3, 12, "data.parquet")], committed, 3)).toEqual([]);
  });
  test("OF4: a file not named by a round is kept (metadata versions, the hint, another writer's files)", () => {
    expect(orphanedFiles(["tiered/t/metadata/v3.metadata.json", "tiered/t/metadata/version-hint.text", "tiered/t/data/part-0.parquet", "tiered/t/data/xe1-s1-a"], committed, 9)).toEqual([]);
  });
});
