// keys.ts owns every key shape: ids are escaped injectively, never let "/" or dot segments through, and
// numbers sort lexicographically in numeric order (S3 lists in key order).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  InvalidIdError,
  InvalidKeyError,
  checkpointKey,
  escapeId,
  manifestKey,
  parseStreamObjectKey,
  parseWalKey,
  streamObjectKey,
  streamPrefix,
  unescapeId,
  walKey,
  walPrefix,
} from "../../src/storage/keys.ts";

const wellFormed = (s: string): boolean => {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(new TextEncoder().encode(s)) === s;
  } catch {
    return false;
  }
};
// At most 16 code points: 16 × 4 UTF-8 bytes × 3 characters stays within the 200-character escaped limit.
const anyId = fc.string({ unit: "binary", minLength: 1, maxLength: 16 }).filter(wellFormed);

describe("key shapes", () => {
  it("are the documented shapes", () => {
    expect(walKey("node-1", 42)).toBe("wal/node-1/00000000000000000042");
    expect(streamObjectKey("s_1", 0, 1024)).toBe("streams/s_1/00000000000000000000-00000000000000001024");
    expect(manifestKey("s_1")).toBe("streams/s_1/manifest");
    expect(checkpointKey("node-1")).toBe("nodes/node-1/checkpoint");
  });

  it("escape '/', '.', '%' and non-ASCII, so no id reaches into another's keys or forms a dot segment", () => {
    expect(escapeId("a/b")).toBe("a%2Fb");
    expect(escapeId("..")).toBe("%2E%2E");
    expect(escapeId("50%")).toBe("50%25");
    expect(escapeId("é")).toBe("%C3%A9");
    expect(unescapeId(escapeId("\uFEFFx"))).toBe("\uFEFFx");
    expect(walKey("../x", 0)).toBe("wal/%2E%2E%2Fx/00000000000000000000");
    expect(walPrefix("a")).not.toSatisfy((p: string) => walKey("a/b", 1).startsWith(p));
    expect(streamPrefix("s")).not.toSatisfy((p: string) => manifestKey("s/x").startsWith(p));
  });

  it("refuse empty ids, lone surrogates and ids too long to key", () => {
    expect(() => escapeId("")).toThrow(InvalidIdError);
    expect(() => escapeId("a\uD800b")).toThrow(InvalidIdError);
    expect(() => escapeId("x".repeat(201))).toThrow(InvalidIdError);
    expect(() => escapeId("é".repeat(34))).toThrow(InvalidIdError); // 34 × 6 escaped bytes
    expect(() => walKey("n", -1)).toThrow(RangeError);
    expect(() => walKey("n", 2 ** 53)).toThrow(RangeError);
    expect(() => walKey("n", 1.5)).toThrow(RangeError);
  });

  it("round-trip any well-formed id, and escaping is injective", () => {
    fc.assert(
      fc.property(anyId, anyId, fc.maxSafeNat(), (a, b, seq) => {
        const escaped = escapeId(a);
        expect(escaped).toMatch(/^[A-Za-z0-9_%-]+$/);
        expect(unescapeId(escaped)).toBe(a);
        expect(parseWalKey(walKey(a, seq))).toEqual({ nodeId: a, seq });
        if (a !== b) expect(escapeId(b)).not.toBe(escaped);
      }),
    );
  });

  it("sort in numeric order", () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.maxSafeNat(), (x, y) => {
        expect(walKey("n", x) < walKey("n", y)).toBe(x < y);
        expect(streamObjectKey("s", x, x) < streamObjectKey("s", y, y)).toBe(x < y);
      }),
    );
  });

  it("parse stream object keys and refuse anything else", () => {
    expect(parseStreamObjectKey(streamObjectKey("a/b", 5, 9))).toEqual({ streamId: "a/b", firstOffset: 5, endOffset: 9 });
    expect(() => streamObjectKey("s", 9, 5)).toThrow(RangeError);
    for (const bad of [
      "streams/s/manifest",
      "streams/s/00000000000000000009-00000000000000000005",
      "streams/a/b/00000000000000000000-00000000000000000001",
      "wal/n/42",
      "wal/n/99999999999999999999",
      "wal/a%2fb/00000000000000000000", // not the canonical (uppercase) escape
      "wal/a.b/00000000000000000000",
      "nodes/n/00000000000000000000",
    ]) {
      expect(() => (bad.startsWith("wal/") ? parseWalKey(bad) : parseStreamObjectKey(bad)), bad).toThrow(InvalidKeyError);
    }
  });
});
