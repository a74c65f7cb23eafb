// readAtMost and discardAtMost (src/subscriptions/bounded-read.ts): a body is returned (or dropped) whole
// while it fits, refused past the bound having read at most the bound plus one chunk plus the drain, and a
// declared length over the bound is not read at all.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { discardAtMost, readAtMost } from "../../src/subscriptions/bounded-read.ts";

/** A body of `chunks` (byte counts), counting what the reader pulled. */
function body(chunks: readonly number[]): { stream: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let next = 0;
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = chunks[next++];
      if (size === undefined) return controller.close();
      pulled += size;
      controller.enqueue(new Uint8Array(size).fill(next));
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

describe("readAtMost", () => {
  it("property: a body within the bound comes back whole; past it, it is refused after reading at most one chunk past the bound", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 12 }), fc.integer({ min: 0, max: 200 }), async (chunks, max) => {
        const total = chunks.reduce((a, b) => a + b, 0);
        const source = body(chunks);
        const read = await readAtMost(source.stream, max);
        if (total <= max) {
          expect(read.ok).toBe(true);
          if (read.ok) expect(read.bytes.byteLength).toBe(total);
        } else {
          expect(read.ok).toBe(false);
          expect(source.pulled()).toBeLessThanOrEqual(max + 50);
          expect(source.cancelled()).toBe(true);
        }
      }),
    );
  });

  it("past the bound it drains at most drainBytes more, then cancels", async () => {
    const source = body(Array.from({ length: 100 }, () => 10));
    const read = await readAtMost(source.stream, 25, { drainBytes: 40 });
    expect(read).toEqual({ ok: false, readBytes: 30 });
    expect(source.pulled()).toBeLessThanOrEqual(30 + 40 + 10);
    expect(source.cancelled()).toBe(true);
  });

  it("a declared length over the bound is refused without reading the body", async () => {
    const source = body([10, 10]);
    expect(await readAtMost(source.stream, 5, { declaredBytes: 20 })).toEqual({ ok: false, readBytes: 0 });
    expect(source.pulled()).toBe(0);
  });

  it("a declared length within the bound: take is asked once for all of it, and the body comes back whole", async () => {
    const asked: number[] = [];
    const source = body([7, 0, 13]);
    const read = await readAtMost(source.stream, 64, { declaredBytes: 20, take: (bytes) => (asked.push(bytes), true) });
    expect(read.ok && read.bytes.byteLength).toBe(20);
    expect(asked).toEqual([20]);
  });

  it("a declared length within the bound that take refuses is refused before the body is kept, and drained to drainBytes", async () => {
    const source = body(Array.from({ length: 100 }, () => 10));
    expect(await readAtMost(source.stream, 2_000, { declaredBytes: 1_000, drainBytes: 30, take: () => false })).toEqual({ ok: false, readBytes: 0, refused: true });
    expect(source.pulled()).toBeLessThanOrEqual(30 + 10);
    expect(source.cancelled()).toBe(true);
  });

  it("a body longer than it declared is still refused past the bound (a runtime that does not hold it to its length)", async () => {
    const source = body([10, 10, 10]);
    expect(await readAtMost(source.stream, 25, { declaredBytes: 5 })).toEqual({ ok: false, readBytes: 30 });
  });

  it("no body is an empty one", async () => {
    expect(await readAtMost(null, 0)).toEqual({ ok: true, bytes: new Uint8Array(0) });
  });
});

describe("discardAtMost", () => {
  it("property: a body is read to its end and counted, declared or not; past the bound it is refused", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 12 }), fc.integer({ min: 0, max: 200 }), fc.boolean(), async (chunks, max, declare) => {
        const total = chunks.reduce((a, b) => a + b, 0);
        const source = body(chunks);
        const read = await discardAtMost(source.stream, max, { declaredBytes: declare ? total : null });
        expect(read.ok).toBe(total <= max);
        if (total <= max) expect(source.pulled()).toBe(total);
        if (read.ok) expect(read.readBytes).toBe(total);
      }),
    );
  });

  it("a small body that is longer than it declared is still refused past the bound", async () => {
    const source = body([10, 10, 10]);
    expect(await discardAtMost(source.stream, 25, { declaredBytes: 5 })).toEqual({ ok: false, readBytes: 30 });
  });

  it("a declared length over the bound is refused without reading the body", async () => {
    const source = body([10, 10]);
    expect(await discardAtMost(source.stream, 5, { declaredBytes: 20 })).toEqual({ ok: false, readBytes: 0 });
    expect(source.pulled()).toBe(0);
  });
});
