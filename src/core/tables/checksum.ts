// Checksums of snapshot parts: CRC-32 (IEEE, reflected 0xEDB88320) of the part's UTF-8 bytes, byte at a time.
// The pure core cannot import src/storage, so this is its own small table-driven CRC.

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

export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (crc >>> 8) ^ IEEE[(crc ^ byte) & 0xff]!;
  return (crc ^ 0xffffffff) >>> 0;
}

/** UTF-8 bytes of a string (the core has no TextEncoder type); lone surrogates become U+FFFD, as TextEncoder does. */
export function utf8Bytes(text: string): Uint8Array {
  const out: number[] = [];
  for (const char of text) {
    let code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) out.push(code);
    else if (code < 0x800) out.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000) out.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else out.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  }
  return Uint8Array.from(out);
}
