// Rows FRK-2..FRK-16, DEL-* and LIFE-* of docs/protocol-rules.md.
import { describe, expect, test } from "vitest";
import {
  checkAccess,
  checkForkSource,
  deleteOutcome,
  parseForkHeaders,
  resolveForkPoint,
  sourceAfterForkRemoved,
  type ForkSourceView,
  type LifecycleView,
} from "../../../src/core/protocol/fork.ts";
import { ZERO_OFFSET, formatOffset } from "../../../src/core/protocol/offsets.ts";
import { NO_EXPIRY } from "../../../src/core/protocol/ttl.ts";

const SRC = "/v1/stream/src";
const source: ForkSourceView = {
  streamId: "s1",
  lifecycle: "live",
  contentType: "text/plain",
  expiry: NO_EXPIRY,
  tailPositionBytes: 10,
};

describe("fork headers", () => {
  test("FRK-2: fork offset or sub-offset without Stream-Forked-From is refused, even a sub-offset of 0", () => {
    expect(parseForkHeaders(null, ZERO_OFFSET, null)).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseForkHeaders(null, null, "0")).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseForkHeaders(null, null, "")).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseForkHeaders(null, null, null)).toEqual({ ok: true, value: null });
  });

  test.each(["-1", "now", "0_0", "abc", "9999999999999999_9999999999999999"])(
    "FRK-3: Stream-Fork-Offset %j is not an offset",
    (offset) => {
      expect(parseForkHeaders(SRC, offset, null)).toMatchObject({ ok: false, error: { code: "invalid" } });
    },
  );

  test.each(["-1", "abc", "1.5", "05", "+1", ""])("FRK-4: Stream-Fork-Sub-Offset %j is malformed", (sub) => {
    expect(parseForkHeaders(SRC, ZERO_OFFSET, sub)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("FRK-4: a sub-offset above 0 needs Stream-Fork-Offset; 0 does not", () => {
    expect(parseForkHeaders(SRC, null, "1")).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseForkHeaders(SRC, null, "0")).toEqual({
      ok: true,
      value: { sourceName: "src", anchorPositionBytes: null, subOffset: 0 },
    });
  });

  test("FRK-4: sub-offset absent and 0 are the same request", () => {
    expect(parseForkHeaders(SRC, ZERO_OFFSET, "0")).toEqual(parseForkHeaders(SRC, ZERO_OFFSET, null));
    expect(parseForkHeaders(SRC, formatOffset(3), "2")).toEqual({
      ok: true,
      value: { sourceName: "src", anchorPositionBytes: 3, subOffset: 2 },
    });
  });
});

describe("fork source", () => {
  const request = { sourceName: "src", anchorPositionBytes: null, subOffset: 0 };

  test("FRK-5: a missing source is not found", () => {
    expect(checkForkSource(request, null, null)).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  test("FRK-6: a soft-deleted source is a conflict", () => {
    expect(checkForkSource(request, null, { ...source, lifecycle: "soft-deleted" })).toMatchObject({
      ok: false,
      error: { code: "conflict", details: { reason: "source_deleted" } },
    });
  });

  test("FRK-7: a different content type is a conflict; the same media type or none is fine", () => {
    expect(checkForkSource(request, "application/json", source)).toMatchObject({
      ok: false,
      error: { code: "conflict", details: { reason: "content_type" } },
    });
    expect(checkForkSource(request, "TEXT/PLAIN; charset=utf-8", source)).toEqual({ ok: true, value: 10 });
    expect(checkForkSource(request, null, source)).toEqual({ ok: true, value: 10 });
  });

  test("FRK-8: the anchor defaults to the source's tail and may not pass it", () => {
    expect(checkForkSource(request, null, source)).toEqual({ ok: true, value: 10 });
    expect(checkForkSource({ ...request, anchorPositionBytes: 0 }, null, source)).toEqual({ ok: true, value: 0 });
    expect(checkForkSource({ ...request, anchorPositionBytes: 10 }, null, source)).toEqual({ ok: true, value: 10 });
    expect(checkForkSource({ ...request, anchorPositionBytes: 11 }, null, source)).toMatchObject({
      ok: false,
      error: { code: "invalid", details: { tailOffset: formatOffset(10) } },
    });
  });

  test("FRK-13: a closed source can be forked (closure is not part of the check)", () => {
    expect(checkForkSource(request, "text/plain", source).ok).toBe(true);
  });
});

describe("fork point", () => {
  test("FRK-9: a byte sub-offset moves the fork point inside the record at the anchor, up to its end", () => {
    expect(resolveForkPoint(0, 3, { kind: "bytes", lengthBytes: 5 })).toEqual({ ok: true, value: 3 });
    expect(resolveForkPoint(5, 3, { kind: "bytes", lengthBytes: 6 })).toEqual({ ok: true, value: 8 });
    expect(resolveForkPoint(0, 5, { kind: "bytes", lengthBytes: 5 })).toEqual({ ok: true, value: 5 });
  });

  test("FRK-9: a JSON sub-offset counts messages of the batch at the anchor", () => {
    const record = { kind: "json", messageLengthsBytes: [8, 8, 8, 8] } as const;
    expect(resolveForkPoint(0, 2, record)).toEqual({ ok: true, value: 16 });
    expect(resolveForkPoint(100, 4, record)).toEqual({ ok: true, value: 132 });
  });

  test("FRK-9: sub-offset 0 is the anchor itself, with or without a record", () => {
    expect(resolveForkPoint(7, 0, null)).toEqual({ ok: true, value: 7 });
    expect(resolveForkPoint(7, 0, { kind: "bytes", lengthBytes: 1 })).toEqual({ ok: true, value: 7 });
  });

  test("FRK-10: overshooting the record, or a sub-offset with no record at the anchor, is refused", () => {
    expect(resolveForkPoint(0, 5, { kind: "bytes", lengthBytes: 2 })).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(resolveForkPoint(0, 4, { kind: "json", messageLengthsBytes: [1, 1, 1] })).toMatchObject({
      ok: false,
      error: { code: "invalid" },
    });
    expect(resolveForkPoint(0, 1, null)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });
});

describe("lifecycle", () => {
  const live: LifecycleView = { lifecycle: "live", expiry: NO_EXPIRY, lastAccessMs: 0, forkCount: 0 };

  test("LIFE-*: a live, unexpired stream is accessible; a missing one is not found", () => {
    expect(checkAccess(live, 1_000)).toEqual({ kind: "ok" });
    expect(checkAccess(null, 1_000)).toEqual({ kind: "not-found", remove: false });
  });

  test("LIFE-1: an expired stream without forks is not found, and removed", () => {
    expect(checkAccess({ ...live, expiry: { ttlSeconds: 1, expiresAtMs: null } }, 1_000)).toEqual({
      kind: "not-found",
      remove: true,
    });
  });

  test("LIFE-2: an expired stream that forks still read is gone, and soft-deleted", () => {
    expect(checkAccess({ ...live, expiry: { ttlSeconds: 1, expiresAtMs: null }, forkCount: 1 }, 1_000)).toEqual({
      kind: "gone",
      softDelete: true,
    });
  });

  test("DEL-3 / HD-2: a soft-deleted stream is gone to every direct operation", () => {
    expect(checkAccess({ ...live, lifecycle: "soft-deleted", forkCount: 1 }, 0)).toEqual({ kind: "gone", softDelete: false });
  });

  test("DEL-1: deleting a stream without forks removes it", () => {
    expect(deleteOutcome(0)).toBe("remove");
  });

  test("DEL-2 / FRK-16: deleting a stream with forks soft-deletes it", () => {
    expect(deleteOutcome(1)).toBe("soft-delete");
    expect(deleteOutcome(10)).toBe("soft-delete");
  });

  test("DEL-4: a soft-deleted source is removed once its last fork is gone, a live one is kept", () => {
    expect(sourceAfterForkRemoved({ lifecycle: "soft-deleted", forkCount: 0 })).toBe("remove");
    expect(sourceAfterForkRemoved({ lifecycle: "soft-deleted", forkCount: 1 })).toBe("keep");
    expect(sourceAfterForkRemoved({ lifecycle: "live", forkCount: 0 })).toBe("keep");
  });

  test("DEL-4: deletes cascade up a chain of soft-deleted sources (model)", () => {
    // l0 <- l1 <- l2; l0 and l1 deleted while read; deleting l2 releases l1, which releases l0.
    interface Node {
      readonly lifecycle: "soft-deleted";
      forkCount: number;
      readonly source: string | null;
    }
    const streams = new Map<string, Node>([
      ["l0", { lifecycle: "soft-deleted", forkCount: 1, source: null }],
      ["l1", { lifecycle: "soft-deleted", forkCount: 1, source: "l0" }],
    ]);
    const removed: string[] = [];
    let next: string | null = "l1";
    while (next !== null) {
      const stream = streams.get(next);
      if (stream === undefined) break;
      stream.forkCount -= 1;
      if (sourceAfterForkRemoved(stream) === "keep") break;
      removed.push(next);
      next = stream.source;
    }
    expect(removed).toEqual(["l1", "l0"]);
  });
});
