// What each node owns, as `GET /admin/nodes` (and `mink nodes`, the status page) shows it. Table NC, for each
// stream record of the view with an owner:
//
// | #   | the stream                                        | counts as                                      |
// |-----|---------------------------------------------------|------------------------------------------------|
// | NC1 | has no owner (unplaced)                           | nothing                                        |
// | NC2 | is a table bucket (its name starts `__ds/table/`) | one of the owner's `tableBuckets`              |
// | NC3 | otherwise (a stream of the stream API)            | one of the owner's `streams`; also one of its `openedStreams` when opened |
//
// The state keeps these counts as it changes (`adjustOwned`, from withStream), so GET /admin/nodes reads
// them instead of every record.
// Table buckets are streams inside, but no stream listing shows them (stream-listing.ts, LS6): counting
// them as streams made the nodes' STREAMS add up to more than `mink streams --all` lists. `streams` and
// `tableBuckets` together are everything the node owns.
import { BUCKET_STREAM_PREFIX } from "../tables/bucketing.ts";
import type { StreamRecord } from "./stream-record.ts";

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


type Counted = Pick<StreamRecord, "name" | "owner" | "ownership">;

/** `owned` with `previous` replaced by `next` (null: absent); the same map when the counts do not change. */
export function adjustOwned(owned: ReadonlyMap<string, OwnedCounts>, previous: Counted | null, next: Counted | null): ReadonlyMap<string, OwnedCounts> {
  const before = previous === null ? null : contribution(previous);
  const after = next === null ? null : contribution(next);
  if (before?.owner === after?.owner && before?.field === after?.field && before?.opened === after?.opened) return owned;
  const counts = new Map(owned);
  if (before !== null) add(counts, before, -1);
  if (after !== null) add(counts, after, 1);
  return counts;
}

/** What one record adds to its owner's counts (NC1-NC3); null: nothing. */
function contribution(stream: Counted): { owner: string; field: "streams" | "tableBuckets"; opened: boolean } | null {
  if (stream.owner === null) return null;
  if (stream.name.startsWith(BUCKET_STREAM_PREFIX)) return { owner: stream.owner, field: "tableBuckets", opened: false };
  return { owner: stream.owner, field: "streams", opened: stream.ownership === "opened" };
}

function add(counts: Map<string, OwnedCounts>, part: { owner: string; field: "streams" | "tableBuckets"; opened: boolean }, by: number): void {
  const was = counts.get(part.owner) ?? NO_OWNED;
  const is = { ...was, [part.field]: was[part.field] + by, openedStreams: was.openedStreams + (part.opened ? by : 0) };
  if (is.streams === 0 && is.tableBuckets === 0) counts.delete(part.owner);
  else counts.set(part.owner, is);
}
