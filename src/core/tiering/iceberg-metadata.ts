// The Iceberg table metadata mink writes (format version 2, a file-based catalog: docs/tiering.md), and the
// commit rule of a tiering round (table TC). Pure: times, ids and the coordinator epoch are parameters.
// Each snapshot's summary records, per bucket stream, the changelog position and record offset it tiered
// up to (`mink.offsets`): the next round starts there, so a row is tiered exactly once. The metadata's
// `mink.coordinator-epoch` names the coordinator epoch that wrote it: a round commits only over a version
// of its own epoch, so a holder that lost the lease can never commit after the new holder wrote a version.
import type { TableDefinition } from "../tables/definition.ts";
import { icebergSchema, partitionSpec, PARTITION_FIELD_ID, tieredColumns } from "./iceberg-schema.ts";

/** Where a bucket's changelog was tiered up to: the stream's byte position and the record offset there. */
export interface TieredPosition {
  readonly position: number;
  readonly offset: number;
}

/** By bucket stream id. */
export type TieredOffsets = Readonly<Record<string, TieredPosition>>;

interface IcebergSnapshot {
  readonly "snapshot-id": number;
  readonly "parent-snapshot-id"?: number;
  readonly "sequence-number": number;
  readonly "timestamp-ms": number;
  readonly "manifest-list": string;
  readonly summary: Readonly<Record<string, string>>;
  readonly "schema-id": number;
}

export interface IcebergMetadata {
  readonly "format-version": 2;
  readonly "table-uuid": string;
  readonly location: string;
  readonly "last-sequence-number": number;
  readonly "last-updated-ms": number;
  readonly "last-column-id": number;
  readonly "current-schema-id": number;
  readonly schemas: readonly unknown[];
  readonly "default-spec-id": number;
  readonly "partition-specs": readonly unknown[];
  readonly "last-partition-id": number;
  readonly "default-sort-order-id": number;
  readonly "sort-orders": readonly unknown[];
  readonly properties: Readonly<Record<string, string>>;
  readonly "current-snapshot-id"?: number;
  readonly snapshots: readonly IcebergSnapshot[];
  readonly "snapshot-log": readonly { readonly "snapshot-id": number; readonly "timestamp-ms": number }[];
  readonly refs: Readonly<Record<string, { readonly "snapshot-id": number; readonly type: "branch" }>>;
}

const EPOCH_PROPERTY = "mink.coordinator-epoch";
const OFFSETS_SUMMARY = "mink.offsets";

/**
 * MD6: a table UUID in the standard form (8-4-4-4-12, version 4, RFC 4122 variant) from 32 random hex digits:
 * engines parse `table-uuid` as a UUID.
 */
export function tableUuidOf(hex32: string): string {
  if (!/^[0-9a-f]{32}$/.test(hex32)) throw new Error(`not 32 hex digits: ${hex32}`);
  const variant = ((Number.parseInt(hex32[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex32.slice(0, 8)}-${hex32.slice(8, 12)}-4${hex32.slice(13, 16)}-${variant}${hex32.slice(17, 20)}-${hex32.slice(20, 32)}`;
}

/** MD1: the first version of a tiered table: its schema and partition spec, no snapshot, the creator's epoch. */
export function newTableMetadata(input: { definition: TableDefinition; location: string; tableUuid: string; nowMs: number; coordinatorEpoch: number }): IcebergMetadata {
  const { definition } = input;
  return {
    "format-version": 2,
    "table-uuid": input.tableUuid,
    location: input.location,
    "last-sequence-number": 0,
    "last-updated-ms": input.nowMs,
    "last-column-id": tieredColumns(definition).length,
    "current-schema-id": 0,
    schemas: [icebergSchema(definition)],
    "default-spec-id": 0,
    "partition-specs": [partitionSpec(definition)],
    "last-partition-id": definition.partitionBy === null ? PARTITION_FIELD_ID - 1 : PARTITION_FIELD_ID,
    "default-sort-order-id": 0,
    "sort-orders": [{ "order-id": 0, fields: [] }],
    properties: { [EPOCH_PROPERTY]: String(input.coordinatorEpoch), "write.format.default": "parquet" },
    snapshots: [],
    "snapshot-log": [],
    refs: {},
  };
}

/** A manifest a snapshot added: what its manifest-list entry says (a snapshot's list is every one up to it). */
export interface ManifestRecord {
  readonly path: string;
  readonly lengthBytes: number;
  /** 0: data files, 1: delete files. */
  readonly content: 0 | 1;
  readonly sequenceNumber: number;
  readonly snapshotId: number;
  readonly files: number;
  readonly rows: number;
}

const MANIFESTS_SUMMARY = "mink.manifests";

/** What a round adds, for the snapshot's summary. */
export interface RoundCounts {
  readonly dataFiles: number;
  readonly records: number;
  readonly deleteFiles: number;
  readonly deletes: number;
}

/**
 * MD2: the next version with a new snapshot: the next sequence number, the round's manifest list, the
 * offsets it tiered up to (every bucket's, not only those that moved), and the committer's epoch.
 */
export function withSnapshot(
  metadata: IcebergMetadata,
  input: { snapshotId: number; manifestList: string; manifests: readonly ManifestRecord[]; nowMs: number; offsets: TieredOffsets; counts: RoundCounts; coordinatorEpoch: number },
): IcebergMetadata {
  const sequenceNumber = metadata["last-sequence-number"] + 1;
  const parent = metadata["current-snapshot-id"];
  const { counts } = input;
  const snapshot: IcebergSnapshot = {
    "snapshot-id": input.snapshotId,
    ...(parent === undefined ? {} : { "parent-snapshot-id": parent }),
    "sequence-number": sequenceNumber,
    "timestamp-ms": input.nowMs,
    "manifest-list": input.manifestList,
    summary: {
      operation: counts.deleteFiles > 0 ? "overwrite" : "append",
      "added-data-files": String(counts.dataFiles),
      "added-records": String(counts.records),
      "added-delete-files": String(counts.deleteFiles),
      "added-equality-delete-files": String(counts.deleteFiles),
      "added-equality-deletes": String(counts.deletes),
      [OFFSETS_SUMMARY]: JSON.stringify(input.offsets),
      [MANIFESTS_SUMMARY]: JSON.stringify(input.manifests),
      [EPOCH_PROPERTY]: String(input.coordinatorEpoch),
    },
    "schema-id": 0,
  };
  return {
    ...metadata,
    "last-sequence-number": sequenceNumber,
    "last-updated-ms": input.nowMs,
    properties: { ...metadata.properties, [EPOCH_PROPERTY]: String(input.coordinatorEpoch) },
    "current-snapshot-id": input.snapshotId,
    snapshots: [...metadata.snapshots, snapshot],
    "snapshot-log": [...metadata["snapshot-log"], { "snapshot-id": input.snapshotId, "timestamp-ms": input.nowMs }],
    refs: { ...metadata.refs, main: { "snapshot-id": input.snapshotId, type: "branch" } },
  };
}

/** MD3: the same table state under a newer coordinator epoch (the fence version a new holder writes first). */
export function withEpoch(metadata: IcebergMetadata, coordinatorEpoch: number, nowMs: number): IcebergMetadata {
  return { ...metadata, "last-updated-ms": nowMs, properties: { ...metadata.properties, [EPOCH_PROPERTY]: String(coordinatorEpoch) } };
}

/** The epoch that wrote this version (0 when it names none: not written by mink). */
function metadataEpoch(metadata: IcebergMetadata): number {
  const epoch = Number(metadata.properties[EPOCH_PROPERTY]);
  return Number.isSafeInteger(epoch) && epoch > 0 ? epoch : 0;
}

/** MD4: the current snapshot's offsets, by bucket stream id ({} before the first snapshot). */
export function tieredOffsetsOf(metadata: IcebergMetadata): TieredOffsets {
  const current = metadata.snapshots.find((snapshot) => snapshot["snapshot-id"] === metadata["current-snapshot-id"]);
  const text = current?.summary[OFFSETS_SUMMARY];
  if (text === undefined) return {};
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
  const offsets: Record<string, TieredPosition> = {};
  for (const [streamId, value] of Object.entries(parsed as Record<string, unknown>)) {
    const { position, offset } = (value ?? {}) as { position?: unknown; offset?: unknown };
    if (Number.isSafeInteger(position) && Number.isSafeInteger(offset)) offsets[streamId] = { position: position as number, offset: offset as number };
  }
  return offsets;
}

/**
 * MD5: every manifest of the current snapshot's table state, oldest first: those each snapshot of its
 * ancestry added (`mink.manifests`). A round's manifest list is these and its own, so mink never reads an
 * Avro file back.
 */
export function currentManifests(metadata: IcebergMetadata): ManifestRecord[] {
  const byId = new Map(metadata.snapshots.map((snapshot) => [snapshot["snapshot-id"], snapshot]));
  const chain: IcebergSnapshot[] = [];
  for (let id = metadata["current-snapshot-id"]; id !== undefined; ) {
    const snapshot = byId.get(id);
    if (snapshot === undefined) break;
    chain.unshift(snapshot);
    id = snapshot["parent-snapshot-id"];
  }
  return chain.flatMap((snapshot) => {
    const text = snapshot.summary[MANIFESTS_SUMMARY];
    if (text === undefined) throw new Error(`snapshot ${snapshot["snapshot-id"]} was not written by mink: it lists no manifests`);
    return JSON.parse(text) as ManifestRecord[];
  });
}

/** The next step of a round at `coordinatorEpoch`, given the latest committed version (table TC). */
export type CommitStep =
  /** TC1: no table yet: write version 1 (the schema, no snapshot) at this epoch. */
  | { readonly kind: "create" }
  /** TC2: the latest version is of an older epoch: write the same state at this epoch first (the fence). */
  | { readonly kind: "fence" }
  /** TC3: the latest version is this epoch's: commit the round as the next version. */
  | { readonly kind: "commit" }
  /** TC4: a newer coordinator epoch wrote the latest version: this holder lost the lease; change nothing. */
  | { readonly kind: "fenced"; readonly latestEpoch: number };

export function commitStep(latest: IcebergMetadata | null, coordinatorEpoch: number): CommitStep {
  if (latest === null) return { kind: "create" };
  const latestEpoch = metadataEpoch(latest);
  if (latestEpoch > coordinatorEpoch) return { kind: "fenced", latestEpoch };
  return latestEpoch < coordinatorEpoch ? { kind: "fence" } : { kind: "commit" };
}
