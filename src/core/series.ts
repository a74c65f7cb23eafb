// The recent series a node keeps for the status page's charts (docs/observability.md, GET /admin/series):
// a ring of the last SERIES_SAMPLES intervals of SERIES_INTERVAL_MS, each with the appends and bytes
// acknowledged in it and its own ack-latency histogram. Intervals are aligned to multiples of the interval
// on the wall clock, so every node's samples line up; an interval nothing happened in reads as zeros.
// Bounded by construction: the ring never holds more than SERIES_SAMPLES slots. Time is a parameter.
import { LATENCY_BOUNDS_MS, newHistogram, observe, quantileMs, resetHistogram, type Histogram } from "./histogram.ts";

export const SERIES_SAMPLES = 60;
export const SERIES_INTERVAL_MS = 5_000;

/** One interval as GET /admin/series answers it. */
export interface SeriesSample {
  /** Epoch ms the interval began (or the node started, if later). */
  readonly startMs: number;
  /** Its length so far: the interval's, or `now - startMs` for the current one. */
  readonly durationMs: number;
  readonly appends: number;
  readonly bytes: number;
  /** Ack latency percentiles in ms, from the interval's histogram; null when nothing was acknowledged. */
  readonly ackP50Ms: number | null;
  readonly ackP99Ms: number | null;
}

interface Slot {
  /** The interval number (floor(ms / intervalMs)) this slot holds, or -1 for none yet. */
  index: number;
  appends: number;
  bytes: number;
  readonly ack: Histogram;
}

export interface SeriesRing {
  readonly intervalMs: number;
  /** When the node started: no sample begins before it. */
  readonly sinceMs: number;
  readonly slots: readonly Slot[];
}

export function newSeriesRing(sinceMs: number, samples = SERIES_SAMPLES, intervalMs = SERIES_INTERVAL_MS): SeriesRing {
  const slots = Array.from({ length: samples }, () => ({ index: -1, appends: 0, bytes: 0, ack: newHistogram(LATENCY_BOUNDS_MS) }));
  return { intervalMs, sinceMs, slots };
}

/** The slot for the interval holding `nowMs`, emptied first if it still holds an older interval. */
function slotAt(ring: SeriesRing, nowMs: number): Slot {
  const index = Math.floor(nowMs / ring.intervalMs);
  const slot = ring.slots[index % ring.slots.length]!;
  if (slot.index !== index) {
    slot.index = index;
    slot.appends = 0;
    slot.bytes = 0;
    resetHistogram(slot.ack);
  }
  return slot;
}

/** Appends and bytes that became durable at `nowMs`. */
export function recordAppends(ring: SeriesRing, nowMs: number, appends: number, bytes: number): void {
  const slot = slotAt(ring, nowMs);
  slot.appends += appends;
  slot.bytes += bytes;
}

/** One acknowledgement at `nowMs` that took `latencyMs`. */
export function recordAck(ring: SeriesRing, nowMs: number, latencyMs: number): void {
  observe(slotAt(ring, nowMs).ack, latencyMs);
}

/** The samples, oldest first, the current partial interval last; none from before `sinceMs`. */
export function seriesSamples(ring: SeriesRing, nowMs: number): SeriesSample[] {
  const { intervalMs, slots } = ring;
  const current = Math.floor(nowMs / intervalMs);
  const samples: SeriesSample[] = [];
  for (let index = current - slots.length + 1; index <= current; index++) {
    const endMs = index === current ? nowMs : (index + 1) * intervalMs;
    if (endMs <= ring.sinceMs && index !== current) continue;
    const startMs = Math.min(Math.max(index * intervalMs, ring.sinceMs), endMs);
    const slot = slots[((index % slots.length) + slots.length) % slots.length]!;
    const held = slot.index === index;
    samples.push({
      startMs,
      durationMs: endMs - startMs,
      appends: held ? slot.appends : 0,
      bytes: held ? slot.bytes : 0,
      ackP50Ms: held ? roundMs(quantileMs(slot.ack, 0.5)) : null,
      ackP99Ms: held ? roundMs(quantileMs(slot.ack, 0.99)) : null,
    });
  }
  return samples;
}

/** Microsecond precision is plenty for a chart, and keeps the JSON short. */
function roundMs(value: number | null): number | null {
  return value === null ? null : Math.round(value * 1_000) / 1_000;
}
