// The service benchmark's tables and target lines. Every figure is the median of the runs with their range
// (medians.ts); a ratio is mink's median over the reference server's; a target is met or missed on the
// medians only, never on a best run.
import { failuresOf, figureCell, medianOf } from "./medians.ts";
import { APPEND_BYTES, type Figures, type Outcome, type PhaseParams } from "./phases.ts";
import type { PhaseName } from "./sides.ts";
import { formatMs } from "./stats.ts";
import { printTable, type Cell, type Row } from "./table.ts";

/** The runs of each phase of one server, in run order. */
export type Runs = ReadonlyMap<PhaseName, readonly Outcome[]>;

export interface FigureRow {
  label: string;
  phase: PhaseName;
  figure: keyof Figures;
  format: (x: number) => string;
  /** Measured for mink only (its object store, its S3 endpoint): the reference column says n/a, no ratio. */
  minkOnly?: boolean;
  /** A count, not a figure to compare: no ratio. */
  noRatio?: boolean;
  /** Divided by the injected S3 latency in the production-latency table: round trips. */
  roundTrips?: boolean;
}

const whole = (x: number): string => x.toFixed(0);
const cpuMs = (x: number): string => x.toFixed(3);
const megabytes = (x: number): string => x.toFixed(1);

export function figureRows(params: PhaseParams): FigureRow[] {
  const n = params.connections;
  const m = params.bandwidthConnections;
  const seconds = params.durationMs / 1000;
  return [
    { label: `append latency p50, 1 connection (${params.latencyAppends} x ${APPEND_BYTES} B), ms`, phase: "latency", figure: "latencyP50", format: formatMs, roundTrips: true },
    { label: "append latency p99, 1 connection, ms", phase: "latency", figure: "latencyP99", format: formatMs, roundTrips: true },
    { label: `appends/s, ${n} connections over ${n} streams (${seconds} s)`, phase: "throughput", figure: "appendsPerSecond", format: whole },
    { label: "  append latency p50 under that load, ms", phase: "throughput", figure: "loadP50", format: formatMs, roundTrips: true },
    { label: "  append latency p99 under that load, ms", phase: "throughput", figure: "loadP99", format: formatMs, roundTrips: true },
    { label: "  CPU ms per append, every process of the server", phase: "throughput", figure: "cpuMsPerAppend", format: cpuMs },
    { label: "    of which the embedded S3 endpoint's workerd", phase: "throughput", figure: "s3CpuMsPerAppend", format: cpuMs, minkOnly: true },
    { label: "  CPU ms per append, the benchmark client", phase: "throughput", figure: "clientCpuMsPerAppend", format: cpuMs },
    { label: `MB/s, 64 KiB appends, ${m} connections over ${m} streams (${seconds} s)`, phase: "bandwidth", figure: "mbPerSecond", format: megabytes },
    { label: "  append latency p50 under that load, ms", phase: "bandwidth", figure: "bandwidthP50", format: formatMs, roundTrips: true },
    { label: "  append latency p99 under that load, ms", phase: "bandwidth", figure: "bandwidthP99", format: formatMs, roundTrips: true },
    { label: "  CPU ms per MB, every process of the server", phase: "bandwidth", figure: "cpuMsPerMb", format: megabytes },
    { label: "object-store PUTs per 1,000 appends, 1 connection", phase: "latency", figure: "putsPer1000At1", format: whole, minkOnly: true },
    { label: `object-store PUTs per 1,000 appends, ${n} connections`, phase: "throughput", figure: "putsPer1000AtN", format: whole, minkOnly: true },
    { label: `SSE delivery p50, ${params.readers} readers x ${params.sseAppends} appends (1 per ${params.sseIntervalMs} ms), ms`, phase: "sse", figure: "sseP50", format: formatMs },
    { label: "SSE delivery p99, ms", phase: "sse", figure: "sseP99", format: formatMs },
    { label: "  SSE readers ready", phase: "sse", figure: "sseReady", format: whole, noRatio: true },
    { label: "  SSE readers that got every append", phase: "sse", figure: "sseComplete", format: whole, noRatio: true },
  ];
}

const outcomesOf = (runs: Runs, phase: PhaseName): readonly Outcome[] => runs.get(phase) ?? [];
export const medianFigure = (runs: Runs, phase: PhaseName, figure: keyof Figures): number | undefined =>
  medianOf(outcomesOf(runs, phase), (measured) => measured.figures[figure]);

export function cellOf(runs: Runs, row: FigureRow): Cell {
  return figureCell(outcomesOf(runs, row.phase), (measured) => measured.figures[row.figure], row.format);
}

/** One topology: mink and the reference server side by side, and mink's median over the reference's. */
export function printComparison(params: PhaseParams, minkTitle: string, mink: Runs, reference: Runs): void {
  const rows: Row[] = [];
  const minkCells = new Map<string, Cell>();
  const referenceCells = new Map<string, Cell>();
  const ratioCells = new Map<string, Cell>();
  for (const row of figureRows(params)) {
    const key = `${row.phase}.${row.figure}`;
    rows.push({ label: row.label, key });
    minkCells.set(key, cellOf(mink, row));
    referenceCells.set(key, row.minkOnly === true ? { text: "n/a" } : cellOf(reference, row));
    const ours = medianFigure(mink, row.phase, row.figure);
    const theirs = medianFigure(reference, row.phase, row.figure);
    if (row.minkOnly !== true && row.noRatio !== true && ours !== undefined && theirs !== undefined && theirs !== 0) ratioCells.set(key, { text: `x${(ours / theirs).toFixed(2)}` });
  }
  printTable(rows, [
    { title: minkTitle, cells: minkCells },
    { title: "@durable-streams/server 0.3.7 (file)", cells: referenceCells },
    { title: "mink / reference (medians)", cells: ratioCells },
  ]);
}

/** mink at production latency (no reference server: it has no object store): figures, and latencies in round trips. */
export function printAtLatency(params: PhaseParams, title: string, runs: Runs, latencyMs: number): void {
  const rows: Row[] = [];
  const cells = new Map<string, Cell>();
  const roundTrips = new Map<string, Cell>();
  for (const row of figureRows(params)) {
    if (row.phase === "sse" || row.figure === "s3CpuMsPerAppend") continue;
    const key = `${row.phase}.${row.figure}`;
    rows.push({ label: row.label, key });
    cells.set(key, cellOf(runs, row));
    const median = medianFigure(runs, row.phase, row.figure);
    if (row.roundTrips === true && median !== undefined) roundTrips.set(key, { text: (median / latencyMs).toFixed(2) });
  }
  printTable(rows, [
    { title, cells },
    { title: `round trips (median / ${latencyMs} ms)`, cells: roundTrips },
  ]);
}

/** A met/missed line; `value` undefined when a run of the phase failed. */
function targetLine(what: string, value: number | undefined, shown: string, met: boolean, goal: string): string {
  if (value === undefined) return `${what}: not measured (a run of the phase failed; see the table): MISSED`;
  return `${what}: ${shown} (target ${goal}): ${met ? "met" : "MISSED"}`;
}

/** Issue 26's targets for three nodes against the reference server, on the medians. */
export function comparisonTargets(params: PhaseParams, mink: Runs, reference: Runs): string[] {
  const ratio = (phase: PhaseName, figure: keyof Figures): number | undefined => {
    const ours = medianFigure(mink, phase, figure);
    const theirs = medianFigure(reference, phase, figure);
    return ours === undefined || theirs === undefined || theirs === 0 ? undefined : ours / theirs;
  };
  const ratioLine = (what: string, phase: PhaseName, figure: keyof Figures, goal: { atLeast?: number; atMost?: number }): string => {
    const r = ratio(phase, figure);
    const met = r !== undefined && (goal.atLeast === undefined || r >= goal.atLeast) && (goal.atMost === undefined || r <= goal.atMost);
    const goalText = goal.atLeast !== undefined ? `>= ${goal.atLeast}x` : `<= ${goal.atMost}x`;
    return targetLine(what, r, `mink x${r?.toFixed(2)} of the reference server's`, met, goalText);
  };
  const failures = (["latency", "throughput", "bandwidth", "sse"] as const).reduce((sum, phase) => sum + failuresOf(outcomesOf(mink, phase)), 0);
  return [
    ratioLine(`appends/s at ${params.connections} connections`, "throughput", "appendsPerSecond", { atLeast: 1.2 }),
    ratioLine("CPU per append, every process of each server", "throughput", "cpuMsPerAppend", { atMost: 1.5 }),
    ratioLine(`MB/s with 64 KiB appends at ${params.bandwidthConnections} connections`, "bandwidth", "mbPerSecond", { atLeast: 1 }),
    ratioLine(`SSE delivery p99 to ${params.readers} readers`, "sse", "sseP99", { atMost: 0.2 }),
    `no errors: mink ${failures} failed requests or missed deliveries over all runs: ${failures === 0 ? "met" : "MISSED"}`,
  ];
}

/** Issue 26's targets at 30 ms per S3 request, on the medians. */
export function latencyTargets(params: PhaseParams, runs: Runs, latencyMs: number): string[] {
  const at = (phase: PhaseName, figure: keyof Figures): number | undefined => medianFigure(runs, phase, figure);
  const appends = at("throughput", "appendsPerSecond");
  const loadP99 = at("throughput", "loadP99");
  const p50 = at("latency", "latencyP50");
  const mb = at("bandwidth", "mbPerSecond");
  const trips = (ms: number | undefined): string => (ms === undefined ? "-" : `${formatMs(ms)} ms, ${(ms / latencyMs).toFixed(2)} round trips`);
  return [
    targetLine(`appends/s at ${params.connections} connections`, appends, `${appends?.toFixed(0)}`, (appends ?? 0) >= 2000, ">= 2000"),
    targetLine(`  append latency p99 under that load`, loadP99, trips(loadP99), (loadP99 ?? Infinity) <= 2 * latencyMs, `<= 2 round trips, ${2 * latencyMs} ms`),
    targetLine("append latency p50, 1 connection", p50, trips(p50), (p50 ?? Infinity) <= 1.5 * latencyMs, `<= 1.5 round trips, ${1.5 * latencyMs} ms`),
    targetLine(`MB/s with 64 KiB appends at ${params.bandwidthConnections} connections`, mb, `${mb?.toFixed(1)}`, (mb ?? 0) >= 40, ">= 40"),
  ];
}
