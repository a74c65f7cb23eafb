// CRC32C is the integrity check of every WAL and stream object: it must be exactly Castagnoli's CRC.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crc32c } from "../../src/storage/crc32c.ts";

/** Bit-at-a-time reference (RFC 3720), independent of the sliced tables. */
function reference(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return ~crc >>> 0;
}

describe("crc32c", () => {
  it("matches the published check values (RFC 3720 B.4 and the catalogue check)", () => {
    expect(crc32c(new TextEncoder().encode("123456789"))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it("equals the bitwise reference for any bytes, length and view offset", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(16), (bytes, skip) => {
        const view = bytes.subarray(Math.min(skip, bytes.length));
        expect(crc32c(view)).toBe(reference(view));
      }),
    );
  });

  it("continues across chunks", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.uint8Array({ maxLength: 100 }), (a, b) => {
        const joined = new Uint8Array(a.length + b.length);
        joined.set(a);
        joined.set(b, a.length);
        expect(crc32c(b, crc32c(a))).toBe(crc32c(joined));
      }),
    );
  });
});
