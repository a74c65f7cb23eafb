// The simulation inside `npm test`: a handful of seeds must keep every invariant, and one seed run twice
// must give the same trace. The full run is `npm run sim` (docs/simulation.md). These six seeds catch most
// of the bugs of `npm run sim:mutants` (six of nine, 2026-12-06); the others are caught within the 500
// seeds of `npm run sim`, which is what `sim:mutants` checks.
import { describe, expect, it } from "vitest";
import { runSeed } from "./run-seed.ts";

const SEEDS = [1, 2, 3, 4, 5, 6];

describe("simulation (a few seeds; npm run sim runs 500)", () => {
  it.each(SEEDS)("seed %i keeps invariants 1, 2, 3, 5 and 6, the per-step log rules, the wake bound, linearizability, the table and subscription invariants, and settles", async (seed) => {
    const { result, trace } = await runSeed(seed);
    const failures = result.violations.map((v) => `${v.invariant}: ${v.message}`);
    if (failures.length > 0) failures.push(...trace.excerpt(result.violations[0]!.focus, result.violations[0]!.step), `replay: SIM_SEED=${seed} npm run sim`);
    expect(failures).toEqual([]);
  });

  it("the same seed gives the same trace", async () => {
    const first = await runSeed(7);
    const second = await runSeed(7);
    expect(second.steps).toBe(first.steps);
    expect(second.hash).toBe(first.hash);
  });
});
