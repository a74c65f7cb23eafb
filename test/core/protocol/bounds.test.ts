// The node's client-reachable bounds as pure rules (src/core/protocol/bounds.ts; docs/limits.md),
// row by row, with their invariants as properties.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  admitLiveReader,
  admitWalBytes,
  checkForkDepth,
  checkHeaderLengths,
  firstMessageEnd,
  jsonPageCut,
} from "../../../src/core/protocol/bounds.ts";

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("B-1 live readers", () => {
  test("a live reader is admitted while fewer than MAX_LIVE_READERS are served", () => {
    expect(admitLiveReader(0, 1)).toBeNull();
    expect(admitLiveReader(9_999, 10_000)).toBeNull();
  });

  test("at MAX_LIVE_READERS a live reader is refused with limit_reached naming the setting", () => {
    expect(admitLiveReader(10_000, 10_000)).toMatchObject({
      code: "limit_reached",
      details: { limit: "MAX_LIVE_READERS", max: 10_000 },
    });
    expect(admitLiveReader(3, 2)?.code).toBe("limit_reached");
  });
});

describe("B-2 JSON page boundaries", () => {
  test("a page ends after its last whole message", () => {
    expect(jsonPageCut(bytes('{"a":1}\n{"b":'), false)).toBe(8);
  });

  test("a page that reached the tail ends with its bytes", () => {
    expect(jsonPageCut(bytes('{"a":1}\n{"b":2}\n'), true)).toBe(16);
    // Nothing left at the tail is an empty page, not a message still to read.
    expect(jsonPageCut(bytes(""), true)).toBe(0);
  });

  test("a page with no message end before the tail asks for the rest of its one message", () => {
    expect(jsonPageCut(bytes('{"big":"xxxx'), false)).toBeNull();
    expect(firstMessageEnd(bytes('xxxx"}\n{"next":1}\n'))).toBe(7);
    expect(firstMessageEnd(bytes("xxxx"))).toBeNull();
    // A message whose newline is the very first byte still ends there (an empty message).
    expect(firstMessageEnd(bytes("\n{}\n"))).toBe(1);
  });

  test("property: a cut is never inside a message and never drops a whole message before it", () => {
    const message = fc.string({ unit: fc.constantFrom("a", "b", '"', "{", "}"), maxLength: 20 });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 10 }), fc.nat(), (messages, take) => {
        const whole = bytes(messages.map((m) => `${m}\n`).join(""));
        const window = whole.subarray(0, take % (whole.byteLength + 1));
        const cut = jsonPageCut(window, window.byteLength === whole.byteLength);
        if (cut === null) return window.indexOf(0x0a) === -1;
        // Ends right after a newline (or at the tail), and no newline is left after it in the window.
        return (cut === 0 || window[cut - 1] === 0x0a || cut === whole.byteLength) && window.subarray(cut).indexOf(0x0a) === -1;
      }),
    );
  });
});

describe("B-4 header lengths", () => {
  test("a header value over MAX_HEADER_VALUE_BYTES is invalid, naming the header and the limit", () => {
    const error = checkHeaderLengths({ "Content-Type": "text/plain", "Producer-Id": "p".repeat(1_025) }, 1_024);
    expect(error).toMatchObject({
      code: "invalid",
      details: { header: "Producer-Id", lengthBytes: 1_025, maxBytes: 1_024, limit: "MAX_HEADER_VALUE_BYTES" },
    });
    expect(error?.message).toContain("Producer-Id");
    expect(error?.message).toContain("1024");
  });

  test("values at the limit and absent headers pass", () => {
    expect(checkHeaderLengths({ "Stream-Seq": "9".repeat(1_024), "Stream-TTL": null }, 1_024)).toBeNull();
  });

  test("property: refused exactly when some value is longer than the limit", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.option(fc.string({ maxLength: 40 }))), fc.nat(40), (headers, max) => {
        const refused = checkHeaderLengths(headers, max) !== null;
        return refused === Object.values(headers).some((value) => value !== null && value.length > max);
      }),
    );
  });
});

describe("B-5 fork depth", () => {
  test("a fork of a stream less than MAX_FORK_DEPTH deep is allowed", () => {
    expect(checkForkDepth(0, 16)).toBeNull();
    expect(checkForkDepth(15, 16)).toBeNull();
  });

  test("a fork of a stream already MAX_FORK_DEPTH deep is invalid with the limit in the message", () => {
    const error = checkForkDepth(16, 16);
    expect(error).toMatchObject({ code: "invalid", details: { reason: "fork_depth", depth: 16, max: 16, limit: "MAX_FORK_DEPTH" } });
    expect(error?.message).toContain("16");
    expect(error?.message).toContain("MAX_FORK_DEPTH");
  });
});

describe("B-6 WAL queue bytes", () => {
  test("an append that keeps the queue within MAX_WAL_QUEUE_BYTES is admitted", () => {
    expect(admitWalBytes(0, 10, 100)).toBeNull();
    expect(admitWalBytes(90, 10, 100)).toBeNull();
  });

  test("an append beyond MAX_WAL_QUEUE_BYTES is unavailable (503, retry later)", () => {
    expect(admitWalBytes(95, 10, 100)).toMatchObject({ code: "unavailable", details: { limit: "MAX_WAL_QUEUE_BYTES", max: 100 } });
  });

  test("a lone append larger than the bound is admitted on an empty queue (the body limit allows it)", () => {
    expect(admitWalBytes(0, 1_000, 100)).toBeNull();
  });

  test("property: what is admitted keeps the queue within the bound, or joins an empty queue", () => {
    fc.assert(
      fc.property(fc.nat(1_000), fc.nat(1_000), fc.integer({ min: 1, max: 1_000 }), (queued, incoming, max) => {
        const admitted = admitWalBytes(queued, incoming, max) === null;
        return admitted === (queued === 0 || queued + incoming <= max);
      }),
    );
  });
});
