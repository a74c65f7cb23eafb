// What each node owns, as `GET /admin/nodes` (and `mink nodes`, the status page) shows it. Table NC, for each
// stream record of the view with an owner:
//
// | #   | the stream                                        | counts as                                      |
// |-----|---------------------------------------------------|------------------------------------------------|
// | NC1 | has no owner (unplaced)                           | nothing                                        |
// | NC2 | is a table bucket (its name starts `__ds/table/`) | one of the owner's `tableBuckets`              |
// | NC3 | otherwise (a stream of the stream API)            | one of the owner's `streams`; also one of its `openedStreams` when opened |
//
// Table buckets are streams inside, but no stream listing shows them (stream-listing.ts, LS6): counting
// them as streams made the nodes' STREAMS add up to more than `mink streams --all` lists. `streams` and
// `tableBuckets` together are everything the node owns.
import { BUCKET_STREAM_PREFIX } from "../tables/bucketing.ts";
import type { Lease, MetaState, NodeRecord, StreamRecord } from "./state.ts";

export interface OwnedCounts {
  /** Streams of the stream API the node owns, in any ownership state. */
  readonly streams: number;
  /** Of those, the ones it serves at their current epoch. */
  readonly openedStreams: number;
  /** Table bucket streams the node owns (leads), in any ownership state. */
  readonly tableBuckets: number;
}

export const NO_OWNED: OwnedCounts = { streams: 0, openedStreams: 0, tableBuckets: 0 };

/** Table NC over every stream: the counts of each owner (nodes that own nothing are absent). */
export function ownedCountsByNode(streams: Iterable<Pick<StreamRecord, "name" | "owner" | "ownership">>): Map<string, OwnedCounts> {
  const counts = new Map<string, { streams: number; openedStreams: number; tableBuckets: number }>();
  for (const stream of streams) {
    if (stream.owner === null) continue; // NC1
    const count = counts.get(stream.owner) ?? { ...NO_OWNED };
    if (stream.name.startsWith(BUCKET_STREAM_PREFIX)) {
      count.tableBuckets++; // NC2
    } else {
      count.streams++; // NC3
      if (stream.ownership === "opened") count.openedStreams++;
    }
    counts.set(stream.owner, count);
  }
  return counts;
}

/** GET /admin/nodes: every node, the lease, and what each node owns (table NC over each node's streams). */
export interface NodesView {
  readonly version: number;
  /** By id. */
  readonly nodes: readonly NodeRecord[];
  readonly lease: Lease | null;
  /** Each node's counts; a node that owns nothing is absent. */
  readonly owned: readonly (readonly [string, OwnedCounts])[];
}

/** The nodes and their counts, reading each node's streams (the owner index), never the whole state at once. */
export function nodesView(state: MetaState): NodesView {
  const nodes = [...state.nodes.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const owned: (readonly [string, OwnedCounts])[] = [];
  for (const node of nodes) {
    const counts = ownedCountsByNode(state.streams.ownedBy(node.id)).get(node.id);
    if (counts !== undefined) owned.push([node.id, counts]);
  }
  return { version: state.version, nodes, lease: state.lease, owned };
}
