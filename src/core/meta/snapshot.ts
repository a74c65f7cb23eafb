// Snapshots: the whole state as one JSON text, compact (records as tuples: about half the bytes of
// objects with keys), so MetaLog can bound its log. Decoding rebuilds the derived parts (the name index and
// the load counts) and checks the text is what encode wrote; a corrupt snapshot throws rather than loading
// a wrong state. encode(decode(text)) === text, and iteration order survives the round trip.
import { ChunkedMap } from "./chunked-map.ts";
import type { JsonObject } from "./json.ts";
import { countAssigned, type Lease, type MetaState, type NodeRecord, type Ownership, type PendingTransfer, type StreamRecord } from "./state.ts";

const SNAPSHOT_FORMAT = "mink-meta-snapshot/1";

const OWNERSHIPS: readonly Ownership[] = ["unplaced", "placed", "opened", "closed"];

type NodeTuple = [id: string, epoch: number, addr: string, slots: number, draining: 0 | 1];
type StreamTuple = [id: string, name: string, owner: string | null, epoch: number, ownership: number, config: JsonObject];
type TransferTuple = [streamId: string, source: string, target: string];
type LeaseTuple = [holder: string, holderEpoch: number, coordinatorEpoch: number, expiresAtMs: number];

interface SnapshotDocument {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  nextStreamSeq: number;
  nodes: NodeTuple[];
  streams: StreamTuple[];
  transfers: TransferTuple[];
  lease: LeaseTuple | null;
}

export function encodeSnapshot(state: MetaState): string {
  const document: SnapshotDocument = {
    format: SNAPSHOT_FORMAT,
    version: state.version,
    nextStreamSeq: state.nextStreamSeq,
    nodes: [...state.nodes.values()].map((n) => [n.id, n.epoch, n.addr, n.slots, n.draining ? 1 : 0]),
    streams: [],
    transfers: [],
    lease: state.lease === null ? null : [state.lease.holder, state.lease.holderEpoch, state.lease.coordinatorEpoch, state.lease.expiresAtMs],
  };
  for (const s of state.streams.values()) {
    document.streams.push([s.id, s.name, s.owner, s.epoch, OWNERSHIPS.indexOf(s.ownership), s.config]);
  }
  for (const [streamId, t] of state.transfers.entries()) document.transfers.push([streamId, t.source, t.target]);
  return JSON.stringify(document);
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
  const [id, name, owner, epoch, ownershipCode, config] = tuple(value, 6, "stream");
  const ownership = OWNERSHIPS[int(ownershipCode, "stream ownership")] ?? corrupt("stream ownership");
  if (owner !== null && typeof owner !== "string") corrupt("stream owner");
  if ((owner === null) !== (ownership === "unplaced")) corrupt("stream owner and ownership disagree");
  // JSON.parse only makes JSON values: an object here is a JSON object, no deeper check needed.
  if (typeof config !== "object" || config === null || Array.isArray(config)) corrupt("stream config");
  const record = { id: str(id, "stream id"), name: str(name, "stream name"), owner, epoch: int(epoch, "stream epoch"), ownership, config: config as JsonObject };
  return ownership === "closed" ? { ...record, closedAtEpoch: record.epoch } : record;
}

export function decodeSnapshot(text: string): MetaState {
  const document = JSON.parse(text) as Partial<Record<keyof SnapshotDocument, unknown>>;
  if (typeof document !== "object" || document === null || document.format !== SNAPSHOT_FORMAT) corrupt("format");
  const nodes = new Map<string, NodeRecord>();
  for (const value of list(document.nodes, "nodes")) {
    const [id, epoch, addr, slots, draining] = tuple(value, 5, "node");
    const node: NodeRecord = { id: str(id, "node id"), epoch: int(epoch, "node epoch"), addr: str(addr, "node addr"), slots: int(slots, "node slots"), draining: draining === 1 };
    nodes.set(node.id, node);
  }
  const streamRecords = list(document.streams, "streams").map(decodeStream);
  const streams = ChunkedMap.fromEntries(streamRecords.map((s) => [s.id, s] as const));
  const streamIdsByName = ChunkedMap.fromEntries(streamRecords.map((s) => [s.name, s.id] as const));
  if (streams.size !== streamRecords.length || streamIdsByName.size !== streamRecords.length) corrupt("duplicate stream id or name");
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
    streamIdsByName,
    transfers,
    assigned: countAssigned(streams.values()),
    lease,
  };
}
