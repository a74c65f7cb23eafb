// The status page's recent series: a bounded ring of aligned intervals, oldest first, the current partial
// interval last, zeros for quiet intervals, nothing from before the node started.
import { describe, expect, it } from "vitest";
import { newSeriesRing, recordAck, recordAppends, SERIES_INTERVAL_MS, SERIES_SAMPLES, seriesSamples } from "../../src/core/series.ts";

const I = SERIES_INTERVAL_MS;

describe("series ring", () => {
  it("starts with one partial interval from the node's start", () => {
    const ring = newSeriesRing(10 * I + 1_200);
    expect(seriesSamples(ring, 10 * I + 3_000)).toEqual([
      { startMs: 10 * I + 1_200, durationMs: 1_800, appends: 0, bytes: 0, ackP50Ms: null, ackP99Ms: null },
    ]);
  });

  it("puts appends, bytes and acks into the interval they happened in; quiet intervals read as zeros", () => {
    const ring = newSeriesRing(10 * I);
    recordAppends(ring, 10 * I + 100, 2, 50);
    for (let i = 0; i < 100; i++) recordAck(ring, 10 * I + 100, 15);
    recordAppends(ring, 12 * I + 1, 1, 7);
    const samples = seriesSamples(ring, 12 * I + 4_000);
    expect(samples.map((s) => [s.startMs, s.durationMs, s.appends, s.bytes])).toEqual([
      [10 * I, I, 2, 50],
      [11 * I, I, 0, 0],
      [12 * I, 4_000, 1, 7],
    ]);
    expect(samples[0]!.ackP50Ms).toBeGreaterThan(10);
    expect(samples[0]!.ackP50Ms).toBeLessThanOrEqual(20);
    expect(samples[0]!.ackP99Ms).toBeLessThanOrEqual(20);
    expect(samples[1]!.ackP50Ms).toBeNull();
    expect(samples[2]!.ackP99Ms).toBeNull(); // appends without a timed ack (a create body) leave it null
  });

  it("keeps at most SERIES_SAMPLES intervals and forgets what the ring overwrote", () => {
    const ring = newSeriesRing(0);
    recordAppends(ring, 5, 9, 9);
    const later = (SERIES_SAMPLES + 3) * I + 10;
    recordAppends(ring, later, 1, 1);
    const samples = seriesSamples(ring, later);
    expect(samples).toHaveLength(SERIES_SAMPLES);
    expect(samples[0]!.startMs).toBe(4 * I);
    expect(samples.at(-1)).toMatchObject({ startMs: (SERIES_SAMPLES + 3) * I, durationMs: 10, appends: 1 });
    expect(samples.reduce((n, s) => n + s.appends, 0)).toBe(1);
  });

  it("does not let a slot's old interval leak into a read a full ring later", () => {
    const ring = newSeriesRing(0);
    recordAppends(ring, 2 * I, 4, 4);
    // Nothing recorded since: the slot still holds interval 2, which is not in the window any more.
    const samples = seriesSamples(ring, (2 + SERIES_SAMPLES) * I + 1);
    expect(samples.every((s) => s.appends === 0)).toBe(true);
  });
});
