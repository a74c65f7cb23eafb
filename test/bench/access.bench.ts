// Access benchmark (docs/access.md, docs/benchmarks.md). Prints, and asserts nothing:
//   1. the CPU cost of one token check in this process (verify the HS256 signature with WebCrypto, read
//      the claims, decide table AC), for a valid token and for one signed with another key;
//   2. appends at 32 connections through one node in AUTH_MODE=open and in AUTH_MODE=token side by side:
//      appends/s, p50/p99, and the CPU of mink's processes per append, whose difference is what the token
//      check costs a request in the real runtime;
//   3. one node with its live-reader cap full (MAX_LIVE_READERS long-polls held, more refused with 429):
//      appends/s and p99 with the cap empty and full, and the node's epoch before and after (unchanged:
//      it did not reset).
//
//   npx tsx test/bench/access.bench.ts [--quick]       # npm run bench:access
//
// Everything started here is stopped by PID on the way out. Figures compare within one run only.
import { parseArgs } from "node:util";
import { E2E_TOKEN_SECRET, startService, type Service } from "../e2e/service.ts";
import { appendLoad, holdLongPolls, tokenCheckCpuMicros, type AppendLoad } from "./access-bench/phases.ts";
import { cpuSnapshot, cpuUsed, treeOf, type ProcessPicker } from "./service-bench/process-cpu.ts";
import { formatMs } from "./service-bench/stats.ts";
import { gitCommit } from "./git-commit.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const DURATION_MS = values.quick === true ? 3_000 : 10_000;
const CONNECTIONS = 32;
const CHECKS = values.quick === true ? 5_000 : 20_000;
const LIVE_READER_CAP = 500;
const HELD_LONG_POLLS = 600;

/** The service's runner and its workerd (the embedded S3 endpoint is in this process: not counted). */
function minkProcesses(service: Service): ProcessPicker {
  return (table) => new Map([...treeOf(table, service.pid === undefined ? [] : [service.pid])].map((pid) => [pid, table.get(pid)?.comm ?? "?"]));
}

async function adminJson<T>(service: Service, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function nodeEpoch(service: Service): Promise<number> {
  const view = await adminJson<{ nodes: { id: string; epoch: number }[] }>(service, "GET", "/admin/nodes");
  return view.nodes.find((node) => node.id === "node-0")?.epoch ?? -1;
}

interface Measured {
  load: AppendLoad;
  cpuMicrosPerAppend: number;
}

async function measured(service: Service, names: string[], headers: Record<string, string>): Promise<Measured> {
  const before = cpuSnapshot(minkProcesses(service));
  const load = await appendLoad(service.baseUrl, names, headers, DURATION_MS);
  const cpu = cpuUsed(before, cpuSnapshot(minkProcesses(service)));
  return { load, cpuMicrosPerAppend: (cpu.seconds * 1e6) / Math.max(1, load.acknowledged) };
}

function row(label: string, m: Measured): string {
  const { load } = m;
  return `${label.padEnd(34)} ${load.appendsPerSecond.toFixed(0).padStart(8)} ${formatMs(load.latency.p50Ms).padStart(9)} ${formatMs(load.latency.p99Ms).padStart(9)} ${m.cpuMicrosPerAppend.toFixed(0).padStart(12)} ${String(load.failed).padStart(7)}`;
}

const header = `${"".padEnd(34)} ${"appends/s".padStart(8)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"CPU µs/append".padStart(12)} ${"failed".padStart(7)}`;
const run = Date.now().toString(36);

console.log(`access benchmark, commit ${gitCommit()}, ${new Date().toISOString()}${values.quick === true ? " (quick)" : ""}`);
console.log("\n1. one token check in this process (Node WebCrypto, HS256), CPU µs");
console.log(`   valid token:                 ${(await tokenCheckCpuMicros(E2E_TOKEN_SECRET, CHECKS, true)).toFixed(1)} µs`);
console.log(`   token signed with another key: ${(await tokenCheckCpuMicros(E2E_TOKEN_SECRET, CHECKS, false)).toFixed(1)} µs`);

console.log(`\n2. ${CONNECTIONS} connections appending 100 B for ${DURATION_MS / 1000} s, one node`);
console.log(header);
const results: Measured[] = [];
for (const mode of ["open", "token"] as const) {
  const service = await startService({ nodes: 1, vars: { AUTH_MODE: mode } });
  try {
    let headers: Record<string, string> = {};
    if (mode === "token") {
      const minted = await adminJson<{ token: string }>(service, "POST", "/admin/tokens", { prefixes: ["bench/"], ops: ["create", "append"], ttlSeconds: 3600 });
      headers = { authorization: `Bearer ${minted.token}` };
    }
    const names = Array.from({ length: CONNECTIONS }, (_, i) => `bench/${mode}-${run}-${i}`);
    const result = await measured(service, names, headers);
    results.push(result);
    console.log(row(`AUTH_MODE=${mode}`, result));
  } finally {
    await service.stop();
  }
}
const [open, token] = results;
if (open !== undefined && token !== undefined) {
  console.log(`   token check per request in the runtime: ${(token.cpuMicrosPerAppend - open.cpuMicrosPerAppend).toFixed(0)} µs of mink CPU (difference of the two rows)`);
}

console.log(`\n3. the live-reader cap: MAX_LIVE_READERS=${LIVE_READER_CAP}, ${HELD_LONG_POLLS} long-polls held on one stream, 8 connections appending to others`);
const service = await startService({ nodes: 1, vars: { AUTH_MODE: "open", MAX_LIVE_READERS: String(LIVE_READER_CAP), LONG_POLL_TIMEOUT_MS: "30000" } });
try {
  const writers = (phase: string): string[] => Array.from({ length: 8 }, (_, i) => `cap/${phase}-${run}-${i}`);
  console.log(header);
  console.log(row("cap empty", await measured(service, writers("empty"), {})));
  const epochBefore = await nodeEpoch(service);
  const tail = `cap/tail-${run}`;
  await (await fetch(`${service.baseUrl}/v1/stream/${tail}`, { method: "PUT", headers: { "content-type": "text/plain" } })).arrayBuffer();
  const readers = holdLongPolls(service.baseUrl, tail, HELD_LONG_POLLS, {});
  const deadline = Date.now() + 30_000;
  while (readers.refused() < HELD_LONG_POLLS - LIVE_READER_CAP && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const full = await measured(service, writers("full"), {});
  const refused = readers.refused();
  await readers.stop();
  console.log(row(`cap full (${refused} answered 429)`, full));
  console.log(`   node-0 epoch before ${epochBefore}, after ${await nodeEpoch(service)} (the same: the node did not reset)`);
} finally {
  await service.stop();
}
