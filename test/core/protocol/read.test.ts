// Rows RD-*, LP-* and CCH-5 of docs/protocol-rules.md, and the `live` parameter.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { readEndFlags } from "../../../src/core/protocol/closure.ts";
import {
  CURSOR_EPOCH_MS,
  decideLiveStart,
  isTailProbe,
  parseCursorParam,
  parseReadMode,
  responseCursor,
} from "../../../src/core/protocol/read.ts";

describe("read mode", () => {
  test("RD-1: no live parameter is a catch-up read (live=false too, for older clients)", () => {
    expect(parseReadMode([], false)).toEqual({ ok: true, value: "catch-up" });
    expect(parseReadMode(["false"], false)).toEqual({ ok: true, value: "catch-up" });
  });

  test("LP-1 / SSE-1: long-poll and sse need an explicit offset", () => {
    expect(parseReadMode(["long-poll"], true)).toEqual({ ok: true, value: "long-poll" });
    expect(parseReadMode(["sse"], true)).toEqual({ ok: true, value: "sse" });
    expect(parseReadMode(["long-poll"], false)).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseReadMode(["sse"], false)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test.each([["true"], ["LONG-POLL"], [""], ["long-poll", "sse"]])("RD-1: live=%j is refused", (...values) => {
    expect(parseReadMode(values, true)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("RD-6: a catch-up read at offset=now is a tail probe; live reads at now are not", () => {
    expect(isTailProbe("catch-up", { kind: "now" })).toBe(true);
    expect(isTailProbe("long-poll", { kind: "now" })).toBe(false);
    expect(isTailProbe("catch-up", { kind: "start" })).toBe(false);
  });
});

describe("response end flags", () => {
  test("RD-2: up-to-date exactly when the response reaches the tail", () => {
    expect(readEndFlags(10, 10, false)).toEqual({ upToDate: true, closed: false });
    expect(readEndFlags(4, 10, false)).toEqual({ upToDate: false, closed: false });
  });

  test("RD-3: closed only at the final offset of a closed stream, never on a partial page", () => {
    expect(readEndFlags(10, 10, true)).toEqual({ upToDate: true, closed: true });
    expect(readEndFlags(4, 10, true)).toEqual({ upToDate: false, closed: false });
  });

  test("RD-4: an empty read at the tail is up to date, and EOF when closed", () => {
    expect(readEndFlags(0, 0, false)).toEqual({ upToDate: true, closed: false });
    expect(readEndFlags(0, 0, true)).toEqual({ upToDate: true, closed: true });
  });
});

describe("live reads", () => {
  test("LP-1: data at the start (including a fork's inherited range) answers at once", () => {
    expect(decideLiveStart(0, 10, false)).toEqual({ kind: "respond" });
    expect(decideLiveStart(9, 10, true)).toEqual({ kind: "respond" });
  });

  test("LP-2: at the tail of an open stream, wait", () => {
    expect(decideLiveStart(10, 10, false)).toEqual({ kind: "wait" });
    expect(decideLiveStart(0, 0, false)).toEqual({ kind: "wait" });
  });

  test("LP-5: at the tail of a closed stream, answer EOF at once", () => {
    expect(decideLiveStart(10, 10, true)).toEqual({ kind: "eof" });
  });
});

describe("cursor", () => {
  const now = CURSOR_EPOCH_MS + 1000 * 20 * 1000 + 5_000; // interval 1000

  test("CCH-5: the cursor is the current 20 s interval number since 2024-10-09", () => {
    expect(responseCursor(null, now, 1)).toBe("1000");
    expect(responseCursor(999, now, 1)).toBe("1000");
    expect(/^\d+$/.test(responseCursor(null, Date.UTC(2026, 5, 1), 1))).toBe(true);
  });

  test("LP-6 / CCH-5: a client cursor at or past the interval gets a strictly greater cursor", () => {
    expect(responseCursor(1000, now, 1)).toBe("1001");
    expect(responseCursor(1000, now, 3600)).toBe("1180");
    expect(responseCursor(1500, now, 50)).toBe("1503");
  });

  test("CCH-5: the response cursor never goes below the client's (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 4_000 }),
        fc.integer({ min: 0, max: 4e12 }),
        (client, jitter, offsetMs) => {
          const cursor = Number(responseCursor(client, CURSOR_EPOCH_MS + offsetMs, jitter));
          const interval = Math.floor(offsetMs / 20_000);
          expect(cursor).toBeGreaterThanOrEqual(interval);
          if (client >= interval) expect(cursor).toBeGreaterThan(client);
        },
      ),
    );
  });

  test("CCH-5: the cursor parameter is a decimal number, anything else is ignored", () => {
    expect(parseCursorParam(["1234"])).toBe(1234);
    expect(parseCursorParam([])).toBeNull();
    expect(parseCursorParam(["abc"])).toBeNull();
    expect(parseCursorParam(["-1"])).toBeNull();
  });
});
