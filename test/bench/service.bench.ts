// Service benchmark (issues 4, 9 and 26): mink (under the local runtime, scripts/local-runtime.ts, as
// started by test/e2e/service.ts: scripts/serve.ts in a child process, one workerd, the embedded S3
// endpoint, a second workerd, a child of this process) and the reference server `@durable-streams/server`
// (file-backed, in a child process) side by side on this machine, through the same undici client code.
// mink runs as `npm run dev` does (ROUTER_MODE=redirect), in two topologies (--topologies): one node, and
// three nodes, where the client follows each 307 to the owner's address as a Durable Streams client's fetch
// does. A third mink, three nodes with --latency-ms (default 30) added to every request its embedded S3
// endpoint answers, stands for R2 at production latency; it runs its phases among the three-node ones.
//
// Phases (service-bench/phases.ts), each for every server: append latency at one connection; appends/s at
// 64 connections over 64 streams, with the CPU every process of each server used per append; MB/s with
// 64 KiB appends at 16 connections; SSE delivery p99 to 1,000 readers (not for the mink at latency).
// The runs are interleaved: each phase goes to every server of a topology in turn before the next phase,
// the order of the servers alternates run by run, and the order of the topologies is chosen so that no
// server runs a phase right after its own previous one; the whole is repeated --runs times (default 3).
// Before each phase it waits (at most 15 s) until every server's processes are quiet, so that no phase
// runs while another server still works off its heavy phase (compaction, a disk flush).
// Every figure is printed as the median of the runs with their range, mink's median over the reference's,
// and issue 26's targets as met or missed on the medians.
//
//   npx tsx test/bench/service.bench.ts [--runs 3] [--topologies 1,3] [--latency-ms 30] [--quick]   # npm run bench:service
//   --floor: also the runtime's floor for an append (service-bench/append-floor.ts, no mink code) among the
//            three-node servers, and at --latency-ms too, printed beside mink and the reference server
//   --quick: one run (unless --runs), 1 s phases, 8 connections, 50 SSE readers: a smoke test, not figures
//
// It prints figures and asserts nothing; a phase that fails prints its error in its cells and the run goes
// on. Everything talks to 127.0.0.1 only, and everything started here is stopped (by PID or close()) on the
// way out, failure or not. Numbers are only comparable within one run on one machine.
import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { runPhase, type Outcome, type PhaseParams } from "./service-bench/phases.ts";
import { comparisonTargets, latencyTargets, printAtLatency, printComparison, type Runs } from "./service-bench/report.ts";
import { cpuSnapshot, cpuUsed, machineBusySeconds, treeOf, waitForQuiet, type ProcessPicker } from "./service-bench/process-cpu.ts";
import { startMink, startReference, type PhaseName, type Side, type Started } from "./service-bench/sides.ts";
import { errorText, runCleanups, sleep } from "./service-bench/stats.ts";
import { gitCommit } from "./git-commit.ts";
import { startAppendFloor } from "./service-bench/append-floor.ts";
import { printFloor } from "./service-bench/floor-report.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    topologies: { type: "string", default: "1,3" },
    "latency-ms": { type: "string", default: "30" },
    quick: { type: "boolean", default: false },
    floor: { type: "boolean", default: false },
  },
});
const quick = values.quick;
const runs = Number(values.runs ?? (quick ? 1 : 3));
if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs: not a positive count: ${values.runs}`);
const topologies = values.topologies.split(",").map(Number);
if (topologies.length === 0 || topologies.some((n) => !Number.isInteger(n) || n < 1) || new Set(topologies).size !== topologies.length) {
  throw new Error(`--topologies: not a list of distinct node counts: ${values.topologies}`);
}
const latencyMs = Number(values["latency-ms"]);
if (!Number.isFinite(latencyMs) || latencyMs < 0) throw new Error(`--latency-ms: not a duration: ${values["latency-ms"]}`);

const LONG_POLL_TIMEOUT_MS = 10_000;
/** A pause before a phase that would otherwise follow the same server's phase (only with one topology and no mink at latency). */
const SETTLE_MS = 5_000;
/** Before each phase, every server's processes together below this share of a core over a window, or the wait gives up. */
const QUIET = { belowCores: 0.1, windowMs: 500, maxMs: 15_000 };
const params: PhaseParams = quick
  ? { latencyAppends: 50, connections: 8, durationMs: 1_000, bandwidthConnections: 4, readers: 50, sseAppends: 5, sseIntervalMs: 200 }
  : { latencyAppends: 500, connections: 64, durationMs: 5_000, bandwidthConnections: 16, readers: 1_000, sseAppends: 20, sseIntervalMs: 200 };
const ALL_PHASES: readonly PhaseName[] = ["latency", "throughput", "bandwidth", "sse"];
const LATENCY_PHASES: readonly PhaseName[] = ["latency", "throughput", "bandwidth"];

/** A server in the interleaving: what it is, or why it did not start. */
interface Slot {
  readonly key: string;
  readonly title: string;
  readonly side: Side | string;
  readonly phases: readonly PhaseName[];
}

/** The servers of one topology in their base order (mink first), and their outcomes by server and phase, run after run. */
interface Block {
  readonly nodes: number;
  readonly slots: readonly Slot[];
  readonly runs: Map<string, Map<PhaseName, Outcome[]>>;
}

/** The runs of `slot`'s phases in `block`. */
function runsOf(block: Block, slot: Slot): Map<PhaseName, Outcome[]> {
  let runs = block.runs.get(slot.key);
  if (runs === undefined) block.runs.set(slot.key, (runs = new Map<PhaseName, Outcome[]>()));
  return runs;
}

const loads = (): string => loadavg().map((v) => v.toFixed(2)).join(" ");
const plural = (n: number): string => `${n} node${n === 1 ? "" : "s"}`;

async function startSlot(key: string, title: string, phases: readonly PhaseName[], start: () => Promise<Started>, cleanups: (() => Promise<void>)[]): Promise<Slot> {
  console.error(`starting ${title}`);
  const side = await start().then(
    (started) => {
      cleanups.push(() => started.stop());
      return started.side;
    },
    (error: unknown) => `${key} did not start: ${errorText(error)}`,
  );
  return { key, title, side, phases };
}

/** The order of one block's servers in a run: the base order, reversed in odd runs. */
const orderOf = (block: Block, run: number): readonly Slot[] => (run % 2 === 0 ? block.slots : [...block.slots].reverse());

/** The key of the server that runs last in `block` with `order`. */
function lastOf(order: readonly Slot[]): string | undefined {
  const lastPhase = ALL_PHASES.findLast((phase) => order.some((slot) => slot.phases.includes(phase)));
  return order.findLast((slot) => lastPhase !== undefined && slot.phases.includes(lastPhase))?.key;
}

/**
 * The blocks of one run in an order where no block starts with the server the previous one ended with
 * (`previous`): the given order or, failing that, the other orders, the first that fits; else the given one.
 */
function blocksInOrder(blocks: readonly Block[], run: number, previous: string | undefined): readonly Block[] {
  const fits = (order: readonly Block[]): boolean => {
    let last = previous;
    for (const block of order) {
      const slots = orderOf(block, run);
      if (slots[0]?.key === last) return false;
      last = lastOf(slots);
    }
    return true;
  };
  const candidates = [blocks, [...blocks].reverse()];
  return candidates.find(fits) ?? blocks;
}

/** The floor's servers, in the block they joined. */
interface Floors {
  readonly block: Block;
  readonly floor: Slot;
  readonly atLatency?: Slot;
}

/**
 * The runtime's floor joins the three-node block (or the last): with one PUT in flight per node, which takes
 * the fewest PUTs and so the least CPU an append can cost, and, at --latency-ms, with 2 in flight: about the
 * rate of 4 with fewer PUTs, above 1, 8 and 16 at 30 ms (with more, the embedded endpoint spends its CPU on
 * many small PUTs; docs/benchmarks.md has the runs).
 */
async function addFloors(blocks: Block[], cleanups: (() => Promise<void>)[]): Promise<Floors> {
  const host = blocks.find((block) => block.nodes === 3) ?? blocks.at(-1)!;
  const floor = await startSlot("floor", "runtime floor (3 DOs, redirect, 1 PUT in flight)", LATENCY_PHASES,
    () => startAppendFloor("floor", { latencyMs: 0, inFlight: 1, phases: LATENCY_PHASES }), cleanups);
  const atLatency = latencyMs > 0
    ? await startSlot("floor-latency", `runtime floor at ${latencyMs} ms (2 PUTs in flight)`, LATENCY_PHASES,
      () => startAppendFloor(`floor at ${latencyMs} ms`, { latencyMs, inFlight: 2, phases: LATENCY_PHASES }), cleanups)
    : undefined;
  const block: Block = { ...host, slots: [...host.slots, floor, ...(atLatency === undefined ? [] : [atLatency])] };
  blocks[blocks.indexOf(host)] = block;
  return { block, floor, ...(atLatency === undefined ? {} : { atLatency }) };
}

/** The floor beside mink and the reference server, and mink's share of what is left above the floor. */
function printFloors({ block, floor, atLatency }: Floors, reference: Slot): void {
  const mink = block.slots[0]!;
  const ofRuns = `median (min–max) of ${runs} run${runs === 1 ? "" : "s"}`;
  console.log(`\nthe runtime's floor for an append, ${plural(block.nodes)}: ${ofRuns} (service-bench/append-floor.ts: the hops and the PUT, no mink code)`);
  const floorRuns = runsOf(block, floor);
  const minkRuns = runsOf(block, mink);
  const referenceRuns = runsOf(block, reference);
  printFloor(params, [
    { title: floor.title, runs: floorRuns },
    { title: mink.title, runs: minkRuns },
    { title: "@durable-streams/server 0.3.7 (file)", runs: referenceRuns },
  ], [
    { title: "floor / reference", over: floorRuns, under: referenceRuns },
    { title: "mink / floor", over: minkRuns, under: floorRuns },
  ]);
  const minkAtLatency = block.slots.find((slot) => slot.key === "mink-latency");
  if (atLatency === undefined || minkAtLatency === undefined) return;
  console.log(`\nthe runtime's floor at ${latencyMs} ms per S3 request: ${ofRuns}`);
  const floorAtLatency = runsOf(block, atLatency);
  const minkLatencyRuns = runsOf(block, minkAtLatency);
  printFloor(params, [
    { title: atLatency.title, runs: floorAtLatency },
    { title: minkAtLatency.title, runs: minkLatencyRuns },
  ], [{ title: "mink / floor", over: minkLatencyRuns, under: floorAtLatency }], latencyMs);
}

async function main(): Promise<void> {
  const runId = `bench-${Date.now().toString(36)}`;
  const cpuModel = cpus()[0]?.model ?? "unknown CPU";
  console.log(`service benchmark${quick ? " (--quick)" : ""}: ${new Date().toISOString()}, commit ${gitCommit()}, Node ${process.version}, ` +
    `${availableParallelism()} cores (${cpuModel}), load average ${loads()}, 127.0.0.1; ${runs} interleaved run${runs === 1 ? "" : "s"}, ` +
    `topologies ${topologies.map(plural).join(" and ")}${latencyMs > 0 ? `, and mink at ${latencyMs} ms per S3 request` : ""}`);

  const cleanups: (() => Promise<void>)[] = [];
  try {
    const reference = await startSlot("reference", "@durable-streams/server 0.3.7 (file)", ALL_PHASES, () => startReference(LONG_POLL_TIMEOUT_MS, ALL_PHASES), cleanups);
    const blocks: Block[] = [];
    for (const nodes of topologies) {
      const title = `mink (${plural(nodes)}${nodes > 1 ? ", redirect" : ""}, local runtime, embedded S3)`;
      const options = { nodes, forwarding: false, longPollTimeoutMs: LONG_POLL_TIMEOUT_MS };
      const mink = await startSlot(`mink-${nodes}`, title, ALL_PHASES, () => startMink(`mink, ${plural(nodes)}`, options, ALL_PHASES), cleanups);
      blocks.push({ nodes, slots: [mink, reference], runs: new Map() });
    }
    // The mink at latency joins the three-node block (or the last one): it separates the other servers' phases.
    let atLatency: Slot | undefined;
    if (latencyMs > 0) {
      const title = `mink (3 nodes, redirect, ${latencyMs} ms per S3 request)`;
      const options = { nodes: 3, forwarding: false, longPollTimeoutMs: LONG_POLL_TIMEOUT_MS, s3LatencyMs: latencyMs };
      atLatency = await startSlot("mink-latency", title, LATENCY_PHASES, () => startMink(`mink, 3 nodes at ${latencyMs} ms`, options, LATENCY_PHASES), cleanups);
      const host = blocks.find((block) => block.nodes === 3) ?? blocks.at(-1)!;
      blocks[blocks.indexOf(host)] = { ...host, slots: [...host.slots, atLatency] };
    }

    const floors = values.floor ? await addFloors(blocks, cleanups) : undefined;

    const started = [reference, ...blocks.flatMap((block) => block.slots)].map((slot) => slot.side).filter((side): side is Side => typeof side !== "string");
    const everyServer: ProcessPicker = (table) => new Map(started.flatMap((side) => [...side.processes(table)]));
    const waits = { count: 0, totalMs: 0, notQuiet: 0 };
    // Everything this benchmark started descends from this process: what the machine did besides is someone else's.
    const ours: ProcessPicker = (table) => new Map([...treeOf(table, [process.pid])].map((pid) => [pid, table.get(pid)?.comm ?? "?"]));
    const oursBefore = cpuSnapshot(ours);
    const machineBefore = machineBusySeconds();
    const runsStarted = performance.now();
    let previous: string | undefined;
    for (let run = 0; run < runs; run++) {
      for (const block of blocksInOrder(blocks, run, previous)) {
        const order = orderOf(block, run);
        for (const phase of ALL_PHASES) {
          for (const slot of order.filter((s) => s.phases.includes(phase))) {
            if (slot.key === previous) {
              console.error(`[run ${run + 1}/${runs}] ${slot.key} would follow itself: ${SETTLE_MS / 1000} s pause`);
              await sleep(SETTLE_MS);
            }
            const waited = await waitForQuiet(everyServer, QUIET);
            waits.count++;
            waits.totalMs += waited.waitedMs;
            if (!waited.quiet) waits.notQuiet++;
            console.error(`[run ${run + 1}/${runs}] ${plural(block.nodes)}: ${slot.key}, ${phase} (after ${(waited.waitedMs / 1000).toFixed(1)} s for quiet${waited.quiet ? "" : ": not quiet"})`);
            const outcome = typeof slot.side === "string"
              ? slot.side
              : await runPhase(slot.side, phase, params, `${runId}-r${run}-n${block.nodes}-${slot.key}-${phase}`);
            const into = runsOf(block, slot);
            into.set(phase, [...(into.get(phase) ?? []), outcome]);
            previous = slot.key;
          }
        }
      }
    }

    const elapsedS = (performance.now() - runsStarted) / 1000;
    const outsideS = machineBusySeconds() - machineBefore - cpuUsed(oursBefore, cpuSnapshot(ours)).seconds;
    // The reference server runs in every block: its figures for a topology are those of that block's runs.
    const ofRuns = `median (min–max) of ${runs} run${runs === 1 ? "" : "s"}`;
    for (const block of blocks) {
      const mink = block.slots[0]!;
      const minkRuns: Runs = runsOf(block, mink);
      const referenceRuns: Runs = runsOf(block, reference);
      console.log(`\n${plural(block.nodes)}: ${ofRuns}`);
      printComparison(params, mink.title, minkRuns, referenceRuns);
      if (block.nodes === 3) {
        console.log(`\nissue 26's targets, three nodes against the reference server, on the medians${quick ? " (--quick: smaller phases than the targets assume)" : ""}:`);
        for (const line of comparisonTargets(params, minkRuns, referenceRuns)) console.log(`  ${line}`);
      }
    }
    const latencyBlock = blocks.find((block) => atLatency !== undefined && block.slots.includes(atLatency));
    if (atLatency !== undefined && latencyBlock !== undefined) {
      const latencyRuns: Runs = runsOf(latencyBlock, atLatency);
      console.log(`\nmink at ${latencyMs} ms per S3 request (3 nodes): ${ofRuns}`);
      printAtLatency(params, atLatency.title, latencyRuns, latencyMs);
      const caveat = latencyMs !== 30 ? " (set for 30 ms: round trips scaled, absolute figures as they are)" : quick ? " (--quick: smaller phases than the targets assume)" : "";
      console.log(`\nissue 26's targets at ${latencyMs} ms per S3 request, on the medians${caveat}:`);
      for (const line of latencyTargets(params, latencyRuns, latencyMs)) console.log(`  ${line}`);
    }
    if (floors !== undefined) printFloors(floors, reference);
    if (!topologies.includes(3)) console.log("\n(issue 26's targets against the reference server are for three nodes: not checked)");
    console.log(`\nbefore each of ${waits.count} phases, waited for every server to use < ${QUIET.belowCores} core over ${QUIET.windowMs} ms: ` +
      `${(waits.totalMs / 1000).toFixed(0)} s in all, ${waits.notQuiet} times still busy after ${QUIET.maxMs / 1000} s`);
    console.log(`CPU used on this machine by processes other than the benchmark's during the runs: ${outsideS.toFixed(0)} s in ${elapsedS.toFixed(0)} s ` +
      `(${(outsideS / elapsedS).toFixed(2)} of ${availableParallelism()} cores on average); load average at the end: ${loads()}`);
    for (const block of blocks) {
      for (const slot of block.slots) {
        const failed = [...runsOf(block, slot).values()].flat().some((o) => typeof o === "string" || o.errors.total > 0);
        if (failed && typeof slot.side !== "string" && slot.side.logTail !== undefined) console.log(`\n${slot.key}'s last log lines, ${slot.side.logTail()}`);
      }
    }
  } finally {
    await runCleanups(cleanups);
  }
}

await main();
