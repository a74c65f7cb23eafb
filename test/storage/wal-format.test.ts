// The WAL object format: what is encoded decodes to the same thing, and damage of any kind (a flipped byte
// anywhere, a truncation anywhere, trailing bytes) is a typed error naming the key, never a wrong decode.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidRecordError, RECORD_FLAG_EOF, type WalRecord } from "../../src/storage/record-codec.ts";
import {
  WalCorruptError,
  decodeWalObject,
  encodeWalObject,
  walObjectOverheadBytes,
  walRecordBytes,
  type WalObject,
} from "../../src/storage/wal-format.ts";
import { crc32c } from "../../src/storage/crc32c.ts";

const KEY = "wal/n1/00000000000000000007";
const MAX_OFFSET = Number.MAX_SAFE_INTEGER - 1_000;
const wellFormed = (s: string): boolean => new TextDecoder("utf-8", { ignoreBOM: true }).decode(new TextEncoder().encode(s)) === s;
const id = fc.string({ unit: "binary", maxLength: 24 }).filter(wellFormed);

const record: fc.Arbitrary<WalRecord> = fc.record({
  streamId: id,
  streamEpoch: fc.maxSafeNat(),
  firstOffset: fc.nat({ max: MAX_OFFSET }),
  flags: fc.constantFrom(0, RECORD_FLAG_EOF),
  meta: fc.uint8Array({ maxLength: 40 }),
  data: fc.uint8Array({ maxLength: 300 }),
});

const walObject: fc.Arbitrary<WalObject> = fc.oneof(
  fc.record({
    kind: fc.constant("records" as const),
    nodeId: id,
    nodeEpoch: fc.maxSafeNat(),
    seq: fc.maxSafeNat(),
    records: fc.array(record, { maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant("seal" as const), nodeId: id, seq: fc.maxSafeNat(), sealedBy: id, sealEpoch: fc.maxSafeNat() }),
);

function expectCorrupt(bytes: Uint8Array): WalCorruptError {
  let caught: unknown;
  try {
    decodeWalObject(bytes, KEY);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(WalCorruptError);
  expect((caught as WalCorruptError).key).toBe(KEY);
  expect((caught as WalCorruptError).message).toContain(KEY);
  return caught as WalCorruptError;
}

const sample: WalObject = {
  kind: "records",
  nodeId: "node-é",
  nodeEpoch: 1_700_000_000_000,
  seq: 7,
  records: [
    { streamId: "s/1", streamEpoch: 3, firstOffset: 0, flags: 0, meta: new Uint8Array([1, 2]), data: new TextEncoder().encode("hello") },
    { streamId: "s/2", streamEpoch: 1, firstOffset: 10, flags: RECORD_FLAG_EOF, meta: new Uint8Array(0), data: new Uint8Array(0) },
  ],
};

describe("WAL format", () => {
  it("round-trips any records object or seal (property: empty data, unicode ids, u64 extremes)", () => {
    fc.assert(
      fc.property(walObject, (object) => {
        const bytes = encodeWalObject(object);
        expect(decodeWalObject(bytes, KEY)).toEqual(object);
        if (object.kind === "records") {
          const expected = walObjectOverheadBytes(object.nodeId) + object.records.reduce((n, r) => n + walRecordBytes(r), 0);
          expect(bytes.byteLength).toBe(expected);
        }
      }),
    );
  });

  it("keeps a leading byte-order mark in ids (decoders must not strip it)", () => {
    const object: WalObject = { ...sample, nodeId: "\uFEFFn", records: [{ ...sample.records[0]!, streamId: "\uFEFF" }] };
    expect(decodeWalObject(encodeWalObject(object), KEY)).toEqual(object);
  });

  it("starts with the magic and version, and decodes from a view at any offset", () => {
    const bytes = encodeWalObject(sample);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("MKWL");
    expect([bytes[4], bytes[5]]).toEqual([0, 1]);
    const padded = new Uint8Array(bytes.byteLength + 5);
    padded.set(bytes, 3);
    expect(decodeWalObject(padded.subarray(3, 3 + bytes.byteLength), KEY)).toEqual(sample);
  });

  it("detects every flipped byte and every truncation of an object, naming the key", () => {
    const bytes = encodeWalObject(sample);
    for (let i = 0; i < bytes.byteLength; i++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const damaged = bytes.slice();
        damaged[i]! ^= mask;
        expectCorrupt(damaged);
      }
    }
    for (let length = 0; length < bytes.byteLength; length++) expectCorrupt(bytes.slice(0, length));
    const extended = new Uint8Array(bytes.byteLength + 1);
    extended.set(bytes);
    expectCorrupt(extended);
  });

  it("detects a flipped byte or a truncation anywhere (property)", () => {
    fc.assert(
      fc.property(walObject, fc.nat(), fc.integer({ min: 1, max: 255 }), fc.nat(), (object, at, mask, cut) => {
        const bytes = encodeWalObject(object);
        const damaged = bytes.slice();
        damaged[at % bytes.byteLength]! ^= mask;
        expectCorrupt(damaged);
        expectCorrupt(bytes.slice(0, cut % bytes.byteLength));
      }),
    );
  });

  it("names what is wrong: checksum, torn length, magic, version, kind", () => {
    const bytes = encodeWalObject(sample);
    const flipped = bytes.slice();
    flipped[30]! ^= 1;
    expect(expectCorrupt(flipped).problem).toMatch(/checksum/);
    expect(expectCorrupt(bytes.slice(0, 40)).problem).toMatch(/torn/);
    expect(expectCorrupt(new TextEncoder().encode("not a wal object")).problem).toMatch(/magic/);
    expect(expectCorrupt(new Uint8Array(3)).problem).toMatch(/truncated/);
  });

  it("a forged object with a valid checksum is still refused by name: version, kind, u64 past 2^53, flags, record end, count, seal epoch", () => {
    // One record of one data byte, ids "n1" and "s": every field at a fixed offset (68 bytes in all).
    const one: WalObject = {
      kind: "records",
      nodeId: "n1",
      nodeEpoch: 1,
      seq: 2,
      records: [{ streamId: "s", streamEpoch: 3, firstOffset: 4, flags: 0, meta: new Uint8Array(0), data: new Uint8Array([9]) }],
    };
    const bytes = encodeWalObject(one);
    expect(bytes.byteLength).toBe(68);
    /** `bytes` with one field rewritten and the checksum recomputed, so only the field's own check can refuse it. */
    const forge = (source: Uint8Array, write: (view: DataView) => void): Uint8Array => {
      const copy = source.slice();
      const view = new DataView(copy.buffer);
      write(view);
      view.setUint32(copy.byteLength - 4, crc32c(copy.subarray(0, copy.byteLength - 4)));
      return copy;
    };
    const cases: [(view: DataView) => void, RegExp][] = [
      [(v) => v.setUint16(4, 2), /unsupported format version 2/],
      [(v) => v.setUint8(6, 3), /unknown object kind 3/],
      [(v) => v.setBigUint64(23, 2n ** 53n), /seq beyond 2\^53/],
      [(v) => v.setUint8(54, 2), /unknown record flags 2/],
      [(v) => v.setBigUint64(46, BigInt(Number.MAX_SAFE_INTEGER)), /record end beyond 2\^53/],
      [(v) => v.setUint32(31, 2), /truncated/],
      [(v) => v.setUint32(31, 0), /29 unparsed bytes before the checksum/],
    ];
    for (const [write, problem] of cases) expect(expectCorrupt(forge(bytes, write)).problem).toMatch(problem);
    // The largest safe u64 is a value, not an overflow.
    const top = decodeWalObject(forge(bytes, (v) => v.setBigUint64(23, BigInt(Number.MAX_SAFE_INTEGER))), KEY);
    expect(top.seq).toBe(Number.MAX_SAFE_INTEGER);
    // A seal's header epoch (offset 15) must equal its seal epoch.
    const seal = encodeWalObject({ kind: "seal", nodeId: "n1", seq: 2, sealedBy: "n2", sealEpoch: 5 });
    expect(expectCorrupt(forge(seal, (v) => v.setBigUint64(15, 4n))).problem).toMatch(/seal epoch 5 differs from header epoch 4/);
  });

  it("refuses to encode what it could not decode exactly", () => {
    const base = sample.records[0]!;
    const bad: Partial<WalRecord>[] = [
      { streamEpoch: -1 },
      { streamEpoch: 2 ** 53 },
      { firstOffset: 1.5 },
      { firstOffset: Number.MAX_SAFE_INTEGER, data: new Uint8Array(1) },
      { flags: 2 },
      { streamId: "\uD800" },
      { streamId: "x".repeat(70_000) },
    ];
    for (const change of bad) {
      expect(() => encodeWalObject({ ...sample, records: [{ ...base, ...change }] }), JSON.stringify(Object.keys(change))).toThrow(
        InvalidRecordError,
      );
    }
    expect(() => encodeWalObject({ ...sample, seq: -1 })).toThrow(InvalidRecordError);
  });
});
