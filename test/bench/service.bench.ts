// Service benchmark (issue 4): mink (one node, embedded S3 endpoint, under `wrangler dev`) and the
// reference server `@durable-streams/server` (file-backed, in a child process) side by side on this
// machine, through the same undici client code:
//   1. append latency p50/p99 at one keep-alive connection (sequential 100 B appends to one stream);
//   2. appends per second at 64 connections over 64 streams, for a fixed time;
//   3. object-store requests during 1 and 2, counted by a proxy between mink and its S3 endpoint, as PUTs
//      per 1,000 acknowledged appends (the reference server has no object store: n/a);
//   4. delivery latency p50/p99 from an append's send to its receipt by each of 1,000 SSE readers.
//
//   npx tsx test/bench/service.bench.ts [--quick]
//
// It prints figures and asserts nothing; a phase that fails prints its error in its cell and the run goes
// on. Everything talks to 127.0.0.1 only, and everything started here is stopped (by PID or close()) on the
// way out, failure or not. Numbers are only comparable within one run on one machine.
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startEmbeddedS3, type EmbeddedS3 } from "../../scripts/embedded-s3.ts";
import { startService, type Service } from "../e2e/service.ts";
import { measureAppendLatency, measureAppendThroughput } from "./service-bench/append-phases.ts";
import { diffCounts, startCountingProxy, type CountingProxy, type RequestCounts } from "./service-bench/counting-proxy.ts";
import { startReferenceServer, type ReferenceServer } from "./service-bench/reference-server.ts";
import { measureSseFanOut } from "./service-bench/sse-fan-out.ts";
import { errorText, formatMs } from "./service-bench/stats.ts";
import { printTable, type Cell, type Row } from "./service-bench/table.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const quick = values.quick;

const APPEND_BYTES = 100;
const LONG_POLL_TIMEOUT_MS = 10_000;
const params = quick
  ? { latencyAppends: 50, connections: 8, durationMs: 1_000, readers: 50, sseAppends: 5, sseIntervalMs: 200 }
  : { latencyAppends: 500, connections: 64, durationMs: 5_000, readers: 1_000, sseAppends: 20, sseIntervalMs: 200 };

interface Target {
  name: string;
  baseUrl: string;
  /** Request counts of mink's object store; undefined for a server without one. */
  objectStore?: CountingProxy;
}

interface Mink {
  service: Service;
  s3: EmbeddedS3;
  proxy: CountingProxy;
}

/** mink with its object store behind the counting proxy: the S3_* vars (applied last) name the proxy. */
async function startMink(cleanups: (() => Promise<void>)[]): Promise<Mink> {
  const s3 = await startEmbeddedS3({ port: 0 });
  cleanups.push(() => s3.stop());
  const proxy = await startCountingProxy(s3.url);
  cleanups.push(() => proxy.close());
  // startService also starts an embedded endpoint of its own; with these vars it stays unused.
  const service = await startService({
    longPollTimeoutMs: LONG_POLL_TIMEOUT_MS,
    vars: { S3_ENDPOINT: proxy.url, S3_BUCKET: s3.bucket, S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey },
  });
  cleanups.push(() => service.stop());
  return { service, s3, proxy };
}

/** Runs `phase`, turning a throw into an error cell (footnoted with the full text). */
async function cell(phase: () => Promise<Cell>): Promise<Cell> {
  try {
    return await phase();
  } catch (error) {
    return { error: errorText(error) };
  }
}

function perThousand(counts: RequestCounts, acknowledged: number): string {
  if (acknowledged === 0) return "no acknowledged appends";
  return `${((counts.PUT * 1000) / acknowledged).toFixed(0)} (PUT ${counts.PUT} GET ${counts.GET} LIST ${counts.LIST} DELETE ${counts.DELETE})`;
}

function withErrors(text: string, errors: { total: number; describe(): string }): Cell {
  return errors.total === 0 ? { text } : { text: `${text}; ${errors.total} failed`, note: errors.describe() };
}

/**
 * The three phases for one server, each filling its cells. main() runs each phase for both servers back to
 * back (not all of one server, then the other), so a change in the shared machine's load hits both alike.
 */
function phasesOf(target: Target, runId: string, cells: Map<string, Cell>): (() => Promise<void>)[] {
  const store = target.objectStore;
  let before: RequestCounts | undefined;
  const markStart = (): void => {
    before = store?.snapshot();
  };
  const storeCell = (acknowledged: number): Cell =>
    store === undefined || before === undefined ? { text: "n/a" } : { text: perThousand(diffCounts(store.snapshot(), before), acknowledged) };
  const notMeasured: Cell = { text: store === undefined ? "n/a" : "- (phase failed)" };

  const latencyPhase = async (): Promise<void> => {
    console.error(`[${target.name}] append latency, 1 connection`);
    before = undefined;
    cells.set("puts-1", notMeasured);
    cells.set("latency", await cell(async () => {
      const result = await measureAppendLatency(target.baseUrl, runId, { appends: params.latencyAppends, sizeBytes: APPEND_BYTES, maxMs: 120_000 }, markStart);
      cells.set("puts-1", storeCell(result.acknowledged));
      return withErrors(`${formatMs(result.latency.p50Ms)} / ${formatMs(result.latency.p99Ms)} ms (n=${result.acknowledged})`, result.errors);
    }));
  };

  const throughputPhase = async (): Promise<void> => {
    console.error(`[${target.name}] appends/s, ${params.connections} connections`);
    before = undefined;
    cells.set("puts-n", notMeasured);
    cells.set("throughput", await cell(async () => {
      const result = await measureAppendThroughput(target.baseUrl, runId, { connections: params.connections, durationMs: params.durationMs, sizeBytes: APPEND_BYTES }, markStart);
      cells.set("puts-n", storeCell(result.acknowledged));
      cells.set("throughput-latency", { text: `${formatMs(result.latency.p50Ms)} / ${formatMs(result.latency.p99Ms)} ms` });
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
      return { text: `${formatMs(result.latency.p50Ms)} / ${formatMs(result.latency.p99Ms)} ms (max ${formatMs(result.latency.maxMs)})` };
    }));
  };

  return [latencyPhase, throughputPhase, fanOutPhase];
}

async function main(): Promise<void> {
  const runId = `bench-${Date.now().toString(36)}`;
  const cpuModel = cpus()[0]?.model ?? "unknown CPU";
  console.log(`service benchmark${quick ? " (--quick)" : ""}: ${new Date().toISOString()}, Node ${process.version}, ` +
    `${availableParallelism()} cores (${cpuModel}), load average ${loadavg().map((v) => v.toFixed(2)).join(" ")}, 127.0.0.1`);

  const cleanups: (() => Promise<void>)[] = [];
  const columns: { title: string; cells: Map<string, Cell> }[] = [];
  let mink: Mink | undefined;
  try {
    const minkTitle = "mink (1 node, embedded S3)";
    console.error("starting mink (wrangler dev) and the reference server");
    let minkStartError: string | undefined;
    try {
      mink = await startMink(cleanups);
    } catch (error) {
      minkStartError = `mink did not start: ${errorText(error)}`;
    }
    const reference: ReferenceServer = await startReferenceServer(LONG_POLL_TIMEOUT_MS);
    cleanups.push(() => reference.stop());

    const minkCells = new Map<string, Cell>();
    const referenceCells = new Map<string, Cell>();
    columns.push({ title: minkTitle, cells: minkCells }, { title: "@durable-streams/server 0.3.7 (file)", cells: referenceCells });
    const minkPhases = mink === undefined ? [] : phasesOf({ name: "mink", baseUrl: mink.service.baseUrl, objectStore: mink.proxy }, runId, minkCells);
    if (minkStartError !== undefined) for (const key of ["latency", "throughput", "sse"]) minkCells.set(key, { error: minkStartError });
    const referencePhases = phasesOf({ name: "reference", baseUrl: reference.baseUrl }, `${runId}-ref`, referenceCells);
    for (let phase = 0; phase < referencePhases.length; phase++) {
      await minkPhases[phase]?.();
      await referencePhases[phase]?.();
    }

    const rows: Row[] = [
      { label: `append latency p50 / p99, 1 connection (${params.latencyAppends} x ${APPEND_BYTES} B)`, key: "latency" },
      { label: `appends/s, ${params.connections} connections over ${params.connections} streams (${params.durationMs / 1000} s)`, key: "throughput" },
      { label: `  append latency p50 / p99 under that load`, key: "throughput-latency" },
      { label: "object-store PUTs per 1,000 appends, 1 connection", key: "puts-1" },
      { label: `object-store PUTs per 1,000 appends, ${params.connections} connections`, key: "puts-n" },
      { label: `SSE delivery p50 / p99, ${params.readers} readers x ${params.sseAppends} appends (1 per ${params.sseIntervalMs} ms)`, key: "sse" },
      { label: "  SSE readers ready", key: "sse-readers" },
      { label: "  SSE deliveries (reader x append)", key: "sse-delivered" },
    ];
    console.log();
    printTable(rows, columns);
    if (mink !== undefined) {
      // `wrangler dev` rebuilds and restarts the Worker whenever a source file changes (there is no flag to
      // stop it watching): in a tree being edited that disturbs mink's figures, so say so.
      const reloads = readFileSync(mink.service.logFile, "utf8").match(/Reloading local server/g)?.length ?? 0;
      console.log(reloads === 0
        ? "mink: no reload of the Worker during the run"
        : `mink: WARNING: wrangler dev reloaded the Worker ${reloads} times during the run (source files changed): its figures are disturbed`);
    }
    console.log(`load average at the end: ${loadavg().map((v) => v.toFixed(2)).join(" ")}`);
    if (mink !== undefined && [...(columns[0]?.cells.values() ?? [])].some((c) => "error" in c || c.note !== undefined)) {
      console.log(`\nmink's last log lines (${mink.service.logFile}):\n${mink.service.logTail(15)}`);
    }
  } finally {
    // Reverse order: the service before the proxy before the endpoint behind it.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.error(`cleanup: ${errorText(error)}`);
      }
    }
  }
}

await main();
