// Stream objects: immutable, checksummed, one stream's contiguous range; a repeated write of the same range
// is success only if the bytes are identical, and damage is a typed error naming the key.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { streamObjectKey } from "../../src/storage/keys.ts";
import { RECORD_FLAG_EOF, type WalRecord } from "../../src/storage/record-codec.ts";
import {
  NonContiguousRecordsError,
  StreamObjectConflictError,
  StreamObjectCorruptError,
  decodeStreamObject,
  encodeStreamObject,
  readStreamObject,
  writeStreamObject,
} from "../../src/storage/stream-object.ts";

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const wellFormed = (s: string): boolean => new TextDecoder("utf-8", { ignoreBOM: true }).decode(new TextEncoder().encode(s)) === s;

/** A contiguous run of records of one stream from `first`, built from chunk sizes. */
function run(streamId: string, first: number, chunks: Uint8Array[], epochs: number[] = [], eof = false): WalRecord[] {
  let offset = first;
  return chunks.map((data, i) => {
    const record = {
      streamId,
      streamEpoch: epochs[i] ?? 1,
      firstOffset: offset,
      flags: eof && i === chunks.length - 1 ? RECORD_FLAG_EOF : 0,
      meta: text(`m${i}`),
      data,
    };
    offset += data.byteLength;
    return record;
  });
}

const keyOf = (records: WalRecord[]): string =>
  streamObjectKey(records[0]!.streamId, records[0]!.firstOffset, records.at(-1)!.firstOffset + records.at(-1)!.data.byteLength);

describe("stream objects", () => {
  it("round-trip any contiguous run of one stream (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", minLength: 1, maxLength: 10 }).filter(wellFormed),
        fc.nat({ max: 2 ** 50 }),
        fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 1, maxLength: 10 }),
        fc.boolean(),
        (streamId, first, chunks, eof) => {
          const records = run(streamId, first, chunks, [], eof);
          const decoded = decodeStreamObject(encodeStreamObject(records), keyOf(records));
          expect(decoded.records).toEqual(records);
          expect(decoded.firstOffset).toBe(first);
          expect(decoded.endOffset).toBe(first + chunks.reduce((n, c) => n + c.byteLength, 0));
        },
      ),
    );
    // CPU-bound: about 5 s on a busy 2-core machine, against vitest's default of 5 s.
  }, 30_000);

  it("detects every flipped byte and truncation, and an object under another key, naming the key", () => {
    const records = run("s1", 10, [text("hello"), text(""), text("world")], [1, 2, 2]);
    const key = keyOf(records);
    const bytes = encodeStreamObject(records);
    const corrupt = (body: Uint8Array, at = key): void => {
      expect(() => decodeStreamObject(body, at)).toThrow(StreamObjectCorruptError);
      expect(() => decodeStreamObject(body, at)).toThrow(at);
    };
    for (let i = 0; i < bytes.byteLength; i++) {
      const damaged = bytes.slice();
      damaged[i]! ^= 0x04;
      corrupt(damaged);
      corrupt(bytes.slice(0, i));
    }
    corrupt(bytes, streamObjectKey("s1", 10, 11));
    corrupt(bytes, streamObjectKey("s2", 10, 20));
  });

  it("refuse gaps, overlaps, mixed streams, going back in epoch, data after the end, and nothing", () => {
    const good = run("s1", 0, [text("ab"), text("cd")]);
    const bad: WalRecord[][] = [
      [good[0]!, { ...good[1]!, firstOffset: 3 }],
      [good[0]!, { ...good[1]!, firstOffset: 1 }],
      [good[0]!, { ...good[1]!, streamId: "s2" }],
      [{ ...good[0]!, streamEpoch: 2 }, good[1]!],
      [{ ...good[0]!, flags: RECORD_FLAG_EOF }, good[1]!],
      [],
    ];
    for (const records of bad) expect(() => encodeStreamObject(records)).toThrow(NonContiguousRecordsError);
  });

  it("write once; a repeated write of the same range is success with identical bytes, a conflict otherwise", async () => {
    const store = new MemoryStore();
    const records = run("s1", 0, [text("abc"), text("de")]);
    const ref = await writeStreamObject(store, records);
    expect(ref).toEqual({ key: keyOf(records), firstOffset: 0, endOffset: 5, bytes: encodeStreamObject(records).byteLength });
    expect(await writeStreamObject(store, records)).toEqual(ref);
    expect((await readStreamObject(store, ref.key)).records).toEqual(records);

    const other = run("s1", 0, [text("abX"), text("de")]);
    await expect(writeStreamObject(store, other)).rejects.toBeInstanceOf(StreamObjectConflictError);
    expect((await readStreamObject(store, ref.key)).records).toEqual(records);
  });

  it("a lost answer to the create leaves exactly one object", async () => {
    const store = new MemoryStore();
    store.inject({ op: "put", keyPrefix: "streams/", kind: "lost_answer" });
    const records = run("s1", 0, [text("abc")]);
    await writeStreamObject(store, records, { retry: { sleep: async () => {} } });
    expect(store.keys()).toEqual([keyOf(records)]);
    expect(store.counts.put).toBe(1);
  });
});
