// The Avro files of an Iceberg snapshot (format version 2), written with icebird's Avro writer: a manifest
// (one entry per data or delete file the round added) and the manifest list (every manifest of the table's
// state, which the metadata's snapshot summaries record, so nothing Avro is read back: icebird's reader
// loads a WebAssembly decompressor at import, which a Worker may not compile). Field ids are those of
// the Iceberg spec's manifest_entry, data_file and manifest_file; a manifest entry names its sequence numbers
// explicitly (a reader then needs no inheritance rule).
import { ByteWriter } from "hyparquet-writer";
import { avroWrite } from "icebird/src/avro/avro.write.js";
import type { ManifestRecord } from "../core/tiering/iceberg-metadata.ts";
import { withHeaderMetadata } from "./avro-header.ts";
import { PARTITION_FIELD_ID, type IcebergType } from "../core/tiering/iceberg-schema.ts";

type AvroSchema = Parameters<typeof avroWrite>[0]["schema"];

const nullable = (type: unknown): unknown => ["null", type];

/** One file a round added: a data file (content 0) or an equality-delete file (content 2). */
export interface AddedFile {
  readonly content: 0 | 2;
  readonly path: string;
  readonly sizeBytes: number;
  readonly records: number;
  /** The partition column's value, or null in a table without partitions. */
  readonly partition: string | number | null;
  /** Field ids an equality delete matches on (a data file: none). */
  readonly equalityIds: readonly number[];
}

function manifestEntrySchema(partition: { name: string; type: IcebergType } | null): AvroSchema {
  const partitionFields = partition === null ? [] : [{ name: partition.name, type: nullable(partition.type), "field-id": PARTITION_FIELD_ID }];
  return {
    type: "record",
    name: "manifest_entry",
    fields: [
      { name: "status", type: "int", "field-id": 0 },
      { name: "snapshot_id", type: nullable("long"), "field-id": 1 },
      { name: "sequence_number", type: nullable("long"), "field-id": 3 },
      { name: "file_sequence_number", type: nullable("long"), "field-id": 4 },
      {
        name: "data_file",
        "field-id": 2,
        type: {
          type: "record",
          name: "r2",
          fields: [
            { name: "content", type: "int", "field-id": 134 },
            { name: "file_path", type: "string", "field-id": 100 },
            { name: "file_format", type: "string", "field-id": 101 },
            { name: "partition", "field-id": 102, type: { type: "record", name: "r102", fields: partitionFields } },
            { name: "record_count", type: "long", "field-id": 103 },
            { name: "file_size_in_bytes", type: "long", "field-id": 104 },
            { name: "equality_ids", type: nullable({ type: "array", items: "int", "element-id": 136 }), "field-id": 135 },
          ],
        },
      },
    ],
  } as AvroSchema;
}

const MANIFEST_FILE_SCHEMA = {
  type: "record",
  name: "manifest_file",
  fields: [
    { name: "manifest_path", type: "string", "field-id": 500 },
    { name: "manifest_length", type: "long", "field-id": 501 },
    { name: "partition_spec_id", type: "int", "field-id": 502 },
    { name: "content", type: "int", "field-id": 517 },
    { name: "sequence_number", type: "long", "field-id": 515 },
    { name: "min_sequence_number", type: "long", "field-id": 516 },
    { name: "added_snapshot_id", type: "long", "field-id": 503 },
    { name: "added_files_count", type: "int", "field-id": 504 },
    { name: "existing_files_count", type: "int", "field-id": 505 },
    { name: "deleted_files_count", type: "int", "field-id": 506 },
    { name: "added_rows_count", type: "long", "field-id": 512 },
    { name: "existing_rows_count", type: "long", "field-id": 513 },
    { name: "deleted_rows_count", type: "long", "field-id": 514 },
  ],
} as AvroSchema;

/** A manifest of files of one content kind (data, or deletes), all added by `snapshotId` at `sequenceNumber`. */
export function manifestFile(input: {
  files: readonly AddedFile[];
  snapshotId: number;
  sequenceNumber: number;
  partition: { name: string; type: IcebergType } | null;
  /** The header metadata the spec requires of a manifest: the table's schema and partition spec (JSON). */
  schema: unknown;
  partitionSpec: { "spec-id": number; fields: unknown };
}): Uint8Array {
  const sequence = BigInt(input.sequenceNumber);
  const records = input.files.map((file) => ({
    status: 1, // ADDED
    snapshot_id: BigInt(input.snapshotId),
    sequence_number: sequence,
    file_sequence_number: sequence,
    data_file: {
      content: file.content,
      file_path: file.path,
      file_format: "PARQUET",
      partition: input.partition === null ? {} : { [input.partition.name]: partitionCell(input.partition.type, file.partition) },
      record_count: BigInt(file.records),
      file_size_in_bytes: BigInt(file.sizeBytes),
      equality_ids: file.content === 2 ? [...file.equalityIds] : null,
    },
  }));
  return withHeaderMetadata(avroBytes(manifestEntrySchema(input.partition), records), {
    schema: JSON.stringify(input.schema),
    "schema-id": "0",
    "partition-spec": JSON.stringify(input.partitionSpec.fields),
    "partition-spec-id": String(input.partitionSpec["spec-id"]),
    "format-version": "2",
    content: input.files.some((file) => file.content !== 0) ? "deletes" : "data",
  });
}

function partitionCell(type: IcebergType, value: string | number | null): string | bigint | null {
  if (value === null) return null;
  return type === "long" ? BigInt(value) : String(value);
}

/** A manifest list entry (the Avro record, longs as bigints). */
type ManifestListEntry = Record<string, unknown>;

function manifestListEntry(input: ManifestRecord): ManifestListEntry {
  return {
    manifest_path: input.path,
    manifest_length: BigInt(input.lengthBytes),
    partition_spec_id: 0,
    content: input.content,
    sequence_number: BigInt(input.sequenceNumber),
    min_sequence_number: BigInt(input.sequenceNumber),
    added_snapshot_id: BigInt(input.snapshotId),
    added_files_count: input.files,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: BigInt(input.rows),
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
  };
}

/** The manifest list of snapshot `snapshotId`: an entry per manifest, in order. */
export function manifestList(manifests: readonly ManifestRecord[], snapshot: { snapshotId: number; parentSnapshotId: number | null; sequenceNumber: number }): Uint8Array {
  return withHeaderMetadata(avroBytes(MANIFEST_FILE_SCHEMA, manifests.map(manifestListEntry)), {
    "snapshot-id": String(snapshot.snapshotId),
    "parent-snapshot-id": snapshot.parentSnapshotId === null ? "null" : String(snapshot.parentSnapshotId),
    "sequence-number": String(snapshot.sequenceNumber),
    "format-version": "2",
  });
}

function avroBytes(schema: AvroSchema, records: readonly Record<string, unknown>[]): Uint8Array {
  const writer = new ByteWriter();
  avroWrite({ writer, schema, records: [...records] });
  return new Uint8Array(writer.getBuffer());
}
