// Idle streams out of a node's memory, without giving them up (docs/node.md, "Idle streams"). An evicted
// stream stays owned by its node in the metadata log; its whole state is in its manifest (the session
// the eviction wrote, over its stream objects), and the next request for it reloads it from there.
//
// Table EV: may the node evict this stream now? First matching row wins.
//
// | row | the stream                                                              | evict? | why not                                  |
// |-----|-------------------------------------------------------------------------|--------|------------------------------------------|
// | EV1 | not held or opened here (being handed off, moved away, removed), or a  | no     | someone else's step is running           |
// |     | create, open, hand-off, adoption or reload of it runs (its locks)       |        |                                          |
// | EV2 | soft-deleted, or with a TTL or an expiry time                           | no     | its clock runs in this node's memory     |
// | EV3 | a fork, or the source of a fork held here                               | no     | its reads stitch across both             |
// | EV4 | a table's bucket stream                                                 | no     | its leader holds the tablet built on it  |
// | EV5 | appends in flight, or acknowledged data not all in stream objects yet  | no     | the manifest would not hold its state    |
// | EV6 | live readers wait at its tail                                           | no     | they wait on this copy                   |
// | EV7 | touched within the idle time, and the node is within its resident cap  | no     | it is in use                             |
// | EV8 | otherwise                                                               | yes    |                                          |
//
// Table EW: what does an eviction do with the manifest it finds, to write its session there?
//
// | row | the manifest                                                             | the eviction                      |
// |-----|--------------------------------------------------------------------------|-----------------------------------|
// | EW1 | records a close at this copy's epoch or later                            | stays: a hand-off of it is under way (or a newer owner closed it) |
// | EW2 | ends past this copy's tail                                               | stays: data this copy does not hold |
// | EW3 | records a close at an earlier epoch                                      | writes its session, dropping that close: the previous owner's, kept by this copy's open (a transfer's target or an adopter keeps it until its own WAL records the stream); this copy continued from it and holds all of it |
// | EW4 | otherwise                                                                | writes its session                 |
//
// Table RL: may a request reload a stream the node does not hold from its manifest's session?
//
// | row | the log's record, the manifest                                             | reload? |
// |-----|----------------------------------------------------------------------------|---------|
// | RL1 | the log does not have it opened by this node                               | no: route as before (307, adopt, 404) |
// | RL2 | no manifest, a manifest that records a close, or one without a session     | no: not an eviction's manifest         |
// | RL3 | the manifest's epoch is not the log's                                      | no: a session of another ownership    |
// | RL4 | the session ends where the manifest's data does not                        | no: refused as corrupt                |
// | RL5 | otherwise                                                                  | yes: held at the log's epoch          |
//
// The same session lets a node adopt the stream once its open succeeded (ownership/adopt.ts): no live node
// holds it then, and the takeover of a dead owner closes every stream its replay found, so a manifest with a
// session but no close was evicted, and that session is its last state (RL1 holds: the open made it this
// node's; RL3 compares the epoch before the open).
import type { Lifecycle } from "./protocol/fork.ts";
import type { PhaseKind } from "./stream-phase.ts";

export interface EvictionView {
  readonly phase: PhaseKind;
  /** A step holds the stream's name or open lock (a create, open, delete, hand-off, adoption or reload). */
  readonly busy: boolean;
  readonly lifecycle: Lifecycle;
  readonly ttlSeconds: number | null;
  readonly expiresAtMs: number | null;
  /** The fork point (0 for a stream that is not a fork). */
  readonly base: number;
  /** Forks held here that read this stream. */
  readonly forkCount: number;
  readonly bucketStream: boolean;
  /** Acknowledged tail and eof, and the decided ones (appends in flight included). */
  readonly tail: number;
  readonly eof: boolean;
  readonly decidedTail: number;
  readonly decidedEof: boolean;
  /** Where its data in stream objects ends. */
  readonly compactedEnd: number;
  readonly readersWaiting: boolean;
  readonly lastAccessMs: number;
}

export interface EvictionPolicy {
  readonly nowMs: number;
  /** A stream untouched this long may go (STREAM_IDLE_EVICT_MS). */
  readonly idleMs: number;
  /** The node holds more streams than MAX_RESIDENT_STREAMS: the least recently used go even if not idle. */
  readonly overResidentCap: boolean;
}

export type EvictionRow = "EV1" | "EV2" | "EV3" | "EV4" | "EV5" | "EV6" | "EV7" | "EV8";

/** Table EV: the first row that matches. Only EV8 evicts. */
export function evictionRow(stream: EvictionView, policy: EvictionPolicy): EvictionRow {
  if ((stream.phase !== "held" && stream.phase !== "opened") || stream.busy) return "EV1";
  if (stream.lifecycle !== "live" || stream.ttlSeconds !== null || stream.expiresAtMs !== null) return "EV2";
  if (stream.base > 0 || stream.forkCount > 0) return "EV3";
  if (stream.bucketStream) return "EV4";
  if (stream.decidedTail !== stream.tail || stream.decidedEof !== stream.eof || stream.compactedEnd !== stream.tail) return "EV5";
  if (stream.readersWaiting) return "EV6";
  if (!policy.overResidentCap && policy.nowMs - stream.lastAccessMs < policy.idleMs) return "EV7";
  return "EV8";
}

export function mayEvict(stream: EvictionView, policy: EvictionPolicy): boolean {
  return evictionRow(stream, policy) === "EV8";
}

/** What table EW reads of a manifest (src/storage/manifest.ts's Manifest has these fields). */
export interface ManifestForEviction {
  readonly closed?: { readonly atEpoch: number } | undefined;
  readonly endOffset: number;
}

export type EvictionWriteRow = "EW1" | "EW2" | "EW3" | "EW4";

/** Table EW: the first row that matches. EW3 and EW4 write the session; EW1 and EW2 keep the stream. */
export function evictionWriteRow(manifest: ManifestForEviction, copy: { readonly epoch: number; readonly tail: number }): EvictionWriteRow {
  if (manifest.closed !== undefined && manifest.closed.atEpoch >= copy.epoch) return "EW1";
  if (manifest.endOffset > copy.tail) return "EW2";
  return manifest.closed !== undefined ? "EW3" : "EW4";
}

/** What a reload looks at: the log's record of the stream and its manifest. */
export interface ReloadView {
  /** The log has the stream opened by this node (RL1), or this node's open of it just succeeded (an adoption). */
  readonly ownedHere: boolean;
  readonly logEpoch: number;
  readonly manifest: {
    readonly epoch: number;
    readonly endOffset: number;
    readonly closed: boolean;
    /** The session's tail and stream name, when it has one. */
    readonly session: { readonly tail: number; readonly name: string } | null;
  } | null;
  readonly name: string;
}

export type ReloadRow = "RL1" | "RL2" | "RL3" | "RL4" | "RL5";

/** Table RL: the first row that matches. Only RL5 reloads; RL4 is corruption the caller reports. */
export function reloadRow(view: ReloadView): ReloadRow {
  if (!view.ownedHere) return "RL1";
  const manifest = view.manifest;
  if (manifest === null || manifest.closed || manifest.session === null) return "RL2";
  if (manifest.epoch !== view.logEpoch) return "RL3";
  if (manifest.session.tail !== manifest.endOffset || manifest.session.name !== view.name) return "RL4";
  return "RL5";
}
