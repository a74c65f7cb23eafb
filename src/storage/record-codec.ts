// The shared binary encoding of stream records, used by WAL objects and stream objects alike, plus the
// little byte reader/writer both formats are built on. All integers are big-endian; u64 values travel
// through DataView's BigInt accessors and must be safe JS integers on both sides.
//
// Record body (the part both formats share):
//   u64 streamEpoch | u64 firstOffset | u8 flags | u32 metaBytes | meta | u32 dataBytes | data
// A WAL record is `string streamId` followed by the body; a stream object names its stream once in its
// header and stores bodies only. A string is `u16 byteLength | UTF-8 bytes`.

/** One append's worth of a stream: bytes [firstOffset, firstOffset + data.length) and opaque metadata. */
export interface WalRecord {
  streamId: string;
  streamEpoch: number;
  firstOffset: number;
  /** Bit 0 (`RECORD_FLAG_EOF`): the writer closed the stream with this record. Other bits are reserved. */
  flags: number;
  /** Opaque to storage (producer state etc.). */
  meta: Uint8Array;
  data: Uint8Array;
}

export const RECORD_FLAG_EOF = 0x01;
const KNOWN_FLAGS = RECORD_FLAG_EOF;
const MAX_U16 = 0xffff;
const MAX_U32 = 0xffff_ffff;
const MAX_SAFE_U64 = BigInt(Number.MAX_SAFE_INTEGER);
/** u64 epoch + u64 offset + u8 flags + u32 meta length + u32 data length. */
const RECORD_BODY_FIXED_BYTES = 8 + 8 + 1 + 4 + 4;

/** Input that cannot be encoded: the caller's bug, nothing was written. */
export class InvalidRecordError extends Error {
  override readonly name: string = "InvalidRecordError";
}

/** A stored object that does not decode: torn, truncated, bit-flipped or misplaced. Never skipped. */
export class CorruptObjectError extends Error {
  override readonly name: string = "CorruptObjectError";
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`corrupt object ${key}: ${problem}`);
  }
}

/** A decode failure without the key; the object decoders turn it into their typed error naming the key. */
export class FormatError extends Error {
  override readonly name = "FormatError";
}

export function recordEnd(record: WalRecord): number {
  return record.firstOffset + record.data.byteLength;
}

export function isEof(record: WalRecord): boolean {
  return (record.flags & RECORD_FLAG_EOF) !== 0;
}

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function checkSafeU64(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new InvalidRecordError(`${what} must be a safe non-negative integer: ${value}`);
}

/** Validates a record's numbers and sizes; returns its encoded body size in bytes (without stream id). */
export function recordBodyBytes(record: WalRecord): number {
  checkSafeU64(record.streamEpoch, "streamEpoch");
  checkSafeU64(record.firstOffset, "firstOffset");
  checkSafeU64(recordEnd(record), "firstOffset + data length");
  if (!Number.isInteger(record.flags) || (record.flags & ~KNOWN_FLAGS) !== 0 || record.flags < 0) {
    throw new InvalidRecordError(`unknown record flags: ${record.flags}`);
  }
  if (record.meta.byteLength > MAX_U32 || record.data.byteLength > MAX_U32) throw new InvalidRecordError("record over 4 GiB");
  return RECORD_BODY_FIXED_BYTES + record.meta.byteLength + record.data.byteLength;
}

/** UTF-8 of an id, refusing what would not survive a round trip (lone surrogates) or a u16 length. */
export function encodeString(value: string, what: string): Uint8Array {
  const bytes = encoder.encode(value);
  if (bytes.byteLength > MAX_U16) throw new InvalidRecordError(`${what} longer than ${MAX_U16} bytes`);
  if (strictDecoder.decode(bytes) !== value) throw new InvalidRecordError(`${what} is not well-formed UTF-16`);
  return bytes;
}

export class ByteWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  position = 0;

  constructor(sizeBytes: number) {
    this.bytes = new Uint8Array(sizeBytes);
    this.view = new DataView(this.bytes.buffer);
  }

  u8(value: number): void {
    this.view.setUint8(this.position, value);
    this.position += 1;
  }

  u16(value: number): void {
    this.view.setUint16(this.position, value);
    this.position += 2;
  }

  u32(value: number): void {
    this.view.setUint32(this.position, value);
    this.position += 4;
  }

  u64(value: number): void {
    this.view.setBigUint64(this.position, BigInt(value));
    this.position += 8;
  }

  raw(bytes: Uint8Array): void {
    this.bytes.set(bytes, this.position);
    this.position += bytes.byteLength;
  }

  /** A string already encoded with `encodeString`. */
  string(encoded: Uint8Array): void {
    this.u16(encoded.byteLength);
    this.raw(encoded);
  }

  recordBody(record: WalRecord): void {
    this.u64(record.streamEpoch);
    this.u64(record.firstOffset);
    this.u8(record.flags);
    this.u32(record.meta.byteLength);
    this.raw(record.meta);
    this.u32(record.data.byteLength);
    this.raw(record.data);
  }
}

/** Reads within `[0, end)` of `bytes`; every overrun or bad value throws `FormatError`. */
export class ByteReader {
  private readonly view: DataView;
  position = 0;

  constructor(
    private readonly bytes: Uint8Array,
    readonly end: number = bytes.byteLength,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private take(count: number): number {
    if (count > this.end - this.position) throw new FormatError(`truncated: needs ${count} bytes at ${this.position}`);
    const at = this.position;
    this.position += count;
    return at;
  }

  u8(): number {
    return this.view.getUint8(this.take(1));
  }

  u16(): number {
    return this.view.getUint16(this.take(2));
  }

  u32(): number {
    return this.view.getUint32(this.take(4));
  }

  u64(what: string): number {
    const value = this.view.getBigUint64(this.take(8));
    if (value > MAX_SAFE_U64) throw new FormatError(`${what} beyond 2^53: ${value}`);
    return Number(value);
  }

  /** A view into the underlying bytes (no copy). */
  raw(count: number): Uint8Array {
    const at = this.take(count);
    return this.bytes.subarray(at, at + count);
  }

  string(what: string): string {
    try {
      return strictDecoder.decode(this.raw(this.u16()));
    } catch (error) {
      if (error instanceof FormatError) throw error;
      throw new FormatError(`${what} is not valid UTF-8`);
    }
  }

  magic(expected: string): void {
    const found = this.raw(expected.length);
    for (let i = 0; i < expected.length; i++) {
      if (found[i] !== expected.charCodeAt(i)) throw new FormatError(`bad magic (expected ${expected})`);
    }
  }

  recordBody(streamId: string): WalRecord {
    const streamEpoch = this.u64("streamEpoch");
    const firstOffset = this.u64("firstOffset");
    const flags = this.u8();
    if ((flags & ~KNOWN_FLAGS) !== 0) throw new FormatError(`unknown record flags ${flags}`);
    const meta = this.raw(this.u32());
    const data = this.raw(this.u32());
    if (!Number.isSafeInteger(firstOffset + data.byteLength)) throw new FormatError("record end beyond 2^53");
    return { streamId, streamEpoch, firstOffset, flags, meta, data };
  }
}

export function writeMagic(writer: ByteWriter, magic: string): void {
  for (let i = 0; i < magic.length; i++) writer.u8(magic.charCodeAt(i));
}
