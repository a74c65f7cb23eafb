// A stream's whole decided state as one `snapshot` record meta: what a compaction's snapshot writes for
// every stream, what a hand-off and an eviction record in the manifest as its session, and what a stream
// reloaded from that session writes ahead of its first record after the reload (its anchor in the WAL).
import type { WalRecord } from "../../storage/record-codec.ts";
import type { Manifest } from "../../storage/manifest.ts";
import { decodeRecordMeta, encodeRecordMeta, RECORD_META_VERSION, type RecordMeta } from "../state/record-meta.ts";
import type { StreamState } from "../state/stream-registry.ts";

export type SnapshotMeta = Extract<RecordMeta, { k: "snapshot" }>;

const encoder = new TextEncoder();

function snapshotMeta(stream: StreamState): SnapshotMeta {
  return {
    k: "snapshot",
    name: stream.name,
    config: stream.config,
    at: stream.createdAtMs,
    tail: stream.decided.tail,
    eof: stream.decided.eof,
    softDeleted: stream.lifecycle === "soft-deleted",
    producers: [...stream.decided.producers].map(([id, state]) => [id, state.epoch, state.lastSeq, state.lastUpdatedMs] as const),
    q: stream.decided.lastStreamSeq,
    la: stream.lastAccessMs,
  };
}

/** The snapshot record of one stream, from its decided state (what replay after it must continue). */
export function snapshotRecord(stream: StreamState): WalRecord {
  return {
    streamId: stream.id,
    streamEpoch: stream.epoch,
    firstOffset: stream.decided.tail,
    flags: 0,
    meta: encodeRecordMeta(snapshotMeta(stream)),
    data: new Uint8Array(0),
  };
}

/** The session a manifest records (versioned like every record meta): the stream's snapshot meta. */
export function manifestSession(stream: StreamState): NonNullable<Manifest["session"]> {
  return { v: RECORD_META_VERSION, ...snapshotMeta(stream) };
}

/** A manifest's session read back as a snapshot meta; a string says why it is not one. */
export function sessionMeta(session: NonNullable<Manifest["session"]>): SnapshotMeta | string {
  const meta = decodeRecordMeta(encoder.encode(JSON.stringify(session)));
  return meta.k === "snapshot" ? meta : "its manifest's session is not a snapshot";
}
