// Snapshots: the whole state as one JSON text, compact (records as tuples: about half the bytes of
// objects with keys), so MetaLog can bound its log. Decoding rebuilds the derived parts (the name index and
// the load counts) and checks the text is what encode wrote; a corrupt snapshot throws rather than loading
// a wrong state. encode(decode(text)) === text, and iteration order survives the round trip.
import { ChunkedMap } from "./chunked-map.ts";
import { MemoryStreamTable } from "./stream-table.ts";
import { ownedCountsByNode } from "./node-counts.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import type { BucketRecord, BucketSnapshot, TableRecord } from "./table-records.ts";
import { countAssigned, type Lease, type MetaState, type NodeRecord, type Ownership, type PendingTransfer, type StreamRecord } from "./state.ts";

const SNAPSHOT_FORMAT = "mink-meta-snapshot/1";

const OWNERSHIPS: readonly Ownership[] = ["unplaced", "placed", "opened", "closed"];

/** The failover fields ride in two optional trailing elements, written only when present. */
type DeadTuple = [epoch: number, claimBy: string | null, claimExpiresAtMs: number];
type NodeTuple =
  | [id: string, epoch: number, addr: string, slots: number, draining: 0 | 1]
  | [id: string, epoch: number, addr: string, slots: number, draining: 0 | 1, takenOver: number | null, dead: DeadTuple | null];
type StreamTuple =
  | [id: string, name: string, owner: string | null, epoch: number, ownership: number, config: JsonObject]
  | [id: string, name: string, owner: string | null, epoch: number, ownership: number, config: JsonObject, orphanOf: [string, number]];
type TransferTuple = [streamId: string, source: string, target: string];
type SnapshotTuple = [key: string, coveredOffset: number, coveredPosition: number, rows: number, bytes: number];
/** Buckets in bucket order, so the bucket number is the index; the stream record holds leader and epoch. */
/** The partition's value is third in a partitioned table's buckets, left out otherwise. */
type BucketTuple = [streamId: string, snapshots: SnapshotTuple[], partition?: string | number];
/** The tiering record (RecordTiering), fourth, once a round was recorded. */
type TieredTuple = [version: number, snapshotId: number, tieredAtMs: number, records: number];
type TableTuple = [name: string, definition: JsonValue, buckets: BucketTuple[], tiered?: TieredTuple];
type LeaseTuple = [holder: string, holderEpoch: number, coordinatorEpoch: number, expiresAtMs: number];

interface SnapshotDocument {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  nextStreamSeq: number;
  nodes: NodeTuple[];
  streams: StreamTuple[];
  transfers: TransferTuple[];
  lease: LeaseTuple | null;
  /** Written only when there are tables, so a snapshot from before tables encodes back to the same text. */
  tables?: TableTuple[];
}

export function encodeSnapshot(state: MetaState): string {
  const document: SnapshotDocument = {
    format: SNAPSHOT_FORMAT,
    version: state.version,
    nextStreamSeq: state.nextStreamSeq,
    nodes: [...state.nodes.values()].map(encodeNode),
    streams: [],
    transfers: [],
    lease: state.lease === null ? null : [state.lease.holder, state.lease.holderEpoch, state.lease.coordinatorEpoch, state.lease.expiresAtMs],
  };
  for (const s of state.streams.values()) {
    const base: StreamTuple = [s.id, s.name, s.owner, s.epoch, OWNERSHIPS.indexOf(s.ownership), s.config];
    document.streams.push(s.orphanOf === undefined ? base : [...base, [s.orphanOf.node, s.orphanOf.nodeEpoch]]);
  }
  for (const [streamId, t] of state.transfers.entries()) document.transfers.push([streamId, t.source, t.target]);
  if (state.tables.size > 0) {
    document.tables = [...state.tables.values()].map((t): TableTuple => {
      const encoded: TableTuple = [t.name, t.definition, t.buckets.map(encodeBucket)];
      if (t.tiered !== undefined) encoded.push([t.tiered.version, t.tiered.snapshotId, t.tiered.tieredAtMs, t.tiered.records]);
      return encoded;
    });
  }
  return JSON.stringify(document);
}

function encodeNode(n: NodeRecord): NodeTuple {
  const base: NodeTuple = [n.id, n.epoch, n.addr, n.slots, n.draining ? 1 : 0];
  if (n.takenOver === undefined && n.dead === undefined) return base;
  const dead: DeadTuple | null = n.dead === undefined ? null : [n.dead.epoch, n.dead.claim?.by ?? null, n.dead.claim?.expiresAtMs ?? 0];
  return [...base, n.takenOver ?? null, dead];
}

function decodeNode(value: unknown): NodeRecord {
  if (!Array.isArray(value) || (value.length !== 5 && value.length !== 7)) corrupt("node");
  const [id, epoch, addr, slots, draining, takenOver, dead] = value as unknown[];
  const node: NodeRecord = { id: str(id, "node id"), epoch: int(epoch, "node epoch"), addr: str(addr, "node addr"), slots: int(slots, "node slots"), draining: draining === 1 };
  if (value.length === 5) return node;
  const withTakenOver = takenOver === null ? node : { ...node, takenOver: int(takenOver, "node takenOver") };
  if (dead === null) return withTakenOver;
  const [deadEpoch, claimBy, claimExpiresAtMs] = tuple(dead, 3, "node dead");
  const claim = claimBy === null ? undefined : { by: str(claimBy, "claim by"), expiresAtMs: int(claimExpiresAtMs, "claim expiry") };
  return { ...withTakenOver, dead: claim === undefined ? { epoch: int(deadEpoch, "dead epoch") } : { epoch: int(deadEpoch, "dead epoch"), claim } };
}

function corrupt(what: string): never {
  throw new Error(`corrupt metadata snapshot: ${what}`);
}

function int(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) corrupt(what);
  return value;
}

function str(value: unknown, what: string): string {
  if (typeof value !== "string") corrupt(what);
  return value;
}

function tuple(value: unknown, length: number, what: string): unknown[] {
  if (!Array.isArray(value) || value.length !== length) corrupt(what);
  return value as unknown[];
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) corrupt(what);
  return value as unknown[];
}

function decodeStream(value: unknown): StreamRecord {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 7)) corrupt("stream");
  const [id, name, owner, epoch, ownershipCode, config, orphan] = value as unknown[];
  const ownership = OWNERSHIPS[int(ownershipCode, "stream ownership")] ?? corrupt("stream ownership");
  if (owner !== null && typeof owner !== "string") corrupt("stream owner");
  if ((owner === null) !== (ownership === "unplaced")) corrupt("stream owner and ownership disagree");
  // JSON.parse only makes JSON values: an object here is a JSON object, no deeper check needed.
  if (typeof config !== "object" || config === null || Array.isArray(config)) corrupt("stream config");
  const plain = { id: str(id, "stream id"), name: str(name, "stream name"), owner, epoch: int(epoch, "stream epoch"), ownership, config: config as JsonObject };
  let record: StreamRecord = plain;
  if (orphan !== undefined) {
    const [node, nodeEpoch] = tuple(orphan, 2, "stream orphanOf");
    record = { ...plain, orphanOf: { node: str(node, "orphan node"), nodeEpoch: int(nodeEpoch, "orphan epoch") } };
  }
  return ownership === "closed" ? { ...record, closedAtEpoch: record.epoch } : record;
}

function decodeBucketSnapshot(value: unknown): BucketSnapshot {
  const [key, coveredOffset, coveredPosition, rows, bytes] = tuple(value, 5, "bucket snapshot");
  return {
    key: str(key, "snapshot key"),
    coveredOffset: int(coveredOffset, "snapshot offset"),
    coveredPosition: int(coveredPosition, "snapshot position"),
    rows: int(rows, "snapshot rows"),
    bytes: int(bytes, "snapshot bytes"),
  };
}

/** `[streamId, snapshots]`, and the partition's value third in a partitioned table. */
function encodeBucket(b: BucketRecord): BucketTuple {
  const snapshots = b.snapshots.map((n): SnapshotTuple => [n.key, n.coveredOffset, n.coveredPosition, n.rows, n.bytes]);
  return b.partition === null ? [b.streamId, snapshots] : [b.streamId, snapshots, b.partition];
}

function decodeTable(value: unknown): TableRecord {
  const fields = list(value, "table");
  if (fields.length !== 3 && fields.length !== 4) corrupt("table");
  const [name, definition, buckets, tiered] = fields;
  if (definition === undefined) corrupt("table definition");
  // A bucket's number is its place in its partition: buckets are kept partition after partition, in order.
  const seen = new Map<string, number>();
  const records = list(buckets, "table buckets").map((bucket): BucketRecord => {
    const fields = list(bucket, "table bucket");
    if (fields.length !== 2 && fields.length !== 3) corrupt("table bucket");
    const [streamId, snapshots, partitionField] = fields;
    const partition = partitionField === undefined ? null : partitionValue(partitionField);
    const key = partition === null ? "" : `${typeof partition}:${partition}`;
    const index = seen.get(key) ?? 0;
    seen.set(key, index + 1);
    return { partition, bucket: index, streamId: str(streamId, "bucket stream"), snapshots: list(snapshots, "bucket snapshots").map(decodeBucketSnapshot) };
  });
  const table: TableRecord = { name: str(name, "table name"), definition: definition as JsonValue, buckets: records };
  if (tiered === undefined) return table;
  const [version, snapshotId, tieredAtMs, recordCount] = tuple(tiered, 4, "table tiered");
  return { ...table, tiered: { version: int(version, "tiered version"), snapshotId: int(snapshotId, "tiered snapshot"), tieredAtMs: int(tieredAtMs, "tiered time"), records: int(recordCount, "tiered records") } };
}

function partitionValue(value: unknown): string | number {
  if (typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value))) return value;
  return corrupt("bucket partition");
}

export function decodeSnapshot(text: string): MetaState {
  const document = JSON.parse(text) as Partial<Record<keyof SnapshotDocument, unknown>>;
  if (typeof document !== "object" || document === null || document.format !== SNAPSHOT_FORMAT) corrupt("format");
  const nodes = new Map<string, NodeRecord>();
  for (const value of list(document.nodes, "nodes")) {
    const node = decodeNode(value);
    nodes.set(node.id, node);
  }
  const streamRecords = list(document.streams, "streams").map(decodeStream);
  const streams = MemoryStreamTable.of(streamRecords) ?? corrupt("duplicate stream id or name");
  const transfers = ChunkedMap.fromEntries<PendingTransfer>(
    list(document.transfers, "transfers").map((value) => {
      const [streamId, source, target] = tuple(value, 3, "transfer");
      return [str(streamId, "transfer stream"), { source: str(source, "transfer source"), target: str(target, "transfer target") }] as const;
    }),
  );
  let lease: Lease | null = null;
  if (document.lease !== null) {
    const [holder, holderEpoch, coordinatorEpoch, expiresAtMs] = tuple(document.lease, 4, "lease");
    lease = {
      holder: str(holder, "lease holder"),
      holderEpoch: int(holderEpoch, "lease holder epoch"),
      coordinatorEpoch: int(coordinatorEpoch, "coordinator epoch"),
      expiresAtMs: int(expiresAtMs, "lease expiry"),
    };
  }
  return {
    version: int(document.version, "version"),
    nextStreamSeq: int(document.nextStreamSeq, "nextStreamSeq"),
    nodes,
    streams,
    transfers,
    assigned: countAssigned(streams.values()),
    owned: ownedCountsByNode(streams.values()),
    lease,
    tables: new Map(document.tables === undefined ? [] : list(document.tables, "tables").map(decodeTable).map((t) => [t.name, t] as const)),
  };
}
