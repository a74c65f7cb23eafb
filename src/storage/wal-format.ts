// The WAL object format: one group commit (records of many streams) or one seal, versioned and checksummed.
//
//   "MKWL" | u16 version (1) | u8 kind (1 records, 2 seal) | u32 totalBytes
//   | string nodeId | u64 nodeEpoch | u64 seq
//   | records: u32 count, then per record: string streamId, record body (record-codec.ts)
//   | seal:    string sealedBy, u64 sealEpoch          (the header's nodeEpoch equals sealEpoch)
//   | u32 CRC32C of every byte before it
//
// `totalBytes` makes truncation (or trailing garbage) certain to be caught, and CRC32C catches every burst
// of up to 32 flipped bits; decoding also checks that the parse ends exactly at the checksum. Anything
// wrong throws `WalCorruptError` naming the key: a WAL object is never partially read or skipped.

import { crc32c } from "./crc32c.ts";
import {
  ByteReader,
  ByteWriter,
  CorruptObjectError,
  FormatError,
  InvalidRecordError,
  checkSafeU64,
  encodeString,
  recordBodyBytes,
  writeMagic,
  type WalRecord,
} from "./record-codec.ts";

const WAL_MAGIC = "MKWL";

/**
 * The most WAL objects one writer may have in flight (WAL_MAX_IN_FLIGHT is at most this). Part of the
 * format: a sealer relies on it to know where a writer it fenced can no longer land (wal-seal.ts), without
 * knowing that incarnation's setting.
 */
export const WAL_IN_FLIGHT_CAP = 16;
const WAL_FORMAT_VERSION = 1;
const KIND_RECORDS = 1;
const KIND_SEAL = 2;
/** magic + version + kind + totalBytes. */
const PREAMBLE_BYTES = 4 + 2 + 1 + 4;
const CRC_BYTES = 4;

interface WalRecordsObject {
  kind: "records";
  /** The chain the object belongs to (the node whose key it has). */
  nodeId: string;
  /** The epoch of the incarnation that wrote it. */
  nodeEpoch: number;
  seq: number;
  records: WalRecord[];
}

interface WalSealObject {
  kind: "seal";
  nodeId: string;
  seq: number;
  /** The node that sealed the chain (the node itself on restart, another node on takeover). */
  sealedBy: string;
  /** The epoch of the chain's new owner; no data object after the seal may carry a lower epoch. */
  sealEpoch: number;
}

export type WalObject = WalRecordsObject | WalSealObject;

export class WalCorruptError extends CorruptObjectError {
  override readonly name = "WalCorruptError";
}

/** Bytes of a records object holding no records: preamble, header, count and checksum. */
export function walObjectOverheadBytes(nodeId: string): number {
  return PREAMBLE_BYTES + 2 + encodeString(nodeId, "nodeId").byteLength + 8 + 8 + 4 + CRC_BYTES;
}

/** Bytes a record adds to a WAL object (validates it: throws `InvalidRecordError`). */
export function walRecordBytes(record: WalRecord): number {
  return 2 + encodeString(record.streamId, "streamId").byteLength + recordBodyBytes(record);
}

export function encodeWalObject(object: WalObject): Uint8Array {
  const nodeId = encodeString(object.nodeId, "nodeId");
  checkSafeU64(object.seq, "seq");
  let bodyBytes: number;
  let streamIds: Uint8Array[] = [];
  let sealedBy: Uint8Array = new Uint8Array(0);
  if (object.kind === "records") {
    checkSafeU64(object.nodeEpoch, "nodeEpoch");
    const cache = new Map<string, Uint8Array>();
    streamIds = object.records.map((record) => {
      let encoded = cache.get(record.streamId);
      if (encoded === undefined) {
        encoded = encodeString(record.streamId, "streamId");
        cache.set(record.streamId, encoded);
      }
      return encoded;
    });
    bodyBytes = 4;
    object.records.forEach((record, i) => (bodyBytes += 2 + streamIds[i]!.byteLength + recordBodyBytes(record)));
  } else {
    checkSafeU64(object.sealEpoch, "sealEpoch");
    sealedBy = encodeString(object.sealedBy, "sealedBy");
    bodyBytes = 2 + sealedBy.byteLength + 8;
  }
  const totalBytes = PREAMBLE_BYTES + 2 + nodeId.byteLength + 8 + 8 + bodyBytes + CRC_BYTES;
  if (totalBytes > 0xffff_ffff) throw new InvalidRecordError("WAL object over 4 GiB");

  const writer = new ByteWriter(totalBytes);
  writeMagic(writer, WAL_MAGIC);
  writer.u16(WAL_FORMAT_VERSION);
  writer.u8(object.kind === "records" ? KIND_RECORDS : KIND_SEAL);
  writer.u32(totalBytes);
  writer.string(nodeId);
  writer.u64(object.kind === "records" ? object.nodeEpoch : object.sealEpoch);
  writer.u64(object.seq);
  if (object.kind === "records") {
    writer.u32(object.records.length);
    object.records.forEach((record, i) => {
      writer.string(streamIds[i]!);
      writer.recordBody(record);
    });
  } else {
    writer.string(sealedBy);
    writer.u64(object.sealEpoch);
  }
  writer.u32(crc32c(writer.bytes.subarray(0, writer.position)));
  return writer.bytes;
}

/** Decodes and verifies a WAL object read from `key`. Record bytes are views into `bytes` (no copy). */
export function decodeWalObject(bytes: Uint8Array, key: string): WalObject {
  try {
    return decode(bytes);
  } catch (error) {
    if (error instanceof FormatError) throw new WalCorruptError(key, error.message);
    throw error;
  }
}

function decode(bytes: Uint8Array): WalObject {
  if (bytes.byteLength < PREAMBLE_BYTES + CRC_BYTES) throw new FormatError(`truncated: ${bytes.byteLength} bytes`);
  const end = bytes.byteLength - CRC_BYTES;
  const reader = new ByteReader(bytes, end);
  reader.magic(WAL_MAGIC);
  const version = reader.u16();
  const kind = reader.u8();
  const totalBytes = reader.u32();
  if (totalBytes !== bytes.byteLength) throw new FormatError(`length ${bytes.byteLength}, header says ${totalBytes} (torn)`);
  const stored = new DataView(bytes.buffer, bytes.byteOffset + end, CRC_BYTES).getUint32(0);
  if (crc32c(bytes.subarray(0, end)) !== stored) throw new FormatError("checksum mismatch");
  if (version !== WAL_FORMAT_VERSION) throw new FormatError(`unsupported format version ${version}`);

  const nodeId = reader.string("nodeId");
  const nodeEpoch = reader.u64("nodeEpoch");
  const seq = reader.u64("seq");
  let object: WalObject;
  if (kind === KIND_RECORDS) {
    const count = reader.u32();
    const records: WalRecord[] = [];
    for (let i = 0; i < count; i++) {
      const streamId = reader.string("streamId");
      records.push(reader.recordBody(streamId));
    }
    object = { kind: "records", nodeId, nodeEpoch, seq, records };
  } else if (kind === KIND_SEAL) {
    const sealedBy = reader.string("sealedBy");
    const sealEpoch = reader.u64("sealEpoch");
    if (sealEpoch !== nodeEpoch) throw new FormatError(`seal epoch ${sealEpoch} differs from header epoch ${nodeEpoch}`);
    object = { kind: "seal", nodeId, seq, sealedBy, sealEpoch };
  } else {
    throw new FormatError(`unknown object kind ${kind}`);
  }
  if (reader.position !== end) throw new FormatError(`${end - reader.position} unparsed bytes before the checksum`);
  return object;
}
