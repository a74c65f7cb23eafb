// The trace: one line per scheduler step (and per notable event inside one), hashed as it grows. The same
// seed must give the same lines, so the hash of a run is its fingerprint (main.ts runs one seed twice and
// compares). Lines are kept in memory so a failure can print the part that matters.
import { createHash, type Hash } from "node:crypto";

export class Trace {
  readonly lines: string[] = [];
  /** The step of each line. */
  private readonly steps: number[] = [];
  private readonly hash: Hash = createHash("sha256");
  private step = 0;
  private clockMs: number;
  /** The virtual time of each step (the last the scheduler set for it). */
  private readonly stepMs: number[] = [];

  constructor(
    private readonly startMs: number,
    /** Print every line as it is written (SIM_SEED runs). */
    private readonly echo: boolean,
  ) {
    this.clockMs = startMs;
  }

  /** The scheduler's position: the step number and the virtual time every following line carries. */
  at(step: number, clockMs: number): void {
    this.step = step;
    this.clockMs = clockMs;
    this.stepMs[step] = clockMs;
  }

  /** The virtual time step `step` ran at (the start, for step 0 or one not reached). */
  msAt(step: number): number {
    for (let s = Math.min(step, this.stepMs.length - 1); s >= 0; s--) {
      const ms = this.stepMs[s];
      if (ms !== undefined) return ms;
    }
    return this.startMs;
  }

  get currentStep(): number {
    return this.step;
  }

  write(text: string): void {
    const seconds = ((this.clockMs - this.startMs) / 1000).toFixed(3);
    const line = `#${this.step} t=${seconds} ${text}`;
    this.lines.push(line);
    this.steps.push(this.step);
    this.hash.update(line);
    this.hash.update("\n");
    if (this.echo) process.stdout.write(`${line}\n`);
  }

  digest(): string {
    return this.hash.copy().digest("hex").slice(0, 16);
  }

  /**
   * Lines that mention any of `needles`, at most `limit` in all: those closest before (and just after)
   * `aroundStep` with every line of that step, or else the last ones; plus the last `tail` lines.
   */
  excerpt(needles: readonly string[], aroundStep?: number, limit = 50, tail = 4): string[] {
    const chosen = new Set<number>();
    const last = this.lines.length;
    for (let i = Math.max(0, last - tail); i < last; i++) chosen.add(i);
    const wanted = needles.filter((needle) => needle.length > 0);
    const matches: number[] = [];
    for (let i = 0; i < last; i++) {
      const step = this.steps[i]!;
      if (aroundStep !== undefined && step === aroundStep) chosen.add(i);
      else if ((aroundStep === undefined || step <= aroundStep + 3) && wanted.some((needle) => this.lines[i]!.includes(needle))) matches.push(i);
    }
    if (aroundStep !== undefined) {
      // Nearest to the step first.
      matches.sort((a, b) => Math.abs(this.steps[a]! - aroundStep) - Math.abs(this.steps[b]! - aroundStep) || a - b);
      for (const i of matches) {
        if (chosen.size >= limit) break;
        chosen.add(i);
      }
    } else {
      for (const i of matches.slice(-Math.max(0, limit - chosen.size))) chosen.add(i);
    }
    const sorted = [...chosen].sort((a, b) => a - b);
    const out: string[] = [];
    let previous = -1;
    for (const i of sorted) {
      if (previous >= 0 && i > previous + 1) out.push("   ...");
      out.push(this.lines[i]!);
      previous = i;
    }
    return out;
  }
}

/** mink's own logging goes into the trace (deterministic, and out of the way of the summary). */
export function captureConsole(trace: Trace): () => void {
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug };
  const format = (args: unknown[]): string =>
    args
      .map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : typeof arg === "string" ? arg : String(arg)))
      .join(" ")
      .slice(0, 300);
  const to = (level: string) => (...args: unknown[]) => trace.write(`  log.${level} ${format(args)}`);
  console.log = to("log");
  console.info = to("info");
  console.warn = to("warn");
  console.error = to("error");
  console.debug = to("debug");
  return () => Object.assign(console, saved);
}
