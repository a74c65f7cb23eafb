// Rows OFF-* of docs/protocol-rules.md, plus order and round-trip properties of the offset encoding.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  MAX_POSITION_BYTES,
  ZERO_OFFSET,
  compareOffsets,
  formatOffset,
  parseOffset,
  parseOffsetParam,
  resolveReadStart,
} from "../../../src/core/protocol/offsets.ts";

const position = fc.integer({ min: 0, max: MAX_POSITION_BYTES });

describe("offsets", () => {
  test("OFF-1: position 0 is the all-zero offset the suite hard-codes; offsets are fixed-width", () => {
    expect(formatOffset(0)).toBe("0000000000000000_0000000000000000");
    expect(ZERO_OFFSET).toBe(formatOffset(0));
    expect(formatOffset(42)).toBe("0000000000000000_0000000000000042");
    expect(formatOffset(MAX_POSITION_BYTES)).toHaveLength(33);
  });

  test("OFF-1: formatting a position that is not a safe non-negative integer is a caller bug", () => {
    expect(() => formatOffset(-1)).toThrow(RangeError);
    expect(() => formatOffset(1.5)).toThrow(RangeError);
    expect(() => formatOffset(MAX_POSITION_BYTES + 1)).toThrow(RangeError);
  });

  test("OFF-2: offsets compare as strings in position order (property)", () => {
    fc.assert(
      fc.property(position, position, (a, b) => {
        expect(compareOffsets(formatOffset(a), formatOffset(b))).toBe(Math.sign(a - b));
        expect(formatOffset(a) < formatOffset(b)).toBe(a < b);
      }),
    );
  });

  test("OFF-2: format and parse round-trip (property)", () => {
    fc.assert(fc.property(position, (p) => parseOffset(formatOffset(p)) === p));
  });

  test("OFF-2: every string that parses is exactly the offset of its position (property)", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const p = parseOffset(s);
        return p === null || formatOffset(p) === s;
      }),
    );
  });

  test("OFF-3: an absent offset and -1 both mean the start", () => {
    expect(parseOffsetParam([])).toEqual({ ok: true, value: { kind: "start" } });
    expect(parseOffsetParam(["-1"])).toEqual({ ok: true, value: { kind: "start" } });
    const start = parseOffsetParam(["-1"]);
    expect(start.ok && resolveReadStart(start.value, 100)).toEqual({ ok: true, value: 0 });
  });

  test("OFF-4: now means the tail at the time of the read", () => {
    const now = parseOffsetParam(["now"]);
    expect(now).toEqual({ ok: true, value: { kind: "now" } });
    expect(now.ok && resolveReadStart(now.value, 123)).toEqual({ ok: true, value: 123 });
  });

  test("OFF-5: an empty offset parameter is refused", () => {
    const result = parseOffsetParam([""]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe("invalid");
  });

  test("OFF-6: a repeated offset parameter is refused", () => {
    expect(parseOffsetParam(["a", "b"]).ok).toBe(false);
    expect(parseOffsetParam([ZERO_OFFSET, ZERO_OFFSET]).ok).toBe(false);
  });

  test.each([
    "0,1",
    "0 1",
    "../x",
    "x/..",
    "a/b",
    "abc\u0000",
    "abc\n",
    "abc\r\n",
    "NOW",
    "0_0",
    "000000000000000_0000000000000000",
    "0000000000000000-0000000000000000",
    "0000000000000001_0000000000000000",
    "9999999999999999_9999999999999999",
  ])("OFF-7: a value that is not an offset mink issues is refused: %j", (raw) => {
    expect(parseOffset(raw)).toBeNull();
    const result = parseOffsetParam([raw]);
    expect(!result.ok && result.error.code).toBe("invalid");
  });

  test("OFF-7: strings with a space, comma, slash, NUL or newline never parse (property)", () => {
    const bad = fc.oneof(
      fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a} ${b}`),
      fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a},${b}`),
      fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}/${b}`),
      fc.string().map((s) => `${s}\u0000`),
      fc.string().map((s) => `${s}\n`),
    );
    fc.assert(fc.property(bad, (raw) => !parseOffsetParam([raw]).ok));
  });

  test("OFF-8: a well-formed offset beyond the tail is refused with the tail", () => {
    const result = resolveReadStart({ kind: "at", positionBytes: 11 }, 10);
    expect(result).toMatchObject({ ok: false, error: { code: "invalid", details: { tailOffset: formatOffset(10) } } });
    expect(resolveReadStart({ kind: "at", positionBytes: 10 }, 10)).toEqual({ ok: true, value: 10 });
  });

  test("OFF-9: issued offsets are never the sentinels and never contain URL-reserved characters (property)", () => {
    fc.assert(
      fc.property(position, (p) => {
        const offset = formatOffset(p);
        return offset !== "-1" && offset !== "now" && /^[0-9_]+$/.test(offset);
      }),
    );
  });
});
