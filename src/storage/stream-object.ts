// Stream objects: one stream's records for a contiguous offset range [firstOffset, endOffset), immutable.
//
//   "MKSO" | u16 version (1) | u32 totalBytes | string streamId | u64 firstOffset | u64 endOffset
//   | u32 recordCount | record bodies (record-codec.ts; the stream id is in the header only) | u32 CRC32C
//
// The key names the range (keys.ts), and by invariant 3 a range has one content, so a second write of the
// same key (a repeated compaction) must find identical bytes: a 412 with equal bytes is success, with other
// bytes it is a `StreamObjectConflictError`, never an overwrite.

import { crc32c } from "./crc32c.ts";
import { sameBytes, type ObjectStore } from "./object-store.ts";
import { parseStreamObjectKey, streamObjectKey } from "./keys.ts";
import {
  ByteReader,
  ByteWriter,
  CorruptObjectError,
  FormatError,
  InvalidRecordError,
  encodeString,
  isEof,
  recordBodyBytes,
  recordEnd,
  writeMagic,
  type WalRecord,
} from "./record-codec.ts";
import type { StreamObjectRef } from "./manifest.ts";
import { putCreateOnce } from "./create-once.ts";
import { resolveRetry, type RetryOptions } from "./retry-policy.ts";

const STREAM_OBJECT_MAGIC = "MKSO";
const STREAM_OBJECT_FORMAT_VERSION = 1;
/** magic + version + totalBytes. */
const PREAMBLE_BYTES = 4 + 2 + 4;
const CRC_BYTES = 4;

export interface StreamObject {
  streamId: string;
  firstOffset: number;
  endOffset: number;
  records: WalRecord[];
}

export class StreamObjectCorruptError extends CorruptObjectError {
  override readonly name = "StreamObjectCorruptError";
}

/** The key holds different bytes for the same range: two histories of one stream (a bug, never merged). */
export class StreamObjectConflictError extends Error {
  override readonly name = "StreamObjectConflictError";
  constructor(readonly key: string) {
    super(`stream object ${key} exists with different content`);
  }
}

/** Records that do not form one stream's contiguous run: a gap, an overlap, or worse. */
export class NonContiguousRecordsError extends InvalidRecordError {
  override readonly name = "NonContiguousRecordsError";
}

/**
 * Checks that `records` are one stream's contiguous run: same stream, each starting where the previous one
 * ended (a gap or overlap names the offset), epochs never decreasing, end-of-stream only on the last.
 */
export function checkContiguous(records: readonly WalRecord[]): void {
  const first = records[0];
  if (first === undefined) throw new NonContiguousRecordsError("no records");
  let previous: WalRecord | undefined;
  for (const record of records) {
    if (record.streamId !== first.streamId) throw new NonContiguousRecordsError(`records of ${first.streamId} and ${record.streamId} mixed`);
    if (previous !== undefined) {
      const expected = recordEnd(previous);
      if (record.firstOffset > expected) throw new NonContiguousRecordsError(`gap in ${first.streamId}: [${expected}, ${record.firstOffset}) missing`);
      if (record.firstOffset < expected) throw new NonContiguousRecordsError(`overlap in ${first.streamId}: record at ${record.firstOffset} starts before ${expected}`);
      if (record.streamEpoch < previous.streamEpoch) throw new NonContiguousRecordsError(`epoch goes back at offset ${record.firstOffset} in ${first.streamId}`);
      if (isEof(previous)) throw new NonContiguousRecordsError(`record at ${record.firstOffset} after end of stream in ${first.streamId}`);
    }
    previous = record;
  }
}

export function encodeStreamObject(records: readonly WalRecord[]): Uint8Array {
  checkContiguous(records);
  const first = records[0]!;
  const streamId = encodeString(first.streamId, "streamId");
  let totalBytes = PREAMBLE_BYTES + 2 + streamId.byteLength + 8 + 8 + 4 + CRC_BYTES;
  for (const record of records) totalBytes += recordBodyBytes(record);
  if (totalBytes > 0xffff_ffff) throw new InvalidRecordError("stream object over 4 GiB");

  const writer = new ByteWriter(totalBytes);
  writeMagic(writer, STREAM_OBJECT_MAGIC);
  writer.u16(STREAM_OBJECT_FORMAT_VERSION);
  writer.u32(totalBytes);
  writer.string(streamId);
  writer.u64(first.firstOffset);
  writer.u64(recordEnd(records.at(-1)!));
  writer.u32(records.length);
  for (const record of records) writer.recordBody(record);
  writer.u32(crc32c(writer.bytes.subarray(0, writer.position)));
  return writer.bytes;
}

/** Decodes and verifies a stream object read from `key` (which must name the same stream and range). */
export function decodeStreamObject(bytes: Uint8Array, key: string): StreamObject {
  let object: StreamObject;
  try {
    object = decode(bytes);
    checkContiguous(object.records);
  } catch (error) {
    if (error instanceof FormatError || error instanceof InvalidRecordError) throw new StreamObjectCorruptError(key, error.message);
    throw error;
  }
  const named = parseStreamObjectKey(key);
  if (named.streamId !== object.streamId || named.firstOffset !== object.firstOffset || named.endOffset !== object.endOffset) {
    throw new StreamObjectCorruptError(key, `misplaced: holds ${object.streamId} [${object.firstOffset}, ${object.endOffset})`);
  }
  return object;
}

function decode(bytes: Uint8Array): StreamObject {
  if (bytes.byteLength < PREAMBLE_BYTES + CRC_BYTES) throw new FormatError(`truncated: ${bytes.byteLength} bytes`);
  const end = bytes.byteLength - CRC_BYTES;
  const reader = new ByteReader(bytes, end);
  reader.magic(STREAM_OBJECT_MAGIC);
  const version = reader.u16();
  const totalBytes = reader.u32();
  if (totalBytes !== bytes.byteLength) throw new FormatError(`length ${bytes.byteLength}, header says ${totalBytes} (torn)`);
  const stored = new DataView(bytes.buffer, bytes.byteOffset + end, CRC_BYTES).getUint32(0);
  if (crc32c(bytes.subarray(0, end)) !== stored) throw new FormatError("checksum mismatch");
  if (version !== STREAM_OBJECT_FORMAT_VERSION) throw new FormatError(`unsupported format version ${version}`);

  const streamId = reader.string("streamId");
  const firstOffset = reader.u64("firstOffset");
  const endOffset = reader.u64("endOffset");
  const count = reader.u32();
  const records: WalRecord[] = [];
  for (let i = 0; i < count; i++) records.push(reader.recordBody(streamId));
  if (reader.position !== end) throw new FormatError(`${end - reader.position} unparsed bytes before the checksum`);
  if (records[0]?.firstOffset !== firstOffset || recordEnd(records.at(-1)!) !== endOffset) {
    throw new FormatError(`records do not span the header's range [${firstOffset}, ${endOffset})`);
  }
  return { streamId, firstOffset, endOffset, records };
}

/**
 * Writes `records` (one stream, contiguous) as an immutable stream object with `If-None-Match: *`. If the key
 * exists already, its bytes must be ours (a repeated compaction): success; otherwise a conflict.
 */
export async function writeStreamObject(
  store: ObjectStore,
  records: readonly WalRecord[],
  options: { retry?: RetryOptions } = {},
): Promise<StreamObjectRef> {
  const body = encodeStreamObject(records);
  const first = records[0]!;
  const firstOffset = first.firstOffset;
  const endOffset = recordEnd(records.at(-1)!);
  const key = streamObjectKey(first.streamId, firstOffset, endOffset);
  const outcome = await putCreateOnce(store, key, body, resolveRetry(options.retry));
  if (outcome.kind === "exists") {
    const existing = await store.get(key);
    if (!sameBytes(existing.body, body)) throw new StreamObjectConflictError(key);
  }
  return { key, firstOffset, endOffset, bytes: body.byteLength };
}

export async function readStreamObject(store: ObjectStore, key: string): Promise<StreamObject> {
  return decodeStreamObject((await store.get(key)).body, key);
}
