// The answers of mink's admin API as the CLI reads them (docs/operations.md): one type per endpoint's JSON
// body, the shapes the commands print. Types only; admin-client.ts fetches them.
interface NodeRow {
  id: string;
  epoch: number;
  address: string;
  slots: number;
  draining: boolean;
  live: boolean;
  /** Since the last heartbeat the metadata log saw (null: none since it started). */
  lastHeartbeatAgoMs: number | null;
  /** Whether it holds the coordinator lease. */
  coordinator: boolean;
  /** Its incarnation declared dead and not taken over yet, and who is taking it over. */
  declaredDead: { epoch: number; takeoverBy: string | null } | null;
  /** Streams of the stream API it owns (table buckets apart: `tableBuckets`). */
  streams: number;
  openedStreams: number;
  /** Table bucket streams it owns; absent from a server older than the split. */
  tableBuckets?: number;
}
export interface NodesAnswer {
  version: number;
  /** The coordinator lease: its holder and coordinator epoch (null: never granted). */
  coordinator: { holder: string; coordinatorEpoch: number; expired: boolean; expiresInMs: number } | null;
  nodes: NodeRow[];
}
export interface SlotsAnswer {
  node: { id: string; epoch: number; address: string; slots: number; draining: boolean };
}
export interface StreamAnswer {
  version: number;
  id: string;
  name: string;
  owner: string | null;
  ownerAddress: string | null;
  epoch: number;
  ownership: string;
  closedAtEpoch: number | null;
  pendingTransfer: null | { source: string; target: string; targetAddress: string | null };
  config: Record<string, unknown>;
}
/** One row of GET /admin/streams. */
export interface StreamRow {
  name: string;
  id: string;
  owner: string | null;
  ownerAddress: string | null;
  epoch: number;
  ownership: string;
  contentType: string | null;
  pendingTransfer: null | { source: string; target: string };
  /** From the owner node: null when the stream is not opened or the node did not answer. */
  tail: null | { offset: string; bytes: number; closed: boolean };
}
/** GET /admin/streams: one page by name; `next` is the `after` of the next page (null: the last one). */
export interface StreamsPage {
  version: number;
  streams: StreamRow[];
  next: string | null;
}
export interface TransferAnswer {
  stream: { id: string; name: string; owner: string | null; epoch: number; ownership: string };
  transfer: { source: string; target: string };
  alreadyPending: boolean;
}
interface TransferRow {
  streamId: string;
  name: string;
  source: string;
  target: string;
  epoch: number;
  ownership: string;
}
export interface TransfersAnswer {
  version: number;
  transfers: TransferRow[];
}
/** Why a drain cannot go on by itself (`reason` "unplaceable" or "refused"), in the server's words. */
interface DrainStalled {
  reason: string;
  streams: number;
  message: string;
}
/** POST /admin/nodes/:id/drain (started, or planned again). A server older than `incoming` sends only the first six. */
export interface DrainStarted {
  nodeId: string;
  draining: boolean;
  begun: number;
  unplaceable: number;
  remaining: number;
  transferring: number;
  /** Transfers pending to the node: they land on it, and the next drain moves them away. */
  incoming?: number;
  done?: boolean;
  stalled?: DrainStalled | null;
}
export interface DrainStatus {
  nodeId: string;
  draining: boolean;
  remaining: number;
  transferring: number;
  incoming?: number;
  done: boolean;
}
export interface RebalanceMove {
  streamId: string;
  name: string;
  from: string;
  to: string;
  /** "reassign" (an orphan: the coordinator re-leads it) or "transfer". */
  kind: string;
}
/** POST /admin/rebalance: one round's plan, what it began, and how far the cluster is. */
export interface RebalanceAnswer {
  dryRun: boolean;
  maxConcurrent: number;
  plan: {
    orphans: RebalanceMove[];
    moves: RebalanceMove[];
    meanLoad: number;
    bands: { above: number; below: number };
    unplaceable: number;
  };
  begun: RebalanceMove[];
  /** Transfers pending in the whole cluster after the round. */
  pending: number;
  done: boolean;
  version: number;
}
export interface Undrained {
  nodeId: string;
  draining: boolean;
  remaining: number;
  transferring: number;
}

/** POST /admin/tokens: the new token, shown once. */
export interface TokenCreated {
  id: string;
  token: string;
  /** ISO 8601. */
  expiresAt: string;
  prefixes: string[];
  ops: string[];
}
export interface TokenRow {
  id: string;
  prefixes: string[];
  ops: string[];
  issuedAt: string;
  expiresAt: string;
  revoked: boolean;
}
/** GET /admin/tokens: one page, oldest id first; `next` is the `after` of the next page (null: the last one). */
export interface TokensPage {
  tokens: TokenRow[];
  next: string | null;
}

/** GET /admin/tables: every table, its bucket count and kind. */
export interface TablesAnswer {
  /** `partitions`: how many a partitioned table has, null for a table without partitions. */
  /** `tiered`: the last tiering round recorded (docs/tiering.md); null: none; absent from older servers. */
  tables: Array<{ name: string; buckets: number; partitions?: number | null; kind: string; tiered?: { version: number; snapshotId: number; records: number; ageMs: number } | null }>;
}
/** One bucket of GET /admin/tables/<name>; `nextOffset` and `rows` are null when its leader did not answer. */
interface TableBucketRow {
  /** The partition's value, in a partitioned table only. */
  partition?: string | number;
  bucket: number;
  leader: string | null;
  leaderAddr: string | null;
  leaderEpoch: number | null;
  nextOffset: string | null;
  rows: number | null;
  /** The offset the newest committed snapshot covers (null: none yet). */
  snapshotOffset: string | null;
  /** Changelog records of the bucket in the tiered copy (docs/tiering.md); null when never tiered; absent from older servers. */
  tieredOffset?: number | null;
}
/** The tiered copy of GET /admin/tables/<name> (docs/tiering.md, "Lag"). */
interface TieredSummary {
  version: number;
  snapshotId: number | null;
  metadataKey: string;
  tieredAtMs: number | null;
  lagRecords: number | null;
  lagMs: number | null;
}
/** GET /admin/tables/<name>: the definition as the server keeps it (opaque here) and every bucket. */
export interface TableAnswer {
  name: string;
  definition: unknown;
  buckets: TableBucketRow[];
  /** Null: never tiered; absent from older servers. */
  tiered?: TieredSummary | null;
}
/** POST /admin/tables/<name>/snapshot: per bucket, the offset the new snapshot covers or why there is none. */
export interface TableSnapshotAnswer {
  table: string;
  buckets: Array<{ partition?: string | number; bucket: number; coveredOffset: string | null; error: string | null }>;
}

/** POST /admin/tables/<name>/tier (docs/tiering.md). */
export interface TableTierAnswer {
  table: string;
  snapshotId: number | null;
  committed: boolean;
  version: number;
  metadataKey: string;
  rows: number;
  deletes: number;
  /** More changelog than the round's budget: run again. */
  more: boolean;
  buckets: Array<{ partition: string | number | null; bucket: number; streamId: string; fromOffset: number; toOffset: number; error: string | null }>;
}
