// The fixed-bucket histogram: where an observation lands, the cumulative snapshot, and quantiles estimated
// from the buckets the way Prometheus's histogram_quantile does.
import { describe, expect, it } from "vitest";
import { LATENCY_BOUNDS_MS, newHistogram, observe, quantileMs, snapshotHistogram } from "../../src/core/histogram.ts";

describe("histogram", () => {
  it("counts a value into the first bucket whose bound is at least the value; above the last into +Inf", () => {
    const h = newHistogram([1, 10]);
    for (const v of [0, 1, 1.5, 10, 11, 1e9]) observe(h, v);
    expect(h.counts).toEqual([2, 2, 2]);
    expect(h.count).toBe(6);
    expect(h.sumMs).toBe(0 + 1 + 1.5 + 10 + 11 + 1e9);
  });

  it("counts NaN and negative durations as 0 ms (a clock that stepped back is not a failure)", () => {
    const h = newHistogram([1]);
    observe(h, Number.NaN);
    observe(h, -5);
    expect(h.counts).toEqual([2, 0]);
    expect(h.sumMs).toBe(0);
  });

  it("snapshots cumulative counts per finite bound; +Inf is the count", () => {
    const h = newHistogram([1, 10, 100]);
    for (const v of [0.5, 5, 5, 500]) observe(h, v);
    expect(snapshotHistogram(h)).toEqual({ boundsMs: [1, 10, 100], cumulative: [1, 3, 3], sumMs: 510.5, count: 4 });
  });

  it("estimates quantiles linearly within the bucket the rank falls in; null when empty", () => {
    const h = newHistogram([10, 20]);
    expect(quantileMs(h, 0.5)).toBeNull();
    for (let i = 0; i < 10; i++) observe(h, 15);
    expect(quantileMs(h, 0.5)).toBe(15);
    expect(quantileMs(h, 1)).toBe(20);
    observe(h, 1_000);
    expect(quantileMs(h, 1)).toBe(20); // the rank is in +Inf: the highest bound
  });

  it("has latency bounds from 1 ms to 10 s, ascending", () => {
    expect(LATENCY_BOUNDS_MS[0]).toBe(1);
    expect(LATENCY_BOUNDS_MS.at(-1)).toBe(10_000);
    expect([...LATENCY_BOUNDS_MS].sort((a, b) => a - b)).toEqual(LATENCY_BOUNDS_MS);
  });
});
