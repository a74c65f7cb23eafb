// The metadata state: registered nodes, streams, pending transfers and the coordinator lease, at a version
// (the index of the last log entry that changed it). Values are immutable; `apply` returns a new state that
// shares everything it did not touch. See docs/metadata-log.md for the rules that change it.
import { ChunkedMap } from "./chunked-map.ts";
import type { TableRecord } from "./table-records.ts";
import { MemoryStreamTable, type StreamTable } from "./stream-table.ts";
import type { StreamRecord } from "./stream-record.ts";
import { adjustOwned, type OwnedCounts } from "./node-counts.ts";

export type { Ownership, StreamConfig, StreamRecord } from "./stream-record.ts";

export interface NodeRecord {
  readonly id: string;
  /** Wall-clock ms at the node's start; only ever grows. */
  readonly epoch: number;
  /** Advertised address, e.g. `https://mink.example/n/<id>`. */
  readonly addr: string;
  /** Capacity weight for placement; 0 takes no new streams. */
  readonly slots: number;
  /** A draining node takes no new placements (a drain moves its streams away with transfers). */
  readonly draining: boolean;
  /**
   * Present while an incarnation the coordinator declared dead (at `epoch`) has not been taken over yet:
   * its WAL chain sealed and replayed into manifests by a claimer (docs/failover.md, "Takeover").
   */
  readonly dead?: DeadIncarnation;
  /** The highest declared-dead epoch of this node whose takeover completed (everything up to it is in manifests). */
  readonly takenOver?: number;
}

interface DeadIncarnation {
  /** The node epoch declared dead; the record's `epoch` was raised to epoch + 1, refusing its proposals. */
  readonly epoch: number;
  /** Who is taking it over, until when: others wait for the result; an expired claim may be taken again. */
  readonly claim?: { readonly by: string; readonly expiresAtMs: number };
}

export interface PendingTransfer {
  readonly source: string;
  readonly target: string;
}

export interface Lease {
  readonly holder: string;
  /** The holder's node epoch when it acquired the lease: a restarted holder must acquire again. */
  readonly holderEpoch: number;
  /** Bumped by every acquisition; fences a stale coordinator. */
  readonly coordinatorEpoch: number;
  readonly expiresAtMs: number;
}

export interface MetaState {
  /** Index of the last log entry applied that changed the state (0: empty log). */
  readonly version: number;
  /** The next stream id is `s<nextStreamSeq>`: ids are never reused, even after a delete. */
  readonly nextStreamSeq: number;
  readonly nodes: ReadonlyMap<string, NodeRecord>;
  /** Stream records, indexed by id, by name and by owner (stream-table.ts). */
  readonly streams: StreamTable;
  readonly transfers: ChunkedMap<PendingTransfer>;
  /** Derived: streams `placed` or `opened` on each node (what placement balances). */
  readonly assigned: ReadonlyMap<string, number>;
  /** Derived: what each node owns, table NC (node-counts.ts): GET /admin/nodes. */
  readonly owned: ReadonlyMap<string, OwnedCounts>;
  /** The last lease granted; it stays (expired) until the next acquisition, so coordinator epochs only grow. */
  readonly lease: Lease | null;
  /** Tables by name, with their buckets' leaders (docs/tables.md). */
  readonly tables: ReadonlyMap<string, TableRecord>;
}

/**
 * Declared dead at its current epoch and not registered again since: its streams are orphans. This stays
 * true once the takeover completes (dead cleared, takenOver = the dead epoch): the node is still gone, so
 * it is not declared dead again (at an epoch no incarnation ever had) and what is left on it still moves.
 */
export function isDeclaredDead(node: NodeRecord): boolean {
  const declaredAt = node.dead?.epoch ?? node.takenOver;
  return declaredAt !== undefined && node.epoch === declaredAt + 1;
}

export function emptyState(): MetaState {
  return {
    version: 0,
    nextStreamSeq: 1,
    nodes: new Map(),
    streams: MemoryStreamTable.empty(),
    transfers: ChunkedMap.empty(),
    assigned: new Map(),
    owned: new Map(),
    lease: null,
    tables: new Map(),
  };
}

export function streamIdFor(seq: number): string {
  return `s${seq}`;
}

/** Whether a stream counts toward its owner's load for placement. */
export function countsAsAssigned(stream: StreamRecord): boolean {
  return stream.owner !== null && (stream.ownership === "placed" || stream.ownership === "opened");
}

export function withNode(state: MetaState, node: NodeRecord): MetaState {
  const nodes = new Map(state.nodes);
  nodes.set(node.id, node);
  return { ...state, nodes };
}

/** Replaces (or removes, with `next` null) one stream, keeping the name index and the load counts right. */
export function withStream(state: MetaState, id: string, next: StreamRecord | null): MetaState {
  const previous = state.streams.get(id) ?? null;
  const assigned = adjustAssigned(state.assigned, previous, next);
  const owned = adjustOwned(state.owned, previous, next);
  return { ...state, streams: state.streams.with(id, next), assigned, owned };
}

function adjustAssigned(
  assigned: ReadonlyMap<string, number>,
  previous: StreamRecord | null,
  next: StreamRecord | null,
): ReadonlyMap<string, number> {
  const before = previous !== null && countsAsAssigned(previous) ? previous.owner : null;
  const after = next !== null && countsAsAssigned(next) ? next.owner : null;
  if (before === after) return assigned;
  const counts = new Map(assigned);
  if (before !== null) {
    const left = (counts.get(before) ?? 0) - 1;
    if (left > 0) counts.set(before, left);
    else counts.delete(before);
  }
  if (after !== null) counts.set(after, (counts.get(after) ?? 0) + 1);
  return counts;
}

/** Recounts `assigned` from the streams (snapshot decode; the property tests compare it to the kept one). */
export function countAssigned(streams: Iterable<StreamRecord>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const stream of streams) {
    if (countsAsAssigned(stream) && stream.owner !== null) counts.set(stream.owner, (counts.get(stream.owner) ?? 0) + 1);
  }
  return counts;
}
