// A fixed-bucket histogram, pure: the latencies mink exposes as Prometheus histograms (docs/observability.md)
// and the per-interval ack percentiles of the status page's series. One observation is a bucket search over
// a short table and two additions, so the append path can afford one per acknowledgement.

/**
 * Latency bucket upper bounds in ms, 1 ms to 10 s (a Prometheus `le` is the bound in seconds). Anything
 * slower lands in the implicit `+Inf` bucket.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000];

export interface Histogram {
  readonly boundsMs: readonly number[];
  /** Per bucket (not cumulative): `counts[i]` holds observations <= boundsMs[i] and > the bound before; the last is `+Inf`. */
  readonly counts: number[];
  sumMs: number;
  count: number;
}

/** What crosses the node's RPC port: plain numbers, cumulative as Prometheus wants them. */
export interface HistogramSnapshot {
  readonly boundsMs: readonly number[];
  /** `cumulative[i]`: observations <= boundsMs[i]; the `+Inf` count is `count`. */
  readonly cumulative: readonly number[];
  readonly sumMs: number;
  readonly count: number;
}

export function newHistogram(boundsMs: readonly number[] = LATENCY_BOUNDS_MS): Histogram {
  return { boundsMs, counts: new Array<number>(boundsMs.length + 1).fill(0), sumMs: 0, count: 0 };
}

/** The bucket a value falls in (`boundsMs.length` is `+Inf`); NaN and negatives count as 0. */
function bucketOf(boundsMs: readonly number[], valueMs: number): number {
  let i = 0;
  while (i < boundsMs.length && valueMs > boundsMs[i]!) i++;
  return i;
}

export function observe(histogram: Histogram, valueMs: number): void {
  const value = Number.isFinite(valueMs) && valueMs > 0 ? valueMs : 0;
  histogram.counts[bucketOf(histogram.boundsMs, value)]!++;
  histogram.sumMs += value;
  histogram.count++;
}

export function resetHistogram(histogram: Histogram): void {
  histogram.counts.fill(0);
  histogram.sumMs = 0;
  histogram.count = 0;
}

export function snapshotHistogram(histogram: Histogram): HistogramSnapshot {
  const cumulative: number[] = [];
  let running = 0;
  for (let i = 0; i < histogram.boundsMs.length; i++) {
    running += histogram.counts[i]!;
    cumulative.push(running);
  }
  return { boundsMs: histogram.boundsMs, cumulative, sumMs: histogram.sumMs, count: histogram.count };
}

/**
 * The q-quantile (0 < q <= 1) estimated from the buckets, as Prometheus's histogram_quantile does: linear
 * within the bucket the rank falls in (the first bucket from 0). A rank in `+Inf` answers the highest bound.
 * Null for an empty histogram.
 */
export function quantileMs(histogram: Histogram, q: number): number | null {
  if (histogram.count === 0) return null;
  const rank = Math.min(Math.max(q, 0), 1) * histogram.count;
  const { boundsMs, counts } = histogram;
  let below = 0;
  for (let i = 0; i < boundsMs.length; i++) {
    const inBucket = counts[i]!;
    if (inBucket > 0 && below + inBucket >= rank) {
      const lower = i === 0 ? 0 : boundsMs[i - 1]!;
      const upper = boundsMs[i]!;
      return lower + (upper - lower) * ((rank - below) / inBucket);
    }
    below += inBucket;
  }
  return boundsMs[boundsMs.length - 1] ?? null;
}
