// Small helpers shared by the service benchmark: percentiles, formatting, error text.

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? Number.NaN };
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : "";
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}

/** Runs what a benchmark started's stops, last started first; a failing one is reported, the others still run. */
export async function runCleanups(cleanups: readonly (() => Promise<void>)[]): Promise<void> {
  for (const cleanup of [...cleanups].reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.error(`cleanup: ${errorText(error)}`);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Counts failures by their text and keeps the first few kinds, so a failing server is reported, not hidden. */
export class ErrorTally {
  readonly #counts = new Map<string, number>();
  total = 0;
  add(error: unknown): void {
    const text = typeof error === "string" ? error : errorText(error);
    this.total++;
    this.#counts.set(text, (this.#counts.get(text) ?? 0) + 1);
  }
  /** Counts every failure `other` counted, too. */
  addAll(other: ErrorTally): void {
    this.total += other.total;
    for (const [text, count] of other.#counts) this.#counts.set(text, (this.#counts.get(text) ?? 0) + count);
  }
  describe(limit = 3): string {
    return [...this.#counts].slice(0, limit).map(([text, count]) => `${count}x ${text.slice(0, 300)}`).join("; ");
  }
}
