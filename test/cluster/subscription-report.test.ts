// The node's report of an acknowledged append to the MetaLog (src/node/runtime/subscription-delivery.ts): the
// append is answered whether or not its report arrived, so a report whose call failed is sent again.
import { describe, expect, it } from "vitest";
import { reportTail } from "../../src/node/runtime/subscription-delivery.ts";
import type { StreamTail } from "../../src/core/subscriptions/index.ts";

const TAIL: StreamTail = { path: "jobs/a", tailOffset: "0000000000000000_0000000000000031" };
const noPause = (): Promise<void> => Promise.resolve();

/** A MetaLog whose first `failures` reports break before they arrive; the rest are recorded. */
function flakyMeta(failures: number): { received: StreamTail[][]; calls: number; onStreamAppended(tails: readonly StreamTail[]): Promise<{ effects: []; subscriptions: number }> } {
  const meta = {
    received: [] as StreamTail[][],
    calls: 0,
    onStreamAppended(tails: readonly StreamTail[]) {
      meta.calls++;
      if (meta.calls <= failures) return Promise.reject(new Error("the MetaLog call broke"));
      meta.received.push([...tails]);
      return Promise.resolve({ effects: [] as [], subscriptions: 1 });
    },
  };
  return meta;
}

describe("reporting an acknowledged append", () => {
  it("an append whose report failed still reaches the MetaLog (seed 328: its subscribers never heard of it)", async () => {
    const meta = flakyMeta(2);
    const answer = await reportTail(meta, TAIL, () => false, noPause);
    expect(answer.subscriptions).toBe(1);
    expect(meta.received).toEqual([[TAIL]]);
  });

  it("a node that stopped sends no more reports", async () => {
    const meta = flakyMeta(10);
    await expect(reportTail(meta, TAIL, () => true, noPause)).rejects.toThrow("the MetaLog call broke");
    expect(meta.calls).toBe(1);
  });

  it("the retries are bounded: a MetaLog that keeps failing is given up on", async () => {
    const meta = flakyMeta(100);
    await expect(reportTail(meta, TAIL, () => false, noPause)).rejects.toThrow("the MetaLog call broke");
    expect(meta.calls).toBeLessThan(10);
    expect(meta.received).toEqual([]);
  });
});
