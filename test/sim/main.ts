// `npm run sim`: the deterministic simulation (docs/simulation.md).
//   npm run sim                      500 seeds from 1, then the determinism self-check
//   npm run sim -- --seeds 20000     the soak
//   npm run sim -- --first 7000 --seeds 100
//   SIM_SEED=<n> npm run sim         one seed, every trace line printed (replays a failure)
//   npm run sim -- --until-failure   stop at the first seed that fails (scripts/sim-mutants.ts)
// Exits non-zero when any seed breaks an invariant, the same seed gives two different traces, or (on runs
// of at least 200 seeds) a guard never fired or a coverage count fell far below its usual level (floors.ts).
import { coverage, formatCounts, mergeCounts } from "./coverage.ts";
import { guardLines, shortfalls } from "./floors.ts";
import { describeShape, runSeed, type SeedResult } from "./run-seed.ts";

interface Args {
  seeds: number;
  first: number;
  maxSteps: number | undefined;
  single: number | null;
  untilFailure: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { seeds: 500, first: 1, maxSteps: undefined, single: null, untilFailure: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--until-failure") {
      args.untilFailure = true;
      continue;
    }
    const value = Number(argv[i + 1]);
    const valid = Number.isSafeInteger(value) && value >= 0;
    if ((flag === "--seeds" || flag === "--first" || flag === "--max-steps") && !valid) throw new Error(`${flag} needs a non-negative integer`);
    if (flag === "--seeds") args.seeds = value;
    else if (flag === "--first") args.first = value;
    else if (flag === "--max-steps") args.maxSteps = value;
    else throw new Error(`unknown argument ${flag ?? ""} (use --seeds N, --first N, --max-steps N, --until-failure, or SIM_SEED=n)`);
    i++;
  }
  const single = process.env["SIM_SEED"];
  if (single !== undefined && single !== "") {
    const seed = Number(single);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`SIM_SEED=${single} is not a non-negative integer`);
    args.single = seed;
  }
  return args;
}

function report(result: SeedResult): void {
  const { seed, result: checked, trace } = result;
  console.log(`\nseed ${seed} FAILED (${checked.violations.length} violations): ${describeShape(result.shape)}`);
  for (const violation of checked.violations.slice(0, 5)) console.log(`  ${violation.invariant}: ${violation.message}`);
  if (checked.violations.length > 5) console.log(`  ... and ${checked.violations.length - 5} more`);
  const first = checked.violations[0]!;
  console.log(`  trace around the first (lines that mention ${first.focus.join(", ") || "it"}; the whole trace: SIM_SEED=${seed}):`);
  for (const line of trace.excerpt(first.focus, first.step)) console.log(`    ${line}`);
  // A store latency (faults.ts) changes every trace: the replay must set it too.
  const latency = ["SIM_S3_LATENCY_MS", "SIM_S3_LATENCY_JITTER_MS"].filter((name) => (process.env[name] ?? "") !== "").map((name) => `${name}=${process.env[name]} `).join("");
  console.log(`  replay: ${latency}SIM_SEED=${seed} npm run sim`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const options = { maxSteps: args.maxSteps };
  if (args.single !== null) {
    const result = await runSeed(args.single, { ...options, verbose: true });
    for (const notice of result.result.notices) console.log(`${notice.invariant}: ${notice.message}`);
    console.log(`coverage: ${formatCounts(coverage(result.history))}`);
    if (result.result.violations.length > 0) report(result);
    console.log(`sim: seed ${result.seed}, ${result.result.violations.length === 0 ? "ok" : "FAILED"}, ${result.steps} steps, trace ${result.hash}`);
    return result.result.violations.length === 0 ? 0 : 1;
  }
  const startedMs = performance.now();
  let failed = 0;
  let steps = 0;
  const notices = new Map<string, { seeds: Set<number>; count: number; example: string }>();
  let firstHash: string | null = null;
  const totals = new Map<string, number>();
  for (let seed = args.first; seed < args.first + args.seeds; seed++) {
    const result = await runSeed(seed, options);
    steps += result.steps;
    mergeCounts(totals, coverage(result.history));
    if (seed === args.first) firstHash = result.hash;
    for (const notice of result.result.notices) {
      const kind = notices.get(notice.invariant) ?? { seeds: new Set<number>(), count: 0, example: `seed ${seed}: ${notice.message}` };
      kind.seeds.add(seed);
      kind.count++;
      notices.set(notice.invariant, kind);
    }
    if (result.result.violations.length > 0) {
      failed++;
      report(result);
      if (args.untilFailure) return 1;
    }
  }
  // Determinism: the first seed again must give the very same trace.
  let deterministic = true;
  if (args.seeds > 0 && firstHash !== null) {
    const again = await runSeed(args.first, options);
    deterministic = again.hash === firstHash;
    console.log(`determinism: seed ${args.first} twice: trace ${firstHash} and ${again.hash}: ${deterministic ? "identical" : "DIFFERENT"}`);
  }
  for (const [kind, { seeds, count, example }] of notices) {
    const listed = [...seeds].slice(0, 8).join(", ");
    console.log(`${kind}: ${count} in ${seeds.size} seeds (${listed}${seeds.size > 8 ? ", ..." : ""}); first: ${example.slice(0, 300)}`);
  }
  console.log(`coverage: ${formatCounts(totals)}`);
  console.log(`guards: ${guardLines(totals).join("; ")}`);
  const short = shortfalls(totals, args.seeds);
  for (const line of short) console.log(`FLOOR: ${line}`);
  const seconds = Math.round((performance.now() - startedMs) / 1000);
  console.log(`sim: ${args.seeds} seeds, ${failed} failed, ${steps} steps, ${seconds} s`);
  return failed === 0 && deterministic && short.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
