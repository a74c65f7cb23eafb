// CPU per append, side by side for checkouts of mink (issue 26, item 3: what a change to the append path
// saves). Each checkout runs as `npm run dev` runs it (three nodes, the embedded S3 endpoint) from a fresh
// state directory (MINK_STATE_DIR), one at a time, the order alternating run by run. 64 connections create
// 64 streams at node-0's address (so every version sends each append to its owner's address: how the router
// routes new names does not enter) and append 100 B to them for --seconds. The figure is the CPU time of
// every process of that `npm run dev` (its Node process, mink's workerd and the S3 endpoint's) over the
// appends acknowledged meanwhile (/proc, utime + stime). Median (range) of --runs. Asserts nothing.
//
//   npx tsx test/bench/append-cpu.bench.ts [--checkout DIR]... [--runs 3] [--seconds 20]
//
// A second checkout of an older commit: `git worktree add /tmp/base <commit>` and link its node_modules
// (`ln -s "$PWD/node_modules" /tmp/base/node_modules`). Uses ports 8787 and 9000, like `npm run dev`.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { readProcStats } from "../support/proc-stat.ts";
import { stopGroup, trackGroup } from "../support/process-groups.ts";
import { median } from "./service-bench/medians.ts";
import { treeOf } from "./service-bench/process-cpu.ts";
import { sleep } from "./service-bench/stats.ts";

const { values } = parseArgs({
  options: { checkout: { type: "string", multiple: true }, runs: { type: "string", default: "3" }, seconds: { type: "string", default: "20" } },
});
const checkouts = (values.checkout ?? [fileURLToPath(new URL("../../", import.meta.url))]).map((dir) => resolve(dir));
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const BASE = "http://127.0.0.1:8787";
const CONNECTIONS = 64;
const BODY = "x".repeat(100);
const TICKS_PER_SECOND = 100; // Linux's USER_HZ

interface Sample {
  readonly appendsPerSecond: number;
  readonly cpuMsPerAppend: number;
}

/** `npm run dev` in `dir`, in a process group of its own, on fresh state; resolves once /health answers. */
async function startDev(dir: string): Promise<{ pid: number; stop: () => Promise<void> }> {
  // Below the checkout (its build must resolve the checkout's node_modules), in its ignored .mink/.
  mkdirSync(join(dir, ".mink"), { recursive: true });
  const state = mkdtempSync(join(dir, ".mink", "append-cpu-"));
  const child = spawn("npm", ["run", "dev"], { cwd: dir, env: { ...process.env, MINK_STATE_DIR: state }, detached: true, stdio: "ignore" });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`npm run dev in ${dir}: no pid`);
  trackGroup(pid);
  const stop = async (): Promise<void> => {
    await stopGroup(pid, { graceMs: 30_000, killMs: 10_000 });
    rmSync(state, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
    if (await fetch(`${BASE}/health`).then((r) => r.ok, () => false)) return { pid, stop };
  }
  await stop();
  throw new Error(`npm run dev in ${dir} did not answer /health within 120 s`);
}

/** CPU ticks of `pid` and its descendants now. */
function ticksOf(pid: number): number {
  const table = new Map(readProcStats().map((p) => [p.pid, { ...p }]));
  let ticks = 0;
  for (const member of treeOf(table, [pid])) ticks += table.get(member)?.ticks ?? 0;
  return ticks;
}

async function measure(dir: string, run: number): Promise<Sample> {
  const dev = await startDev(dir);
  const pool = new Pool(BASE, { connections: CONNECTIONS });
  try {
    const paths = await Promise.all(Array.from({ length: CONNECTIONS }, async (_, i) => {
      let path = `/n/node-0/v1/stream/append-cpu-${run}-${i}`;
      for (let hop = 0; hop < 3; hop++) {
        const created = await pool.request({ path, method: "PUT", headers: { "content-type": "text/plain" } });
        await created.body.dump();
        if (created.statusCode !== 307) break;
        path = new URL(String(created.headers.location)).pathname;
      }
      return path;
    }));
    const before = ticksOf(dev.pid);
    const started = performance.now();
    let acknowledged = 0;
    await Promise.all(paths.map(async (path) => {
      while (performance.now() - started < seconds * 1000) {
        const appended = await pool.request({ path, method: "POST", headers: { "content-type": "text/plain" }, body: BODY });
        await appended.body.dump();
        if (appended.statusCode !== 204) throw new Error(`append to ${path}: ${appended.statusCode}`);
        acknowledged++;
      }
    }));
    const elapsedS = (performance.now() - started) / 1000;
    const cpuMs = ((ticksOf(dev.pid) - before) * 1000) / TICKS_PER_SECOND;
    return { appendsPerSecond: acknowledged / elapsedS, cpuMsPerAppend: cpuMs / acknowledged };
  } finally {
    await pool.close();
    await dev.stop();
  }
}

const cell = (xs: readonly number[], digits: number): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;

async function main(): Promise<void> {
  const samples = new Map<string, Sample[]>(checkouts.map((dir) => [dir, []]));
  for (let run = 0; run < runs; run++) {
    const order = run % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const dir of order) {
      console.error(`[run ${run + 1}/${runs}] ${dir}`);
      samples.get(dir)!.push(await measure(dir, run));
    }
  }
  console.log(`appends of 100 B, ${CONNECTIONS} connections, ${seconds} s, npm run dev (3 nodes); median (range) of ${runs} runs`);
  for (const [dir, taken] of samples) {
    console.log(`${dir}: ${cell(taken.map((s) => s.cpuMsPerAppend), 3)} ms CPU per append, ${cell(taken.map((s) => s.appendsPerSecond), 0)} appends/s`);
  }
}

await main();
