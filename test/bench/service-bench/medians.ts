// Figures over several runs of a benchmark (bench:service, bench:scale): each printed as the median of the
// runs with their range, "median (min–max)", never as the best run. A run whose phase failed outright is an
// error text in place of its figures; requests that failed inside a phase are counted and footnoted.
import type { ErrorTally } from "./stats.ts";
import type { Cell } from "./table.ts";

/** The median of `xs` (the mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** What one run of a phase measured, with the requests that failed in it. */
interface Counted {
  readonly errors: ErrorTally;
}

const measured = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x);

/** The median of one figure over the runs; undefined when a run failed or none measured it. */
export function medianOf<P extends Counted>(phases: readonly (P | string)[], figure: (phase: P) => number | undefined): number | undefined {
  if (phases.some((phase) => typeof phase === "string")) return undefined;
  const xs = (phases as readonly P[]).map(figure).filter(measured);
  return xs.length === 0 ? undefined : median(xs);
}

/** Requests that failed over the runs of a phase (a run that failed outright not counted). */
export function failuresOf<P extends Counted>(phases: readonly (P | string)[]): number {
  return phases.reduce((sum, phase) => sum + (typeof phase === "string" ? 0 : phase.errors.total), 0);
}

/** "median (min–max)" of one figure over the runs, or the errors that kept it from being measured. */
export function figureCell<P extends Counted>(phases: readonly (P | string)[], figure: (phase: P) => number | undefined, format: (x: number) => string): Cell {
  const failed = phases.filter((phase): phase is string => typeof phase === "string");
  if (failed.length > 0) return { error: failed.join("; ") };
  const runs = phases as readonly P[];
  const xs = runs.map(figure).filter(measured);
  let text = xs.length === 0 ? "-" : xs.length === 1 ? format(xs[0]!) : `${format(median(xs))} (${format(Math.min(...xs))}–${format(Math.max(...xs))})`;
  if (xs.length > 0 && xs.length < runs.length) text += `, ${xs.length} of ${runs.length} runs`;
  const errors = failuresOf(runs);
  return errors === 0 ? { text } : { text: `${text}; ${errors} failed`, note: runs.map((phase) => phase.errors.describe()).filter((d) => d !== "").join("; ") };
}
