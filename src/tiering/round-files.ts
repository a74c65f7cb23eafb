// The files one tiering round writes before its commit (docs/tiering.md): per partition a Parquet data file
// and, in a primary-key table, an equality-delete file; then a data manifest and a delete manifest; then the
// manifest list (every manifest of the previous snapshot's state, then these). Each file has a fresh name
// that starts with the round's epoch and snapshot id: a round that never commits leaves its files
// unreferenced (collect-orphans.ts deletes them later), never overwrites a committed one.
import type { TableDefinition } from "../core/tables/definition.ts";
import { equalityFieldIds, icebergSchema, partitionSpec, partitionType, tieredColumns, type TieredColumn } from "../core/tiering/iceberg-schema.ts";
import type { ManifestRecord, RoundCounts } from "../core/tiering/iceberg-metadata.ts";
import type { BucketRound } from "../core/tiering/round-rows.ts";
import { roundFilePrefix } from "../core/tiering/orphan-files.ts";
import type { Row } from "../core/tables/changelog.ts";
import { tieredAvroKey, tieredDataKey } from "../storage/keys.ts";
import { putCreateOnce } from "../storage/create-once.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { ResolvedRetry } from "../storage/retry-policy.ts";
import { manifestFile, manifestList, type AddedFile } from "./avro-manifests.ts";
import { dataFile, equalityDeleteFile } from "./parquet-files.ts";

export interface RoundFilesInput {
  readonly table: string;
  readonly definition: TableDefinition;
  /** s3://<bucket>: the files' URIs are `<location>/<key>`. */
  readonly storeUri: string;
  /** The round's folded buckets, with each bucket's partition value (null without partitions). */
  readonly buckets: readonly { readonly partition: string | number | null; readonly round: BucketRound }[];
  readonly snapshotId: number;
  readonly coordinatorEpoch: number;
  readonly sequenceNumber: number;
  /** The snapshot this one follows (null: the first). */
  readonly parentSnapshotId: number | null;
  /** Every manifest of the previous snapshot's state (MD5). */
  readonly previousManifests: readonly ManifestRecord[];
  readonly newName: () => string;
  readonly retry: ResolvedRetry;
}

export interface RoundFiles {
  readonly manifestList: string;
  /** The manifests this round added. */
  readonly manifests: readonly ManifestRecord[];
  readonly counts: RoundCounts;
}

/** Writes the round's files; returns the manifest list's URI and what was added. */
export async function writeRoundFiles(store: ObjectStore, input: RoundFilesInput): Promise<RoundFiles> {
  const { definition } = input;
  // Every file names the round that wrote it, so the files of a round that never commits can be told (table OF).
  const prefix = roundFilePrefix(input.coordinatorEpoch, input.snapshotId);
  const columns = tieredColumns(definition);
  const schema = icebergSchemaOf(columns);
  const keyIds = equalityFieldIds(definition);
  const keyColumns = columns.filter((column) => keyIds.includes(column.id));
  const keySchema = icebergSchemaOf(keyColumns);
  const uri = (key: string): string => `${input.storeUri}/${key}`;
  // Create-only: a file of a committed snapshot is never overwritten, whatever names a writer picks.
  const put = async (key: string, bytes: Uint8Array): Promise<number> => {
    if ((await putCreateOnce(store, key, bytes, input.retry)).kind === "exists") throw new Error(`tiering: ${key} exists already (a file name was reused)`);
    return bytes.byteLength;
  };

  const dataFiles: AddedFile[] = [];
  const deleteFiles: AddedFile[] = [];
  for (const [partition, rounds] of byPartition(input.buckets)) {
    const rows = rounds.flatMap((round) => round.data);
    const deletes: Row[] = rounds.flatMap((round) => round.deletes);
    if (rows.length > 0) {
      const key = tieredDataKey(input.table, `${prefix}${input.newName()}-data`);
      const sizeBytes = await put(key, await dataFile(columns, rows, schema));
      dataFiles.push({ content: 0, path: uri(key), sizeBytes, records: rows.length, partition, equalityIds: [] });
    }
    if (deletes.length > 0) {
      const key = tieredDataKey(input.table, `${prefix}${input.newName()}-deletes`);
      const sizeBytes = await put(key, await equalityDeleteFile(keyColumns, deletes, keySchema));
      deleteFiles.push({ content: 2, path: uri(key), sizeBytes, records: deletes.length, partition, equalityIds: keyIds });
    }
  }

  const partitionField = definition.partitionBy === null ? null : { name: definition.partitionBy, type: partitionType(definition)! };
  const added: ManifestRecord[] = [];
  for (const [content, files] of [[0, dataFiles], [1, deleteFiles]] as const) {
    if (files.length === 0) continue;
    const key = tieredAvroKey(input.table, `${prefix}${input.newName()}-m${content}`);
    const lengthBytes = await put(key, manifestFile({ files, snapshotId: input.snapshotId, sequenceNumber: input.sequenceNumber, partition: partitionField, schema: icebergSchema(definition), partitionSpec: partitionSpec(definition) as { "spec-id": number; fields: unknown } }));
    added.push({
      path: uri(key),
      lengthBytes,
      content,
      sequenceNumber: input.sequenceNumber,
      snapshotId: input.snapshotId,
      files: files.length,
      rows: files.reduce((sum, file) => sum + file.records, 0),
    });
  }
  const listKey = tieredAvroKey(input.table, `${prefix}${input.newName()}-list`);
  await put(listKey, manifestList([...input.previousManifests, ...added], { snapshotId: input.snapshotId, parentSnapshotId: input.parentSnapshotId, sequenceNumber: input.sequenceNumber }));
  return {
    manifestList: uri(listKey),
    manifests: added,
    counts: {
      dataFiles: dataFiles.length,
      records: dataFiles.reduce((sum, file) => sum + file.records, 0),
      deleteFiles: deleteFiles.length,
      deletes: deleteFiles.reduce((sum, file) => sum + file.records, 0),
    },
  };
}

function icebergSchemaOf(columns: readonly TieredColumn[]): unknown {
  return { type: "struct", "schema-id": 0, fields: columns.map((c) => ({ id: c.id, name: c.name, required: c.required, type: c.type })) };
}

/** The rounds of each partition value, in the order the values first appear. */
function byPartition(buckets: RoundFilesInput["buckets"]): Map<string | number | null, BucketRound[]> {
  const groups = new Map<string | number | null, BucketRound[]>();
  for (const { partition, round } of buckets) groups.set(partition, [...(groups.get(partition) ?? []), round]);
  return groups;
}
