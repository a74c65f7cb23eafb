// readBeforeRedirect (src/http/responses.ts): the body of a request answered without it (a 401/403
// refusal, a 307) is read to its end so the client sees the answer, and dropped chunk by chunk: none of it
// is kept while the rest arrives, so an 8 MiB refused body never costs 8 MiB.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { readBeforeRedirect } from "../../src/http/responses.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const MAX_BODY_BYTES = 8 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

/**
 * A body of `count` fresh chunks. Before the last one is handed over, the heap is collected and the chunks
 * handed over before it that are still alive are counted: only a reader that keeps them keeps them alive.
 */
function watchedBody(count: number): { stream: ReadableStream<Uint8Array>; keptBeforeLast: () => number; pulledBytes: () => number } {
  const handedOver: WeakRef<Uint8Array>[] = [];
  let kept = -1;
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // A macrotask between chunks, as from a socket: weak references made earlier may be collected.
        await new Promise((resolve) => setImmediate(resolve));
        if (handedOver.length === count) return controller.close();
        if (handedOver.length === count - 1) {
          collectGarbage();
          kept = handedOver.slice(0, -1).filter((ref) => ref.deref() !== undefined).length;
        }
        const chunk = new Uint8Array(CHUNK_BYTES).fill(handedOver.length & 0xff);
        handedOver.push(new WeakRef(chunk));
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, keptBeforeLast: () => kept, pulledBytes: () => pulled };
}

describe("a refused request's body", () => {
  it("is read to its end but not kept: of an 8 MiB body in 64 KiB chunks, no earlier chunk is alive when the last arrives", async () => {
    const count = MAX_BODY_BYTES / CHUNK_BYTES;
    const body = watchedBody(count);
    const request = new Request("http://mink.test/v1/stream/a", { method: "POST", body: body.stream, duplex: "half" });
    expect(await readBeforeRedirect(request, MAX_BODY_BYTES)).toBeNull();
    expect(body.pulledBytes()).toBe(MAX_BODY_BYTES);
    expect(body.keptBeforeLast(), "chunks still held by the reader when the last one came").toBeLessThanOrEqual(1);
  });

  it("over the limit it is still a 413, after reading past the limit", async () => {
    const body = watchedBody(4);
    const request = new Request("http://mink.test/v1/stream/a", { method: "POST", body: body.stream, duplex: "half" });
    const answer = await readBeforeRedirect(request, CHUNK_BYTES);
    expect(answer?.status).toBe(413);
    expect(body.pulledBytes()).toBeGreaterThan(CHUNK_BYTES);
  });
});
