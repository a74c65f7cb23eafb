// Rows SEQ-* and APP-8 of docs/protocol-rules.md.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { checkStreamSeq, compareStreamSeq, parseStreamSeqHeader } from "../../../src/core/protocol/stream-seq.ts";

describe("Stream-Seq", () => {
  test("APP-8: an empty Stream-Seq is refused; an absent one is null", () => {
    expect(parseStreamSeqHeader("")).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseStreamSeqHeader(null)).toEqual({ ok: true, value: null });
    expect(parseStreamSeqHeader("001")).toEqual({ ok: true, value: "001" });
  });

  test("SEQ-1: without Stream-Seq nothing is checked and the last value stays", () => {
    expect(checkStreamSeq("005", null)).toEqual({ ok: true, value: "005" });
    expect(checkStreamSeq(null, null)).toEqual({ ok: true, value: null });
  });

  test("SEQ-2: the first Stream-Seq of a stream is accepted and becomes the last value", () => {
    expect(checkStreamSeq(null, "001")).toEqual({ ok: true, value: "001" });
  });

  test("SEQ-3: a value equal to or below the last is a conflict naming the last value", () => {
    expect(checkStreamSeq("002", "001")).toMatchObject({
      ok: false,
      error: { code: "conflict", details: { reason: "stream_seq", lastStreamSeq: "002" } },
    });
    expect(checkStreamSeq("001", "001")).toMatchObject({ ok: false, error: { code: "conflict" } });
  });

  test("SEQ-4: comparison is byte-wise, not numeric and case-sensitive", () => {
    expect(checkStreamSeq("2", "10").ok).toBe(false);
    expect(checkStreamSeq("09", "10")).toEqual({ ok: true, value: "10" });
    expect(checkStreamSeq("a", "B").ok).toBe(false);
  });

  test("SEQ-4: order is UTF-8 byte order, also above U+FFFF", () => {
    // U+FF61 encodes as EF BD A1, U+1F600 as F0 9F 98 80: the astral one is greater byte-wise, though
    // its first UTF-16 code unit (0xD83D) is smaller than 0xFF61.
    expect(compareStreamSeq("\u{1F600}", "\uFF61")).toBe(1);
    expect(compareStreamSeq("ab", "abc")).toBe(-1);
    expect(compareStreamSeq("abc", "abc")).toBe(0);
  });

  test("SEQ-4: sorted distinct values are accepted in order, each refused when replayed (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[0-9a-zA-Z]+$/), { minLength: 2, maxLength: 10 }), (values) => {
        const sorted = [...values].sort();
        let last: string | null = null;
        for (const value of sorted) {
          const result = checkStreamSeq(last, value);
          expect(result).toEqual({ ok: true, value });
          expect(checkStreamSeq(value, value).ok).toBe(false);
          last = value;
        }
      }),
    );
  });

  test("SEQ-4: for byte strings the order is the plain string order (property)", () => {
    const byteString = fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(byteString, byteString, (a, b) => compareStreamSeq(a, b) === (a < b ? -1 : a > b ? 1 : 0)),
    );
  });

  test("SEQ-5: a rejected value does not replace the last one", () => {
    const rejected = checkStreamSeq("005", "003");
    expect(rejected.ok).toBe(false);
    expect(checkStreamSeq("005", "006")).toEqual({ ok: true, value: "006" });
  });
});
