// How many cases a property test runs. Under mutation testing (`npm run mutate`: vitest.stryker.config.ts
// sets MINK_PROPERTY_RUNS_SCALE) every surviving mutant reruns each property suite that reaches it, so the
// suites run a tenth of their cases there (at least 10); everywhere else they run in full.
export function propertyRuns(runs: number): number {
  const scale = Number(process.env["MINK_PROPERTY_RUNS_SCALE"] ?? "1");
  return Math.max(Math.min(runs, 10), Math.round(runs * (Number.isFinite(scale) && scale > 0 ? Math.min(scale, 1) : 1)));
}
