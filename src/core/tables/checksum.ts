// Checksums of snapshot parts: CRC-32 (IEEE, reflected 0xEDB88320) of a text's UTF-8 bytes, and that
// byte length, computed from the string's code units without building the bytes (a snapshot of a million
// rows checks every line and part: allocation per line dominated). The pure core cannot import
// src/storage, so this is its own small table-driven CRC.

function crcTable(polynomial: number): Uint32Array {
  const table = new Uint32Array(256);
  for (let b = 0; b < 256; b++) {
    let crc = b;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ polynomial : crc >>> 1;
    table[b] = crc >>> 0;
  }
  return table;
}

const IEEE = crcTable(0xedb88320);
const REPLACEMENT = 0xfffd;

/**
 * Calls `each` with every UTF-8 byte of `text`, as TextEncoder would encode it (a lone surrogate as
 * U+FFFD). Returns the byte count.
 */
function forEachUtf8Byte(text: string, each: (byte: number) => void): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (code >= 0xd800 && code <= 0xdfff) code = REPLACEMENT;
    if (code < 0x80) {
      each(code);
      count += 1;
    } else if (code < 0x800) {
      each(0xc0 | (code >> 6));
      each(0x80 | (code & 0x3f));
      count += 2;
    } else if (code < 0x10000) {
      each(0xe0 | (code >> 12));
      each(0x80 | ((code >> 6) & 0x3f));
      each(0x80 | (code & 0x3f));
      count += 3;
    } else {
      each(0xf0 | (code >> 18));
      each(0x80 | ((code >> 12) & 0x3f));
      each(0x80 | ((code >> 6) & 0x3f));
      each(0x80 | (code & 0x3f));
      count += 4;
    }
  }
  return count;
}

const ignore = (): void => undefined;

/** The UTF-8 byte length of `text`. */
export function utf8Length(text: string): number {
  let ascii = true;
  for (let i = 0; i < text.length && ascii; i++) ascii = text.charCodeAt(i) < 0x80;
  return ascii ? text.length : forEachUtf8Byte(text, ignore);
}

/** CRC-32 of `text`'s UTF-8 bytes, and their count. */
export function crc32OfText(text: string): { crc: number; bytes: number } {
  let crc = 0xffffffff;
  const bytes = forEachUtf8Byte(text, (byte) => {
    crc = (crc >>> 8) ^ IEEE[(crc ^ byte) & 0xff]!;
  });
  return { crc: (crc ^ 0xffffffff) >>> 0, bytes };
}
