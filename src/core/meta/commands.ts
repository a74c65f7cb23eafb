// Metadata commands and their results. A command is what goes into the log; `ApplyContext` carries the
// log entry's time (stamped by MetaLog when it accepted the proposal), so replay sees the same clock.
import type { DomainError } from "../errors.ts";
import type { JsonValue } from "./json.ts";
import type { Lease, NodeRecord, PendingTransfer, StreamConfig, StreamRecord } from "./state.ts";
import type { BucketRecord, BucketSnapshot, TableRecord, TieredRecord } from "./table-records.ts";

/** A node proposing a command names itself and its current epoch; a stale epoch is rejected. */
export interface Proposer {
  readonly nodeId: string;
  readonly nodeEpoch: number;
}

/** A command of the coordinator: the lease holder at its coordinator epoch (a stale coordinator is fenced). */
export interface Coordinator extends Proposer {
  readonly coordinatorEpoch: number;
}

export interface RegisterNode {
  readonly type: "RegisterNode";
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly addr: string;
  /** Defaults to the recorded value, or 1 for a new node. */
  readonly slots?: number;
}
export interface SetSlots {
  readonly type: "SetSlots";
  readonly nodeId: string;
  readonly slots: number;
  /** Absent for the admin API; present when a node proposes it. */
  readonly by?: Proposer;
}
export interface SetDraining {
  readonly type: "SetDraining";
  readonly nodeId: string;
  readonly draining: boolean;
  readonly by?: Proposer;
}
export interface CreateStream {
  readonly type: "CreateStream";
  readonly name: string;
  readonly config: StreamConfig;
  readonly by?: Proposer;
}
/**
 * CreateStream, PlaceStream and OpenStream in one entry, for the node a create arrived at (table CM): the
 * name registered, placed, and opened when placement chose the proposer. One round trip to the log where
 * there were three.
 */
export interface ClaimStream {
  readonly type: "ClaimStream";
  readonly name: string;
  readonly config: StreamConfig;
  readonly by: Proposer;
}
export interface DeleteStream {
  readonly type: "DeleteStream";
  readonly streamId: string;
  readonly by?: Proposer;
}
export interface PlaceStream {
  readonly type: "PlaceStream";
  readonly streamId: string;
  readonly by?: Proposer;
}
export interface OpenStream {
  readonly type: "OpenStream";
  readonly streamId: string;
  readonly nodeId: string;
  readonly nodeEpoch: number;
}
export interface CloseStream {
  readonly type: "CloseStream";
  readonly streamId: string;
  readonly nodeId: string;
  readonly nodeEpoch: number;
  /** The stream epoch the owner is closing (the one it opened at). */
  readonly epoch: number;
}
export interface BeginTransfer {
  readonly type: "BeginTransfer";
  readonly streamId: string;
  readonly target: string;
  readonly by?: Proposer;
}
export interface CompleteTransfer {
  readonly type: "CompleteTransfer";
  readonly streamId: string;
  /** The epoch the source closed the stream at; anything else is a stale completion. */
  readonly closedEpoch: number;
  readonly by?: Proposer;
}
export interface AcquireLease {
  readonly type: "AcquireLease";
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly ttlMs: number;
}
export interface RenewLease {
  readonly type: "RenewLease";
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly coordinatorEpoch: number;
  readonly ttlMs: number;
}

export interface DeclareDead {
  readonly type: "DeclareDead";
  readonly nodeId: string;
  /** The incarnation that stopped heartbeating. */
  readonly nodeEpoch: number;
  readonly coordinator: Coordinator;
}
export interface ReassignMove {
  readonly streamId: string;
  readonly target: string;
}
export interface ReassignStreams {
  readonly type: "ReassignStreams";
  /** At most MAX_REASSIGN_BATCH moves: a dead node with many streams takes many small entries. */
  readonly moves: readonly ReassignMove[];
  readonly coordinator: Coordinator;
}
export interface ClaimTakeover {
  readonly type: "ClaimTakeover";
  /** The dead node and the incarnation to take over. */
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly by: Proposer;
  /** How long the claim holds others off (they wait for its result, then may claim it themselves). */
  readonly ttlMs: number;
}
export interface CompleteTakeover {
  readonly type: "CompleteTakeover";
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly by: Proposer;
}

export interface CreateTable {
  readonly type: "CreateTable";
  readonly name: string;
  /** Validated by the caller (src/core/tables); the log keeps and compares it as opaque JSON. */
  readonly definition: JsonValue;
  /**
   * The leader of each bucket, computed by the coordinator: its length is the bucket count (1..1024), or 0
   * for a partitioned table, whose buckets come with its partitions (AddPartition).
   */
  readonly leaders: readonly string[];
  /** The configuration of every bucket stream (a JSON stream, chosen by the shell that knows the protocol). */
  readonly streamConfig: StreamConfig;
  readonly coordinator: Coordinator;
}
/** A new value of a partitioned table's partition column gets its own buckets, led by `leaders`. */
export interface AddPartition {
  readonly type: "AddPartition";
  readonly table: string;
  readonly value: string | number;
  /** The leader of each bucket of the partition: its length is the definition's bucket count. */
  readonly leaders: readonly string[];
  readonly streamConfig: StreamConfig;
  readonly coordinator: Coordinator;
}
export interface DropTable {
  readonly type: "DropTable";
  readonly name: string;
  readonly by?: Proposer;
}
/** A bucket's leader commits a snapshot it wrote, at the stream epoch it leads at: a stale leader is refused. */
/** The coordinator records a tiering round it committed (docs/tiering.md): what the table list shows. */
export interface RecordTiering {
  readonly type: "RecordTiering";
  readonly table: string;
  readonly tiered: TieredRecord;
  readonly coordinator: Coordinator;
}

export interface CommitBucketSnapshot {
  readonly type: "CommitBucketSnapshot";
  readonly table: string;
  readonly bucket: number;
  readonly streamId: string;
  /** The bucket stream's epoch the leader opened it at (the leader epoch). */
  readonly epoch: number;
  readonly snapshot: BucketSnapshot;
  readonly by: Proposer;
}

export type Command =
  | RegisterNode
  | SetSlots
  | SetDraining
  | CreateStream
  | ClaimStream
  | DeleteStream
  | PlaceStream
  | OpenStream
  | CloseStream
  | BeginTransfer
  | CompleteTransfer
  | AcquireLease
  | RenewLease
  | DeclareDead
  | ReassignStreams
  | ClaimTakeover
  | CompleteTakeover
  | CreateTable
  | AddPartition
  | DropTable
  | CommitBucketSnapshot
  | RecordTiering;

export type CommandType = Command["type"];

export const COMMAND_TYPES: readonly CommandType[] = [
  "RegisterNode",
  "SetSlots",
  "SetDraining",
  "CreateStream",
  "ClaimStream",
  "DeleteStream",
  "PlaceStream",
  "OpenStream",
  "CloseStream",
  "BeginTransfer",
  "CompleteTransfer",
  "AcquireLease",
  "RenewLease",
  "DeclareDead",
  "ReassignStreams",
  "ClaimTakeover",
  "CompleteTakeover",
  "CreateTable",
  "AddPartition",
  "DropTable",
  "CommitBucketSnapshot",
  "RecordTiering",
];

export interface ApplyContext {
  /** Wall-clock ms of the log entry (MetaLog's clock when it accepted the proposal). */
  readonly nowMs: number;
}

/** What an accepted command answers, per command type. */
export interface ValueOf {
  RegisterNode: { readonly node: NodeRecord };
  SetSlots: { readonly node: NodeRecord };
  SetDraining: { readonly node: NodeRecord };
  CreateStream: { readonly stream: StreamRecord };
  /** The record as the claim left it; `opened`: this entry opened it for the proposer (at epoch 1); the owner's record. */
  ClaimStream: { readonly stream: StreamRecord; readonly opened: boolean; readonly ownerNode: NodeRecord | null };
  /** The record as it was before the delete. */
  DeleteStream: { readonly stream: StreamRecord };
  PlaceStream: { readonly stream: StreamRecord };
  OpenStream: { readonly stream: StreamRecord };
  CloseStream: { readonly stream: StreamRecord };
  BeginTransfer: { readonly stream: StreamRecord; readonly transfer: PendingTransfer };
  CompleteTransfer: { readonly stream: StreamRecord };
  AcquireLease: { readonly lease: Lease };
  RenewLease: { readonly lease: Lease };
  DeclareDead: { readonly node: NodeRecord };
  /** The streams moved (a move whose stream is gone or no longer an orphan is skipped, listed in `skipped`). */
  ReassignStreams: { readonly streams: readonly StreamRecord[]; readonly skipped: readonly string[] };
  ClaimTakeover: { readonly node: NodeRecord };
  CompleteTakeover: { readonly node: NodeRecord };
  CreateTable: { readonly table: TableRecord };
  /** The table with the partition, and the partition's buckets (the existing ones for a repeat). */
  AddPartition: { readonly table: TableRecord; readonly buckets: readonly BucketRecord[] };
  /** The record as it was before the drop. */
  DropTable: { readonly table: TableRecord };
  /** The bucket with its kept snapshots, and the snapshots it no longer keeps (their parts may be collected). */
  CommitBucketSnapshot: { readonly bucket: BucketRecord; readonly dropped: readonly BucketSnapshot[] };
  RecordTiering: { readonly tiered: TieredRecord };
}

/** Accepted: `changed` is false for a no-op (a repeat, a race lost harmlessly); the state is then the same object. */
interface Accepted<V> {
  readonly ok: true;
  readonly changed: boolean;
  readonly value: V;
}
/** Rejected: the state is unchanged; `error.details` carries what the caller needs (current epoch, owner...). */
interface Rejected {
  readonly ok: false;
  readonly error: DomainError;
}
export type Result<V> = Accepted<V> | Rejected;

export type ResultOf<T extends CommandType> = Result<ValueOf[T]>;
export type AnyResult = ResultOf<CommandType>;

/** The command of one type, e.g. `CommandOf<"OpenStream">`. */
export type CommandOf<T extends CommandType> = Extract<Command, { readonly type: T }>;
