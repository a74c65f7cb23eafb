// Scale benchmark (issue 25), first part: stream creates per second, mink and the reference server
// `@durable-streams/server` (file-backed, a child process) side by side on this machine, at 1, 32 and 256
// connections, fresh names, for a fixed time per phase. mink runs as `npm run dev` does: the local runtime,
// three nodes (--nodes), ROUTER_MODE=redirect, so a create the router's node does not own is answered 307
// and sent again to the owner, as every Durable Streams client does.
//
// The runs are interleaved (each phase for one server, then the same phase for the other, the order
// alternating run by run) and repeated (--runs, default 3); each cell prints the median of the runs and
// their range. For mink's creates it also prints where the time goes: the share answered 307 and the
// latency of the first request (the router's node) and of the second (the owner).
//
//   npx tsx test/bench/scale.bench.ts [--runs 3] [--seconds 5] [--nodes 3] [--quick] [--floor]     # npm run bench:scale
//
// With --floor the same runs interleave a third server: a Worker of a few lines on the same runtime, with
// no mink code, in four modes (scale-bench/runtime-floor.ts), printed in a table of its own: what the
// runtime itself allows a create of this design on this machine.
//
// With --fill N it then starts one node alone (MINK_NODES=node-0 in `npm run dev` terms), fills it with N
// streams of one append each, and prints its workerd's resident memory empty and full, and after a SIGKILL
// and restart the time to /health and from there to the first read of an old stream, and read latency
// over old streams (scale-bench/fill-phase.ts).
//
//   npx tsx test/bench/scale.bench.ts --runs 0 --fill 100000      # only the fill
//   ... --fill 100000 --resident 5000     # with MAX_RESIDENT_STREAMS=5000 (default: the node's default)
//
// With --meta-fill N it fills one MetaLog alone with N stream records through its bulk path and prints its
// workerd's memory, the restart to the first lookup and lookup latency (scale-bench/meta-fill-phase.ts).
//
//   npx tsx test/bench/scale.bench.ts --runs 0 --meta-fill 1000000
//
// It prints figures and asserts nothing. Everything talks to 127.0.0.1 only, and everything started here
// is stopped (by PID or close()) on the way out. Numbers are only comparable within one run on one machine.
import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { startService, type Service } from "../e2e/service.ts";
import { REQUEST_TIMEOUT_MS, streamPath } from "./service-bench/http.ts";
import { figureCell, median } from "./service-bench/medians.ts";
import { startReferenceServer, type ReferenceServer } from "./service-bench/reference-server.ts";
import { ErrorTally, errorText, formatMs, runCleanups, summarize } from "./service-bench/stats.ts";
import { printTable, type Cell, type Row } from "./service-bench/table.ts";
import { gitCommit } from "./git-commit.ts";
import { FIRST_READ_TIMEOUT_MS, measureFill, SETTLE_TIMEOUT_MS } from "./scale-bench/fill-phase.ts";
import { measureMetaFill } from "./scale-bench/meta-fill-phase.ts";
import { FLOOR_MODES, FLOOR_TITLES, printFloorTable, startRuntimeFloor } from "./scale-bench/runtime-floor.ts";
import { nodeSettings } from "../../src/node/settings.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    seconds: { type: "string", default: "5" },
    nodes: { type: "string", default: "3" },
    quick: { type: "boolean", default: false },
    floor: { type: "boolean", default: false },
    fill: { type: "string", default: "0" },
    resident: { type: "string" },
    "meta-fill": { type: "string", default: "0" },
  },
});
const runs = values.quick ? 1 : Number(values.runs);
if (!Number.isSafeInteger(runs) || runs < 0) throw new Error(`--runs: not a count: ${values.runs}`);
const phaseMs = (values.quick ? 1 : Number(values.seconds)) * 1000;
const nodes = Number(values.nodes);
const CONNECTIONS = values.quick ? [1, 32] : [1, 32, 256];
const fillStreams = Number(values.fill);
if (!Number.isSafeInteger(fillStreams) || fillStreams < 0) throw new Error(`--fill: not a count: ${values.fill}`);
const metaFillStreams = Number(values["meta-fill"]);
if (!Number.isSafeInteger(metaFillStreams) || metaFillStreams < 0) throw new Error(`--meta-fill: not a count: ${values["meta-fill"]}`);
const residentCap = values.resident === undefined ? nodeSettings({}).maxResidentStreams : Number(values.resident);
if (!Number.isSafeInteger(residentCap) || residentCap < 1) throw new Error(`--resident: not a count: ${values.resident}`);
/** A create answered 307 is sent again to its Location, at most this many times. */
const MAX_REDIRECTS = 3;

/** A server in the interleaving: its name, origin, the head of its stream names, where its phases go. */
type Side = [string, string, string, Map<number, (CreatePhase | string)[]>];

interface CreatePhase {
  readonly createsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: ErrorTally;
  /** Creates answered 307 first, and the latency of the first request (to the router) and of the last. */
  readonly redirected: number;
  readonly firstHopP50Ms: number;
  readonly lastHopP50Ms: number;
}

/** One create, following 307s on the same origin; the latency of each request. */
async function create(pool: Pool, path: string): Promise<number[]> {
  const hopsMs: number[] = [];
  let at = path;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const sent = performance.now();
    const response = await pool.request({
      path: at,
      method: "PUT",
      headers: { "content-type": "text/plain" },
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    const text = await response.body.text();
    hopsMs.push(performance.now() - sent);
    if (response.statusCode === 201) return hopsMs;
    const location = response.headers.location;
    if (response.statusCode !== 307 || typeof location !== "string") throw new Error(`PUT ${at}: ${response.statusCode} ${text.slice(0, 200)}`);
    at = new URL(location).pathname;
  }
  throw new Error(`PUT ${path}: more than ${MAX_REDIRECTS} redirects`);
}

async function measureCreates(baseUrl: string, prefix: string, connections: number): Promise<CreatePhase> {
  const pool = new Pool(baseUrl, { connections, keepAliveTimeout: 60_000, headersTimeout: REQUEST_TIMEOUT_MS });
  try {
    const errors = new ErrorTally();
    const samplesMs: number[] = [];
    const firstHopMs: number[] = [];
    const lastHopMs: number[] = [];
    let redirected = 0;
    let next = 0;
    const started = performance.now();
    const deadline = started + phaseMs;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        try {
          const hops = await create(pool, streamPath(`${prefix}/s-${next++}`));
          samplesMs.push(performance.now() - sent);
          firstHopMs.push(hops[0]!);
          lastHopMs.push(hops.at(-1)!);
          if (hops.length > 1) redirected++;
        } catch (error) {
          errors.add(error);
        }
      }
    }));
    const elapsedMs = performance.now() - started;
    const latency = summarize(samplesMs);
    return {
      createsPerSecond: (samplesMs.length * 1000) / elapsedMs,
      p50Ms: latency.p50Ms,
      p99Ms: latency.p99Ms,
      errors,
      redirected: samplesMs.length === 0 ? 0 : redirected / samplesMs.length,
      firstHopP50Ms: summarize(firstHopMs).p50Ms,
      lastHopP50Ms: summarize(lastHopMs).p50Ms,
    };
  } finally {
    await pool.destroy();
  }
}

const loads = (): string => loadavg().map((v) => v.toFixed(2)).join(" ");

async function main(): Promise<void> {
  if (runs > 0) await createPhases();
  if (fillStreams > 0) await fill();
  if (metaFillStreams > 0) await metaFill();
}

/** The creates, both servers, `runs` interleaved runs. */
async function createPhases(): Promise<void> {
  console.log(`scale benchmark (creates): ${new Date().toISOString()}, commit ${gitCommit()}, Node ${process.version}, ` +
    `${availableParallelism()} cores (${cpus()[0]?.model ?? "unknown CPU"}), load average ${loads()}, ${runs} interleaved runs of ${phaseMs / 1000} s per phase`);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    console.error(`starting mink (local runtime, ${nodes} nodes, redirect) and the reference server`);
    const mink: Service = await startService({ nodes, forwarding: false });
    cleanups.push(() => mink.stop());
    const reference: ReferenceServer = await startReferenceServer(10_000);
    cleanups.push(() => reference.stop());
    const floor = values.floor ? await startRuntimeFloor() : null;
    if (floor !== null) cleanups.push(() => floor.stop());
    const runId = `scale-${Date.now().toString(36)}`;
    const minkPhases = new Map<number, (CreatePhase | string)[]>();
    const referencePhases = new Map<number, (CreatePhase | string)[]>();
    const floorPhases = new Map(FLOOR_MODES.map((mode) => [mode, new Map<number, (CreatePhase | string)[]>()]));
    for (let run = 0; run < runs; run++) {
      for (const connections of CONNECTIONS) {
        const sides: Side[] = [
          ["mink", mink.baseUrl, "", minkPhases],
          ["reference", reference.baseUrl, "", referencePhases],
          ...(floor === null ? [] : FLOOR_MODES.map((mode) => [`floor ${mode}`, floor.baseUrl, `${mode}~`, floorPhases.get(mode)!] satisfies Side)),
        ];
        if (run % 2 === 1) sides.reverse();
        for (const [name, baseUrl, head, into] of sides) {
          console.error(`[run ${run + 1}/${runs}] ${name}: creates at ${connections} connections`);
          const phase = await measureCreates(baseUrl, `${head}${runId}-r${run}-c${connections}`, connections).catch(errorText);
          into.set(connections, [...(into.get(connections) ?? []), phase]);
        }
      }
    }
    const rows: Row[] = [];
    const minkCells = new Map<string, Cell>();
    const referenceCells = new Map<string, Cell>();
    const perSecond = (x: number): string => x.toFixed(0);
    const share = (x: number): string => `${(x * 100).toFixed(0)}%`;
    for (const connections of CONNECTIONS) {
      const key = `c${connections}`;
      rows.push({ label: `creates/s, ${connections} connection${connections === 1 ? "" : "s"}`, key });
      rows.push({ label: "  create latency p50, ms", key: `${key}-p50` });
      rows.push({ label: "  create latency p99, ms", key: `${key}-p99` });
      rows.push({ label: "  answered 307 first (sent again to the owner)", key: `${key}-redirected` });
      rows.push({ label: "  p50 of the first request / of the owner's, ms", key: `${key}-hops` });
      for (const [cells, phases] of [[minkCells, minkPhases.get(connections) ?? []], [referenceCells, referencePhases.get(connections) ?? []]] as const) {
        cells.set(key, figureCell(phases, (p) => p.createsPerSecond, perSecond));
        cells.set(`${key}-p50`, figureCell(phases, (p) => p.p50Ms, formatMs));
        cells.set(`${key}-p99`, figureCell(phases, (p) => p.p99Ms, formatMs));
        cells.set(`${key}-redirected`, figureCell(phases, (p) => p.redirected, share));
        const first = figureCell(phases, (p) => p.firstHopP50Ms, formatMs);
        const last = figureCell(phases, (p) => p.lastHopP50Ms, formatMs);
        cells.set(`${key}-hops`, "text" in first && "text" in last ? { text: `${first.text} / ${last.text}` } : first);
      }
    }
    console.log();
    printTable(rows, [
      { title: `mink (${nodes} node${nodes === 1 ? "" : "s"}, redirect, local runtime, embedded S3)`, cells: minkCells },
      { title: "@durable-streams/server 0.3.7 (file)", cells: referenceCells },
    ]);
    if (floor !== null) {
      const rateAndP50 = (phases: readonly (CreatePhase | string)[]): Cell => {
        const rate = figureCell(phases, (p) => p.createsPerSecond, perSecond);
        const measured = phases.filter((phase): phase is CreatePhase => typeof phase !== "string");
        if (!("text" in rate) || measured.length === 0) return rate;
        return { ...rate, text: `${rate.text}, p50 ${formatMs(median(measured.map((p) => p.p50Ms)))}` };
      };
      printFloorTable(CONNECTIONS, [...FLOOR_MODES.map((mode) => [FLOOR_TITLES[mode], floorPhases.get(mode)!] as const), ["mink", minkPhases], ["reference", referencePhases]], rateAndP50);
    }
    console.log(`\nload average at the end: ${loads()}`);
  } finally {
    await runCleanups(cleanups);
  }
}

/** The --fill part: one node, `fillStreams` streams, memory and a restart. */
async function fill(): Promise<void> {
  // MAX_STREAMS and MAX_META_BYTES as they ship hold any fill this machine can make.
  const vars = { MAX_RESIDENT_STREAMS: String(residentCap) };
  const service = await startService({ nodes: 1, vars });
  try {
    console.error(`filling one node with ${fillStreams} streams`);
    const fill = { streams: fillStreams, connections: 32, residentCap };
    const figures = await measureFill(service, `fill-${Date.now().toString(36)}`, fill, (line) => console.error(line));
    const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
    const perStream = (bytes: number): string => `${((bytes - figures.rssEmptyBytes) / figures.streams).toFixed(0)} B/stream over empty`;
    console.log(`\none node filled with ${figures.streams} streams (one append each, 32 connections): ${figures.createsPerSecond.toFixed(0)} streams/s`);
    const reads = figures.reads === null ? "" : `, ${figures.reads.count} reads`;
    const settled = figures.settleMs === null
      ? `not within ${(SETTLE_TIMEOUT_MS / 1000).toFixed(0)} s (${figures.openStreamsAtKill} in memory)`
      : `in ${(figures.settleMs / 1000).toFixed(0)} s (${figures.openStreamsAtKill} in memory)`;
    console.log(`  workerd resident memory: empty ${mb(figures.rssEmptyBytes)}, full ${mb(figures.rssFullBytes)} (${perStream(figures.rssFullBytes)}); ` +
      `idle streams evicted down to ${residentCap} ${settled}: ${mb(figures.rssSettledBytes)} (${perStream(figures.rssSettledBytes)}); ` +
      `after SIGKILL, restart${reads} ${mb(figures.rssRestartedBytes)} (${perStream(figures.rssRestartedBytes)})`);
    const firstRead = figures.healthToFirstReadMs === null
      ? `no read succeeded within ${(FIRST_READ_TIMEOUT_MS / 1000).toFixed(0)} s (${figures.firstReadAttempts} attempts, each 503: the node did not finish starting)`
      : `${figures.healthToFirstReadMs.toFixed(0)} ms (${figures.firstReadAttempts} attempt${figures.firstReadAttempts === 1 ? "" : "s"})`;
    console.log(`  SIGKILL to /health: ${figures.restartToHealthMs.toFixed(0)} ms; /health to the first read of an old stream: ${firstRead}`);
    if (figures.reads !== null) console.log(`  then reads of random old streams (offset=-1), one connection: p50 ${formatMs(figures.reads.p50Ms)} ms, p99 ${formatMs(figures.reads.p99Ms)} ms`);
  } finally {
    await service.stop();
  }
}

/** The --meta-fill part: one MetaLog, `metaFillStreams` records, memory, a restart and lookups. */
async function metaFill(): Promise<void> {
  console.error(`filling one MetaLog with ${metaFillStreams} stream records`);
  const figures = await measureMetaFill(metaFillStreams, (line) => console.error(line));
  const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
  const perStream = (bytes: number): string => `${((bytes - figures.rssEmptyBytes) / figures.streams).toFixed(0)} B/stream over empty`;
  console.log(`
one MetaLog filled with ${figures.streams} stream records (bulk path, 1,000 creates a call): ${figures.createsPerSecond.toFixed(0)} creates/s`);
  console.log(`  workerd resident memory: empty ${mb(figures.rssEmptyBytes)}, full ${mb(figures.rssFullBytes)} (${perStream(figures.rssFullBytes)}); ` +
    `restarted, after ${figures.lookups.count} lookups ${mb(figures.rssRestartedBytes)} (${perStream(figures.rssRestartedBytes)})`);
  console.log(`  restart: runtime ready in ${figures.startMs.toFixed(0)} ms, then the first lookup answered in ${figures.readyToFirstLookupMs.toFixed(0)} ms`);
  console.log(`  lookups of random names (from Node through Miniflare, one at a time): p50 ${formatMs(figures.lookups.p50Ms)} ms, p99 ${formatMs(figures.lookups.p99Ms)} ms`);
}

await main();
