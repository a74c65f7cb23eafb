// The header metadata of manifests and manifest lists (src/tiering/avro-header.ts; docs/tiering.md,
// "Layout"): the keys the Iceberg spec requires are there, and the records read back as icebird wrote them.
import { avroMetadata, avroRead } from "icebird";
import { describe, expect, test } from "vitest";
import { withHeaderMetadata } from "../../src/tiering/avro-header.ts";
import { manifestFile, manifestList } from "../../src/tiering/avro-manifests.ts";

function read(bytes: Uint8Array): { metadata: Record<string, unknown>; records: Record<string, unknown>[] } {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const { metadata, syncMarker } = avroMetadata(reader);
  return { metadata: metadata as Record<string, unknown>, records: avroRead({ reader, metadata, syncMarker }) as Record<string, unknown>[] };
}

const file = { content: 0 as const, path: "s3://mink/tiered/t/data/e1-s7-a-data.parquet", sizeBytes: 1234, records: 5, partition: "eu", equalityIds: [] };
const schema = { type: "struct", "schema-id": 0, fields: [{ id: 1, name: "region", required: true, type: "string" }] };
const spec = { "spec-id": 0, fields: [{ "source-id": 1, "field-id": 1000, name: "region", transform: "identity" }] };

describe("Avro headers of manifests and manifest lists", () => {
  test("a manifest names the schema, the partition spec, the format version and its content; its entries read back", () => {
    const bytes = manifestFile({ files: [file], snapshotId: 7, sequenceNumber: 3, partition: { name: "region", type: "string" }, schema, partitionSpec: spec });
    const { metadata, records } = read(bytes);
    // icebird's reader gives `schema` and `avro.schema` parsed (JSON), the other values as text.
    expect(metadata).toMatchObject({
      schema,
      "schema-id": "0",
      "partition-spec": JSON.stringify(spec.fields),
      "partition-spec-id": "0",
      "format-version": "2",
      content: "data",
    });
    expect(metadata["avro.schema"]).toMatchObject({ name: "manifest_entry" });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 1, snapshot_id: 7n, sequence_number: 3n, data_file: { file_path: file.path, record_count: 5n, partition: { region: "eu" } } });
  });

  test("a delete manifest says content: deletes; a manifest list names its snapshot, parent and sequence number", () => {
    const deletes = manifestFile({ files: [{ ...file, content: 2, equalityIds: [1] }], snapshotId: 7, sequenceNumber: 3, partition: null, schema, partitionSpec: { "spec-id": 0, fields: [] } });
    expect(read(deletes).metadata["content"]).toBe("deletes");
    const list = manifestList([{ path: "s3://mink/m.avro", lengthBytes: 99, content: 0, sequenceNumber: 3, snapshotId: 7, files: 1, rows: 5 }], { snapshotId: 7, parentSnapshotId: 6, sequenceNumber: 3 });
    const { metadata, records } = read(list);
    expect(metadata).toMatchObject({ "snapshot-id": "7", "parent-snapshot-id": "6", "sequence-number": "3", "format-version": "2" });
    expect(records[0]).toMatchObject({ manifest_path: "s3://mink/m.avro", manifest_length: 99n, added_rows_count: 5n });
  });

  test("an existing key keeps its value, and anything not an Avro container is refused", () => {
    const list = manifestList([], { snapshotId: 1, parentSnapshotId: null, sequenceNumber: 1 });
    const again = withHeaderMetadata(list, { "format-version": "9", extra: "x".repeat(300) });
    expect(read(again).metadata).toMatchObject({ "format-version": "2", extra: "x".repeat(300), "parent-snapshot-id": "null" });
    expect(() => withHeaderMetadata(new Uint8Array([1, 2, 3, 4, 5]), {})).toThrow(/not an object container/);
  });
});
