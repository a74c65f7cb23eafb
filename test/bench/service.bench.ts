// Service benchmark (issues 4 and 9): mink (under the local runtime, scripts/local-runtime.ts, as started by
// test/e2e/service.ts: scripts/serve.ts in a child process, one workerd, the embedded S3 endpoint in this
// process; one node unless --nodes) and the reference server `@durable-streams/server` (file-backed, in a
// child process) side by side on this machine, through the same undici client code (which follows no
// redirect: with --nodes above 1 the router forwards to the owner, ROUTER_MODE=forward):
//   1. append latency p50/p99 at one keep-alive connection (sequential 100 B appends to one stream);
//   2. appends per second at 64 connections over 64 streams, for a fixed time, and the CPU time every
//      process of each server used meanwhile, per 1,000 acknowledged appends: for mink the runner's Node
//      process, its workerd and the embedded S3 endpoint's workerd; for the reference server its process
//      (utime + stime from /proc/<pid>/stat over each process tree, before and after the timed phase);
//   3. mink's object-store requests during 1 and 2 (its own counters, GET /metrics), as PUTs per 1,000
//      acknowledged appends (the reference server has no object store: n/a);
//   4. delivery latency p50/p99 from an append's send to its receipt by each of 1,000 SSE readers.
// At the end, mink against the project's throughput targets (docs/benchmarks.md, "Service"): appends/s at 64 connections >= 1.2x the reference
// server's, SSE p99 to 1,000 readers <= 0.2x the reference server's.
//
//   npx tsx test/bench/service.bench.ts [--quick] [--nodes 3]      # npm run bench:service
//
// It prints figures and asserts nothing; a phase that fails prints its error in its cell and the run goes
// on. Everything talks to 127.0.0.1 only, and everything started here is stopped (by PID or close()) on the
// way out, failure or not. Numbers are only comparable within one run on one machine.
import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startService, type Service } from "../e2e/service.ts";
import { measureAppendLatency, measureAppendThroughput } from "./service-bench/append-phases.ts";
import { diffMetrics, readMinkMetrics, type MinkMetrics } from "./service-bench/mink-metrics.ts";
import { cpuSnapshot, cpuUsed, treeOf, type CpuSnapshot, type ProcessPicker } from "./service-bench/process-cpu.ts";
import { startReferenceServer, type ReferenceServer } from "./service-bench/reference-server.ts";
import { measureSseFanOut } from "./service-bench/sse-fan-out.ts";
import { errorText, formatMs, runCleanups } from "./service-bench/stats.ts";
import { printTable, type Cell, type Row } from "./service-bench/table.ts";
import { gitCommit } from "./git-commit.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, nodes: { type: "string", default: "1" } } });
const quick = values.quick;
const nodes = Number(values.nodes);
if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`--nodes: not a positive integer: ${values.nodes}`);

const APPEND_BYTES = 100;
const LONG_POLL_TIMEOUT_MS = 10_000;
const params = quick
  ? { latencyAppends: 50, connections: 8, durationMs: 1_000, readers: 50, sseAppends: 5, sseIntervalMs: 200 }
  : { latencyAppends: 500, connections: 64, durationMs: 5_000, readers: 1_000, sseAppends: 20, sseIntervalMs: 200 };
/** The throughput target: mink's appends/s at 64 connections at least this times the reference server's ... */
const TARGET_THROUGHPUT_RATIO = 1.2;
/** ... and its SSE p99 to 1,000 readers at most this times the reference server's. */
const TARGET_SSE_P99_RATIO = 0.2;

interface Target {
  name: string;
  baseUrl: string;
  /** The server's processes, for the CPU figures. */
  processes: ProcessPicker;
  /** mink's counters; undefined for a server without an object store. */
  metrics?: () => Promise<MinkMetrics>;
}

/** The figures main() compares against the targets, per server. */
interface Figures {
  appendsPerSecond?: number;
  sseP99Ms?: number;
}


const loads = (): string => loadavg().map((v) => v.toFixed(2)).join(" ");

/**
 * mink's processes: the runner (scripts/serve.ts, the group leader) and its workerd, plus the embedded S3
 * endpoint's workerd, a child of this process (the only workerd here outside the runner's tree).
 */
function minkProcesses(service: Service): ProcessPicker {
  return (table) => {
    const picked = new Map<number, string>();
    const runner = service.pid;
    const tree = runner === undefined ? new Set<number>() : treeOf(table, [runner]);
    for (const pid of tree) picked.set(pid, pid === runner ? "runner node" : table.get(pid)?.comm ?? "?");
    for (const pid of treeOf(table, [process.pid])) {
      if (!tree.has(pid) && table.get(pid)?.comm === "workerd") picked.set(pid, "S3 workerd");
    }
    return picked;
  };
}

function referenceProcesses(reference: ReferenceServer): ProcessPicker {
  return (table) => new Map([...treeOf(table, [reference.pid])].map((pid) => [pid, table.get(pid)?.comm ?? "?"]));
}

/** This process: the client (undici pools), and for mink the embedded S3 endpoint's Miniflare host too. */
const clientProcess: ProcessPicker = () => new Map([[process.pid, "benchmark client"]]);

/** Runs `phase`, turning a throw into an error cell (footnoted with the full text). */
async function cell(phase: () => Promise<Cell>): Promise<Cell> {
  try {
    return await phase();
  } catch (error) {
    return { error: errorText(error) };
  }
}

function storeCell(after: MinkMetrics, before: MinkMetrics, acknowledged: number): Cell {
  const diff = diffMetrics(after, before);
  if (typeof diff === "string") return { error: diff };
  if (acknowledged === 0) return { text: "no acknowledged appends" };
  const { put, get, list, delete: del } = diff.store;
  return { text: `${((put * 1000) / acknowledged).toFixed(0)} (PUT ${put} GET ${get} LIST ${list} DELETE ${del}; ${diff.walFlushes} WAL flushes)` };
}

function cpuCell(before: CpuSnapshot, after: CpuSnapshot, acknowledged: number, elapsedMs: number): Cell {
  const used = cpuUsed(before, after);
  if (acknowledged === 0) return { text: "no acknowledged appends" };
  const parts = used.processes.filter((p) => p.seconds >= 0.005).map((p) => `${p.label} ${p.seconds.toFixed(2)}`);
  return { text: `${((used.seconds * 1000) / acknowledged).toFixed(2)} (${used.seconds.toFixed(2)} s in ${(elapsedMs / 1000).toFixed(1)} s: ${parts.join(", ") || "-"})` };
}

function withErrors(text: string, errors: { total: number; describe(): string }): Cell {
  return errors.total === 0 ? { text } : { text: `${text}; ${errors.total} failed`, note: errors.describe() };
}

/**
 * The three phases for one server, each filling its cells. main() runs each phase for both servers back to
 * back (not all of one server, then the other), so a change in the shared machine's load hits both alike.
 */
function phasesOf(target: Target, runId: string, cells: Map<string, Cell>, figures: Figures): (() => Promise<void>)[] {
  const noStore: Cell = { text: "n/a" };
  let metricsBefore: MinkMetrics | undefined;
  const markStoreStart = async (): Promise<void> => {
    metricsBefore = await target.metrics?.();
  };
  const storeFigure = async (acknowledged: number): Promise<Cell> => {
    if (target.metrics === undefined || metricsBefore === undefined) return noStore;
    const before = metricsBefore;
    return cell(async () => storeCell(await target.metrics!(), before, acknowledged));
  };

  const latencyPhase = async (): Promise<void> => {
    console.error(`[${target.name}] append latency, 1 connection`);
    metricsBefore = undefined;
    cells.set("puts-1", target.metrics === undefined ? noStore : { text: "- (phase failed)" });
    cells.set("latency", await cell(async () => {
      const result = await measureAppendLatency(target.baseUrl, runId, { appends: params.latencyAppends, sizeBytes: APPEND_BYTES, maxMs: 120_000 }, markStoreStart);
      cells.set("puts-1", await storeFigure(result.acknowledged));
      return withErrors(`${formatMs(result.latency.p50Ms)} / ${formatMs(result.latency.p99Ms)} ms (n=${result.acknowledged})`, result.errors);
    }));
  };

  const throughputPhase = async (): Promise<void> => {
    console.error(`[${target.name}] appends/s, ${params.connections} connections`);
    metricsBefore = undefined;
    let cpuBefore: CpuSnapshot | undefined;
    let clientBefore: CpuSnapshot | undefined;
    for (const key of ["puts-n", "cpu", "cpu-client"]) cells.set(key, { text: "- (phase failed)" });
    if (target.metrics === undefined) cells.set("puts-n", noStore);
    cells.set("throughput", await cell(async () => {
      const result = await measureAppendThroughput(target.baseUrl, runId, { connections: params.connections, durationMs: params.durationMs, sizeBytes: APPEND_BYTES }, async () => {
        await markStoreStart(); // first: reading /metrics costs mink CPU too
        cpuBefore = cpuSnapshot(target.processes);
        clientBefore = cpuSnapshot(clientProcess);
      });
      const cpuAfter = cpuSnapshot(target.processes);
      const clientAfter = cpuSnapshot(clientProcess);
      if (cpuBefore !== undefined) cells.set("cpu", cpuCell(cpuBefore, cpuAfter, result.acknowledged, result.elapsedMs));
      if (clientBefore !== undefined) cells.set("cpu-client", cpuCell(clientBefore, clientAfter, result.acknowledged, result.elapsedMs));
      cells.set("puts-n", await storeFigure(result.acknowledged));
      cells.set("throughput-latency", { text: `${formatMs(result.latency.p50Ms)} / ${formatMs(result.latency.p99Ms)} ms` });
      if (result.errors.total === 0) figures.appendsPerSecond = result.appendsPerSecond;
      return withErrors(`${result.appendsPerSecond.toFixed(0)} (${result.acknowledged} in ${(result.elapsedMs / 1000).toFixed(1)} s)`, result.errors);
    }));
  };

  const fanOutPhase = async (): Promise<void> => {
    console.error(`[${target.name}] SSE fan-out to ${params.readers} readers`);
    cells.set("sse", await cell(async () => {
      const result = await measureSseFanOut(target.baseUrl, runId, {
        readers: params.readers,
        appends: params.sseAppends,
        intervalMs: params.sseIntervalMs,
        sizeBytes: APPEND_BYTES,
        openTimeoutMs: 60_000,
        drainTimeoutMs: 15_000,
      });
      cells.set("sse-readers", withErrors(`${result.readersReady} of ${result.readersRequested} ready`, result.readerErrors));
      cells.set("sse-delivered", withErrors(
        `${result.delivered} of ${result.expected} (${result.readersComplete} readers got all ${result.appendsAcknowledged})`,
        result.appendErrors,
      ));
      if (result.readersComplete === result.readersRequested) figures.sseP99Ms = result.latency.p99Ms;
      return { text: `${formatMs(result.latency.p50Ms)} / ${formatMs(result.latency.p99Ms)} ms (max ${formatMs(result.latency.maxMs)})` };
    }));
  };

  return [latencyPhase, throughputPhase, fanOutPhase];
}

function targetLine(what: string, mink: number | undefined, reference: number | undefined, met: (ratio: number) => boolean, goal: string): string {
  if (mink === undefined || reference === undefined || reference === 0) return `${what}: not measured (a phase failed or lost requests; see the table)`;
  const ratio = mink / reference;
  return `${what}: mink ${ratio.toFixed(2)}x the reference server's (target ${goal}): ${met(ratio) ? "met" : "MISSED"}`;
}

async function main(): Promise<void> {
  const runId = `bench-${Date.now().toString(36)}`;
  const cpuModel = cpus()[0]?.model ?? "unknown CPU";
  console.log(`service benchmark${quick ? " (--quick)" : ""}: ${new Date().toISOString()}, commit ${gitCommit()}, Node ${process.version}, ` +
    `${availableParallelism()} cores (${cpuModel}), load average ${loads()}, 127.0.0.1`);

  const cleanups: (() => Promise<void>)[] = [];
  try {
    const minkTitle = `mink (${nodes === 1 ? "1 node" : `${nodes} nodes, forwarding`}, local runtime, embedded S3)`;
    console.error("starting mink (local runtime) and the reference server");
    let mink: Service | undefined;
    let minkStartError: string | undefined;
    try {
      mink = await startService({ nodes, forwarding: nodes > 1, longPollTimeoutMs: LONG_POLL_TIMEOUT_MS });
      const started = mink;
      cleanups.push(() => started.stop());
    } catch (error) {
      minkStartError = `mink did not start: ${errorText(error)}`;
    }
    const reference: ReferenceServer = await startReferenceServer(LONG_POLL_TIMEOUT_MS);
    cleanups.push(() => reference.stop());

    const minkCells = new Map<string, Cell>();
    const referenceCells = new Map<string, Cell>();
    const minkFigures: Figures = {};
    const referenceFigures: Figures = {};
    const minkPhases = mink === undefined ? [] : phasesOf({
      name: "mink",
      baseUrl: mink.baseUrl,
      processes: minkProcesses(mink),
      metrics: () => readMinkMetrics(mink.baseUrl, mink.adminToken),
    }, runId, minkCells, minkFigures);
    if (minkStartError !== undefined) for (const key of ["latency", "throughput", "sse"]) minkCells.set(key, { error: minkStartError });
    const referencePhases = phasesOf({ name: "reference", baseUrl: reference.baseUrl, processes: referenceProcesses(reference) }, `${runId}-ref`, referenceCells, referenceFigures);
    for (let phase = 0; phase < referencePhases.length; phase++) {
      await minkPhases[phase]?.();
      await referencePhases[phase]?.();
    }

    const rows: Row[] = [
      { label: `append latency p50 / p99, 1 connection (${params.latencyAppends} x ${APPEND_BYTES} B)`, key: "latency" },
      { label: `appends/s, ${params.connections} connections over ${params.connections} streams (${params.durationMs / 1000} s)`, key: "throughput" },
      { label: `  append latency p50 / p99 under that load`, key: "throughput-latency" },
      { label: "  CPU s per 1,000 appends, every process of the server", key: "cpu" },
      { label: "  CPU s per 1,000 appends, the benchmark client", key: "cpu-client" },
      { label: "object-store PUTs per 1,000 appends, 1 connection", key: "puts-1" },
      { label: `object-store PUTs per 1,000 appends, ${params.connections} connections`, key: "puts-n" },
      { label: `SSE delivery p50 / p99, ${params.readers} readers x ${params.sseAppends} appends (1 per ${params.sseIntervalMs} ms)`, key: "sse" },
      { label: "  SSE readers ready", key: "sse-readers" },
      { label: "  SSE deliveries (reader x append)", key: "sse-delivered" },
    ];
    console.log();
    printTable(rows, [
      { title: minkTitle, cells: minkCells },
      { title: "@durable-streams/server 0.3.7 (file)", cells: referenceCells },
    ]);
    console.log();
    console.log(targetLine(`appends/s at ${params.connections} connections`, minkFigures.appendsPerSecond, referenceFigures.appendsPerSecond,
      (ratio) => ratio >= TARGET_THROUGHPUT_RATIO, `>= ${TARGET_THROUGHPUT_RATIO}x`));
    console.log(targetLine(`SSE delivery p99 to ${params.readers} readers`, minkFigures.sseP99Ms, referenceFigures.sseP99Ms,
      (ratio) => ratio <= TARGET_SSE_P99_RATIO, `<= ${TARGET_SSE_P99_RATIO}x`));
    console.log(`load average at the end: ${loads()}`);
    if (mink !== undefined && [...minkCells.values()].some((c) => "error" in c || c.note !== undefined)) {
      console.log(`\nmink's last log lines (${mink.logFile}):\n${mink.logTail(15)}`);
    }
  } finally {
    await runCleanups(cleanups);
  }
}

await main();
