// The key-value metadata Iceberg requires in the header of a manifest and a manifest list (`schema`,
// `partition-spec`, `format-version`, `content`, ...). icebird's Avro writer writes its own header with
// `avro.schema` and `avro.codec` only, so this rewrites that header with more entries, keeping its sync
// marker and every block the library wrote byte for byte. The header of an Avro object container file is
// the magic `Obj\x01`, a map of string to bytes (a count, then key and value each as a length and bytes,
// then 0), and the 16-byte sync marker; lengths and counts are zigzag varints (Avro longs).

const MAGIC = [0x4f, 0x62, 0x6a, 0x01];
const SYNC_BYTES = 16;
const encoder = new TextEncoder();

function readLong(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    if (byte === undefined) throw new Error("avro header: truncated");
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) break;
    shift += 7;
  }
  // zigzag: even values are non-negative.
  return [value % 2 === 0 ? value / 2 : -(value + 1) / 2, at];
}

function writeLong(out: number[], n: number): void {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  while (z >= 0x80) {
    out.push((z % 0x80) | 0x80);
    z = Math.floor(z / 0x80);
  }
  out.push(z);
}

/** The container `bytes` with `extra` added to its header metadata (an existing key keeps its value). */
export function withHeaderMetadata(bytes: Uint8Array, extra: Readonly<Record<string, string>>): Uint8Array {
  if (MAGIC.some((byte, i) => bytes[i] !== byte)) throw new Error("avro header: not an object container file");
  const entries: [Uint8Array, Uint8Array][] = [];
  let at = MAGIC.length;
  for (;;) {
    let count: number;
    [count, at] = readLong(bytes, at);
    if (count === 0) break;
    if (count < 0) [, at] = readLong(bytes, at); // a negative count is followed by the block's size in bytes
    for (let i = 0; i < Math.abs(count); i++) {
      let length: number;
      [length, at] = readLong(bytes, at);
      const key = bytes.subarray(at, (at += length));
      [length, at] = readLong(bytes, at);
      entries.push([key, bytes.subarray(at, (at += length))]);
    }
  }
  const decoder = new TextDecoder();
  const present = new Set(entries.map(([key]) => decoder.decode(key)));
  for (const [key, value] of Object.entries(extra)) if (!present.has(key)) entries.push([encoder.encode(key), encoder.encode(value)]);
  const head: number[] = [...MAGIC];
  writeLong(head, entries.length);
  const parts: Uint8Array[] = [];
  for (const [key, value] of entries) {
    const lengths: number[] = [];
    writeLong(lengths, key.byteLength);
    parts.push(Uint8Array.from(lengths), key);
    const valueLength: number[] = [];
    writeLong(valueLength, value.byteLength);
    parts.push(Uint8Array.from(valueLength), value);
  }
  const rest = bytes.subarray(at); // the sync marker, then the blocks
  if (rest.byteLength < SYNC_BYTES) throw new Error("avro header: no sync marker");
  const all = [Uint8Array.from(head), ...parts, Uint8Array.of(0), rest];
  const out = new Uint8Array(all.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of all) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
