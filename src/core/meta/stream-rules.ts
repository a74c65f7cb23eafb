// Stream rules: CreateStream, DeleteStream, OpenStream, CloseStream. One function per table; the rows are
// tested by name in test/core/meta/stream-rules.test.ts and listed in docs/metadata-log.md.
import type { CloseStream, CreateStream, DeleteStream, OpenStream, ValueOf } from "./commands.ts";
import { takeoverGate } from "./failover-rules.ts";
import { jsonEqual } from "./json.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { streamIdFor, withStream, type MetaState, type StreamRecord } from "./state.ts";
import { BUCKET_STREAM_PREFIX } from "../tables/bucketing.ts";

/**
 * Table CS — CreateStream {name, config}:
 * | row | condition                      | result                                                                   |
 * | CS1 | proposer fails table P         | as table P                                                               |
 * | CS2 | name not registered            | accepted: id `s<seq>` (never reused), `unplaced`, epoch 0, no owner     |
 * | CS3 | name registered, same config   | no-op: the existing record (a repeat create answers 200, not 201)       |
 * | CS4 | name registered, other config  | conflict {streamId}                                                      |
 */
export function createStream(state: MetaState, command: CreateStream): Outcome<ValueOf["CreateStream"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const existingId = state.streams.idByName(command.name);
  const existing = existingId === undefined ? undefined : state.streams.get(existingId);
  if (existing !== undefined) {
    if (jsonEqual(existing.config, command.config)) return unchanged(state, { stream: existing });
    return rejected(state, "conflict", "a stream with this name exists with another configuration", {
      streamId: existing.id,
    });
  }
  const stream: StreamRecord = {
    id: streamIdFor(state.nextStreamSeq),
    name: command.name,
    owner: null,
    epoch: 0,
    ownership: "unplaced",
    config: command.config,
  };
  const next = withStream({ ...state, nextStreamSeq: state.nextStreamSeq + 1 }, stream.id, stream);
  return accepted(next, { stream });
}

/** The table whose bucket `stream` is, if that table exists (bucket streams are named `__ds/table/<name>/...`). */
function tableOfBucketStream(state: MetaState, stream: StreamRecord): string | null {
  if (!stream.name.startsWith(BUCKET_STREAM_PREFIX)) return null;
  const name = stream.name.slice(BUCKET_STREAM_PREFIX.length).split("/")[0] ?? "";
  return state.tables.get(name)?.buckets.some((bucket) => bucket.streamId === stream.id) === true ? name : null;
}

/**
 * Table DS — DeleteStream {streamId}:
 * | row | condition              | result                                                                      |
 * | DS1 | proposer fails table P | as table P                                                                  |
 * | DS2 | stream not found       | not_found {streamId}                                                        |
 * | DS2b| a bucket stream of a table that exists | invalid {reason: "table_bucket", table}: only DropTable removes it |
 * | DS3 | stream exists          | accepted: record, name and any pending transfer removed; the owner learns it from the view |
 */
export function deleteStream(state: MetaState, command: DeleteStream): Outcome<ValueOf["DeleteStream"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const stream = state.streams.get(command.streamId);
  if (stream === undefined) return rejected(state, "not_found", "no such stream", { streamId: command.streamId });
  const table = tableOfBucketStream(state, stream);
  if (table !== null) return rejected(state, "invalid", "a table's bucket stream goes only with its table", { reason: "table_bucket", table });
  const next = withStream({ ...state, transfers: state.transfers.delete(stream.id) }, stream.id, null);
  return accepted(next, { stream });
}

/**
 * Table OS — OpenStream {streamId, nodeId, nodeEpoch}:
 * | row | condition                              | result                                                         |
 * | OS1 | node fails table P                     | as table P                                                     |
 * | OS2 | stream not found                       | not_found {streamId}                                           |
 * | OS3 | transfer pending                       | transfer_pending {source, target}: the target opens after CompleteTransfer |
 * | OS4 | `unplaced`                             | invalid {ownership}: propose PlaceStream first                 |
 * | OS5 | `placed` or `opened`, owner is the node | accepted: epoch + 1, `opened` (a restarted owner fences its old self) |
 * | OS6 | `placed` or `opened` by another node   | held_by {owner, epoch, ownership}                              |
 * | OS3b| a dead incarnation it may hold data of is not taken over yet (takeoverGate) | unavailable {deadNode, deadEpoch}: retry after the takeover |
 * | OS7 | `closed`                               | accepted: the opener becomes the owner, epoch + 1, `opened`    |
 */
export function openStream(state: MetaState, command: OpenStream): Outcome<ValueOf["OpenStream"]> {
  const nodeError = checkProposer(state, { nodeId: command.nodeId, nodeEpoch: command.nodeEpoch });
  if (nodeError !== null) return rejectedWith(state, nodeError);
  const stream = state.streams.get(command.streamId);
  if (stream === undefined) return rejected(state, "not_found", "no such stream", { streamId: command.streamId });
  const transfer = state.transfers.get(stream.id);
  if (transfer !== undefined) {
    return rejected(state, "transfer_pending", "the stream is being transferred", {
      streamId: stream.id,
      source: transfer.source,
      target: transfer.target,
    });
  }
  if (stream.ownership === "unplaced" || stream.owner === null) {
    return rejected(state, "invalid", "the stream is not placed yet", { streamId: stream.id, ownership: stream.ownership });
  }
  if (stream.ownership !== "closed" && stream.owner !== command.nodeId) {
    return rejected(state, "held_by", "another node owns the stream", {
      streamId: stream.id,
      owner: stream.owner,
      epoch: stream.epoch,
      ownership: stream.ownership,
    });
  }
  const gateError = takeoverGate(state, stream);
  if (gateError !== null) return rejectedWith(state, gateError);
  const opened: StreamRecord = {
    id: stream.id,
    name: stream.name,
    owner: command.nodeId,
    epoch: stream.epoch + 1,
    ownership: "opened",
    config: stream.config,
  };
  return accepted(withStream(state, stream.id, opened), { stream: opened });
}

/**
 * Table CL — CloseStream {streamId, nodeId, nodeEpoch, epoch}:
 * | row | condition                                  | result                                            |
 * | CL1 | node fails table P                         | as table P                                        |
 * | CL2 | stream not found                           | not_found {streamId}                              |
 * | CL3 | `unplaced`                                 | invalid {ownership}                               |
 * | CL4 | owner is another node                      | held_by {owner, epoch}                            |
 * | CL5 | `closed` at exactly `epoch`                | no-op (a retried close)                           |
 * | CL6 | `epoch` lower than the stream's            | stale_epoch {currentEpoch}                        |
 * | CL7 | `epoch` higher than the stream's, or `closed` | invalid {currentEpoch, ownership}             |
 * | CL7b| a dead incarnation it may hold data of is not taken over yet (takeoverGate) | unavailable {deadNode, deadEpoch}: its data is not in the manifest yet |
 * | CL8 | `placed` or `opened` at `epoch`            | accepted: `closed` at `epoch` (closedAtEpoch)     |
 */
export function closeStream(state: MetaState, command: CloseStream): Outcome<ValueOf["CloseStream"]> {
  const nodeError = checkProposer(state, { nodeId: command.nodeId, nodeEpoch: command.nodeEpoch });
  if (nodeError !== null) return rejectedWith(state, nodeError);
  const stream = state.streams.get(command.streamId);
  if (stream === undefined) return rejected(state, "not_found", "no such stream", { streamId: command.streamId });
  if (stream.ownership === "unplaced" || stream.owner === null) {
    return rejected(state, "invalid", "the stream is not placed", { streamId: stream.id, ownership: stream.ownership });
  }
  if (stream.owner !== command.nodeId) {
    return rejected(state, "held_by", "another node owns the stream", {
      streamId: stream.id,
      owner: stream.owner,
      epoch: stream.epoch,
    });
  }
  if (stream.ownership === "closed" && stream.closedAtEpoch === command.epoch) return unchanged(state, { stream });
  if (command.epoch < stream.epoch) {
    return rejected(state, "stale_epoch", "the stream was opened at a later epoch", {
      streamId: stream.id,
      currentEpoch: stream.epoch,
    });
  }
  if (command.epoch > stream.epoch || stream.ownership === "closed") {
    return rejected(state, "invalid", "the stream is not open at this epoch", {
      streamId: stream.id,
      currentEpoch: stream.epoch,
      ownership: stream.ownership,
    });
  }
  const gateError = takeoverGate(state, stream);
  if (gateError !== null) return rejectedWith(state, gateError);
  const closed: StreamRecord = { ...stream, ownership: "closed", closedAtEpoch: stream.epoch };
  return accepted(withStream(state, stream.id, closed), { stream: closed });
}
