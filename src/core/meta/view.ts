// The published view: what nodes and the router read. It is versioned by the log index; a watcher asks for
// what changed since a version and gets the current records of what changed (not the commands), so it
// never has to understand the log. Pending transfers are inlined into their stream's record.
import type { AnyResult, Command } from "./commands.ts";
import { takeoverGate } from "./failover-rules.ts";
import { leastLoaded } from "./placement.ts";
import type { Lease, MetaState, NodeRecord, PendingTransfer, StreamRecord } from "./state.ts";
import type { TableRecord } from "./table-records.ts";
import type { OwnedCounts } from "./node-counts.ts";

export interface StreamView extends StreamRecord {
  /** Present while a transfer is pending: route to `target`. */
  readonly transfer?: PendingTransfer;
}

export interface MetaView {
  readonly version: number;
  /** Sorted by id. */
  readonly nodes: readonly NodeRecord[];
  /** In the state's internal order (deterministic, unspecified). */
  readonly streams: readonly StreamView[];
  readonly lease: Lease | null;
}

export type StreamQuery = { readonly id: string } | { readonly name: string };

export interface StreamLookup {
  readonly version: number;
  /** Null when no stream has that id or name. */
  readonly stream: StreamView | null;
  /** The owner's record (for its address), when the stream has an owner. */
  readonly ownerNode: NodeRecord | null;
  /** The transfer target's record, while a transfer is pending. */
  readonly targetNode: NodeRecord | null;
  /** The stream waits for the takeover of a dead incarnation (table OS, row OS3b): nobody can serve it yet. */
  readonly takeoverPending?: true;
  /** No such stream: the ids of the nodes a placement would choose among now (placement.ts, leastLoaded). */
  readonly placeAmong?: readonly string[];
}

/** Which records one accepted command touched. Kept with each log entry so watch can answer from the log. */
export interface Touched {
  readonly nodes?: readonly string[];
  readonly streams?: readonly string[];
  readonly lease?: true;
  readonly tables?: readonly string[];
}

export type ViewChanges =
  | {
      readonly full: false;
      readonly since: number;
      readonly version: number;
      /** Current records of the nodes that changed since `since`, by id. */
      readonly nodes: readonly NodeRecord[];
      /** Current records of the streams that changed since `since`. */
      readonly streams: readonly StreamView[];
      /** Streams that changed and no longer exist (deleted). */
      readonly removedStreamIds: readonly string[];
      /** The lease when it changed since `since`, otherwise omitted. */
      readonly lease?: Lease | null;
    }
  | {
      /** `since` is older than the retained log (or from another history): here is everything. */
      readonly full: true;
      readonly since: number;
      readonly version: number;
      readonly view: MetaView;
    };

function byId<T extends { readonly id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function streamView(state: MetaState, stream: StreamRecord): StreamView {
  const transfer = state.transfers.get(stream.id);
  return transfer === undefined ? stream : { ...stream, transfer };
}

export function fullView(state: MetaState): MetaView {
  const streams: StreamView[] = [];
  for (const stream of state.streams.values()) streams.push(streamView(state, stream));
  return { version: state.version, nodes: [...state.nodes.values()].sort(byId), streams, lease: state.lease };
}

export function lookupStream(state: MetaState, query: StreamQuery): StreamLookup {
  const id = "id" in query ? query.id : state.streams.idByName(query.name);
  const record = id === undefined ? undefined : state.streams.get(id);
  if (record === undefined) return { version: state.version, stream: null, ownerNode: null, targetNode: null, placeAmong: leastLoaded(state).map((node) => node.id) };
  const stream = streamView(state, record);
  const lookup: StreamLookup = {
    version: state.version,
    stream,
    ownerNode: record.owner === null ? null : (state.nodes.get(record.owner) ?? null),
    targetNode: stream.transfer === undefined ? null : (state.nodes.get(stream.transfer.target) ?? null),
  };
  return takeoverGate(state, record) === null ? lookup : { ...lookup, takeoverPending: true };
}

/** What an accepted command touched (its result names a created stream's new id). */
export function touchedBy(command: Command, result: AnyResult): Touched {
  switch (command.type) {
    case "RegisterNode":
    case "SetSlots":
    case "SetDraining":
    case "DeclareDead":
    case "ClaimTakeover":
    case "CompleteTakeover":
      return { nodes: [command.nodeId] };
    case "ReassignStreams":
      return result.ok && "streams" in result.value ? { streams: result.value.streams.map((stream) => stream.id) } : {};
    case "CreateStream":
    case "ClaimStream":
      return result.ok && "stream" in result.value ? { streams: [result.value.stream.id] } : {};
    case "DeleteStream":
    case "PlaceStream":
    case "OpenStream":
    case "CloseStream":
    case "BeginTransfer":
    case "CompleteTransfer":
      return { streams: [command.streamId] };
    case "AcquireLease":
    case "RenewLease":
      return { lease: true };
    case "CreateTable":
    case "DropTable":
      // Bucket streams are streams: the leaders learn of them (and of their removal) as of any stream.
      return result.ok && "table" in result.value
        ? { tables: [command.name], streams: result.value.table.buckets.map((bucket) => bucket.streamId) }
        : { tables: [command.name] };
    case "AddPartition":
      return result.ok && "buckets" in result.value
        ? { tables: [command.table], streams: result.value.buckets.map((bucket) => bucket.streamId) }
        : { tables: [command.table] };
    case "CommitBucketSnapshot":
    case "RecordTiering":
      return { tables: [command.table] };
  }
}

/** The changes from the touched sets of the entries after `since` (all of them, in any order). */
/** A watch's answer within the retained log: the records touched since. */
export type ViewDelta = Extract<ViewChanges, { readonly full: false }>;

export function changesSince(state: MetaState, since: number, touched: Iterable<Touched>): ViewDelta {
  const nodeIds = new Set<string>();
  const streamIds = new Set<string>();
  let lease = false;
  for (const entry of touched) {
    for (const id of entry.nodes ?? []) nodeIds.add(id);
    for (const id of entry.streams ?? []) streamIds.add(id);
    if (entry.lease === true) lease = true;
  }
  const nodes: NodeRecord[] = [];
  for (const id of nodeIds) {
    const node = state.nodes.get(id);
    if (node !== undefined) nodes.push(node);
  }
  const streams: StreamView[] = [];
  const removedStreamIds: string[] = [];
  for (const id of streamIds) {
    const stream = state.streams.get(id);
    if (stream === undefined) removedStreamIds.push(id);
    else streams.push(streamView(state, stream));
  }
  const base = { full: false as const, since, version: state.version, nodes: nodes.sort(byId), streams, removedStreamIds };
  return lease ? { ...base, lease: state.lease } : base;
}

export function fullChanges(state: MetaState, since: number): ViewChanges {
  return { full: true, since, version: state.version, view: fullView(state) };
}

/** The tables, sorted by name (bounded by MAX_TABLES). */
export function tablesOf(state: MetaState): readonly TableRecord[] {
  return [...state.tables.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One bucket as the router and the nodes route it: its stream (owner = leader, epoch = leader epoch). */
interface BucketView {
  /** The partition's value; null for a table without partitions. */
  readonly partition: string | number | null;
  readonly bucket: number;
  readonly streamId: string;
  readonly stream: StreamView | null;
  /** The leader's record (for its address), when the stream has an owner. */
  readonly leaderNode: NodeRecord | null;
  readonly snapshots: TableRecord["buckets"][number]["snapshots"];
}

export interface TableLookup {
  readonly version: number;
  /** Null when no table has that name. */
  readonly table: { readonly name: string; readonly definition: TableRecord["definition"] } | null;
  readonly buckets: readonly BucketView[];
}

/** GET /v1/table: every table with its bucket count (of all its partitions) and its partition count. */
export interface TableListing {
  readonly version: number;
  readonly tables: readonly {
    readonly name: string;
    readonly definition: TableRecord["definition"];
    readonly buckets: number;
    readonly partitions: number;
    /** The last tiering round the coordinator recorded (RecordTiering), or null. */
    readonly tiered: TableRecord["tiered"] | null;
  }[];
}

export function lookupTable(state: MetaState, name: string): TableLookup {
  const table = state.tables.get(name);
  if (table === undefined) return { version: state.version, table: null, buckets: [] };
  const buckets = table.buckets.map((bucket): BucketView => {
    const record = state.streams.get(bucket.streamId);
    const owner = record?.owner ?? null;
    return {
      partition: bucket.partition,
      bucket: bucket.bucket,
      streamId: bucket.streamId,
      stream: record === undefined ? null : streamView(state, record),
      leaderNode: owner === null ? null : (state.nodes.get(owner) ?? null),
      snapshots: bucket.snapshots,
    };
  });
  return { version: state.version, table: { name: table.name, definition: table.definition }, buckets };
}

/** GET /admin/nodes: every node, the lease, and what each node owns (table NC, kept by the state). */
export interface NodesView {
  readonly version: number;
  /** By id. */
  readonly nodes: readonly NodeRecord[];
  readonly lease: Lease | null;
  /** Each node's counts; a node that owns nothing is absent. */
  readonly owned: readonly (readonly [string, OwnedCounts])[];
}

export function nodesView(state: MetaState): NodesView {
  return { version: state.version, nodes: [...state.nodes.values()].sort(byId), lease: state.lease, owned: [...state.owned] };
}
