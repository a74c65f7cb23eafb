// One place where a stream's WAL record is built and its acknowledgement chained. Every record of a stream
// (create, append, close, soft delete, delete, adoption snapshot) carries the stream's id and epoch and the
// offset it starts at; the eof flag only on the record that closes the stream. A record the stream's readers
// will see is chained on the stream's `pending`: its acknowledgement is applied only once it is durable and
// every record the stream committed before it was applied (or failed), so acknowledgements apply in WAL seq
// order and `settled` (context.ts) waits for all of them.
import { RECORD_FLAG_EOF, type WalRecord } from "../../storage/record-codec.ts";
import type { NodeContext } from "../context.ts";
import { encodeRecordMeta, type RecordMeta } from "../state/record-meta.ts";
import type { StreamState } from "../state/stream-registry.ts";
import { snapshotRecord } from "./snapshot-record.ts";

const NO_DATA = new Uint8Array(0);

/** The stream a record belongs to: its id, and the stream epoch this node opened it at. */
export interface RecordOwner {
  readonly id: string;
  readonly epoch: number;
}

/** A WAL record of `owner`'s at `firstOffset`; `eof` only when it closes the stream. */
export function walRecord(owner: RecordOwner, firstOffset: number, meta: RecordMeta, data: Uint8Array = NO_DATA, eof = false): WalRecord {
  return {
    streamId: owner.id,
    streamEpoch: owner.epoch,
    firstOffset,
    flags: eof ? RECORD_FLAG_EOF : 0,
    meta: encodeRecordMeta(meta),
    data,
  };
}

/**
 * Queues `record` with the WAL writer now (a stopped writer throws here, before anything changed) and chains
 * its acknowledgement on the stream's `pending`: `apply` runs once the record is durable and every earlier
 * record of the stream was applied, before any later one. Resolves after `apply`; rejects when the WAL
 * write failed (then `apply` never runs).
 */
export function commitRecord(ctx: NodeContext, stream: StreamState, record: WalRecord, apply: () => void = () => undefined): Promise<void> {
  // A stream reloaded from its manifest: its state so far goes first, in the same WAL object (built before the
  // caller moves the decided state past this record).
  const landed = ctx.wal.append(stream.needsAnchor ? [snapshotRecord(stream), record] : [record]);
  stream.needsAnchor = false;
  // An earlier record's failure does not stop this one's chain: its own acknowledgement decides (a stopped
  // writer rejects every later record too). Subscribing in both branches keeps `landed` observed.
  const applied = stream.pending.then(
    () => landed,
    () => landed,
  ).then(apply);
  stream.pending = applied;
  return applied;
}
