// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every WAL and stream object.
// Table-driven, slicing-by-8: eight 256-entry tables let the loop consume 8 bytes per step, which keeps
// checksumming well above the object store's bandwidth. Runtime-agnostic (no Buffer, no node:zlib).
//
// CRC32C detects every error burst of up to 32 bits, so any single flipped byte is always caught.

const POLYNOMIAL = 0x82f63b78;

/** TABLES[k][b]: the CRC of byte b followed by k zero bytes. */
const TABLES: Uint32Array[] = buildTables();

function buildTables(): Uint32Array[] {
  const tables: Uint32Array[] = [];
  const first = new Uint32Array(256);
  for (let b = 0; b < 256; b++) {
    let crc = b;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
    first[b] = crc >>> 0;
  }
  tables.push(first);
  for (let k = 1; k < 8; k++) {
    const previous = tables[k - 1]!;
    const table = new Uint32Array(256);
    for (let b = 0; b < 256; b++) {
      const value = previous[b]!;
      table[b] = ((value >>> 8) ^ first[value & 0xff]!) >>> 0;
    }
    tables.push(table);
  }
  return tables;
}

/**
 * The CRC32C of `bytes` as an unsigned 32-bit number. Pass a previous result as `crc` to continue a
 * checksum over several chunks: `crc32c(b, crc32c(a)) === crc32c(concat(a, b))`.
 */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES as [
    Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array,
  ];
  let c = ~crc >>> 0;
  let i = 0;
  const end8 = bytes.length - (bytes.length % 8);
  // Indexing a Uint32Array with a byte is always in range; the `!` only quiets noUncheckedIndexedAccess.
  while (i < end8) {
    const lo = (c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))) >>> 0;
    c =
      t7[lo & 0xff]! ^
      t6[(lo >>> 8) & 0xff]! ^
      t5[(lo >>> 16) & 0xff]! ^
      t4[lo >>> 24]! ^
      t3[bytes[i + 4]!]! ^
      t2[bytes[i + 5]!]! ^
      t1[bytes[i + 6]!]! ^
      t0[bytes[i + 7]!]!;
    i += 8;
  }
  while (i < bytes.length) {
    c = (c >>> 8) ^ t0[(c ^ bytes[i]!) & 0xff]!;
    i++;
  }
  return ~c >>> 0;
}
