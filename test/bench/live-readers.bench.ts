// Live readers at the default cap (docs/limits.md, "Caps a node can hold"). Prints, asserts nothing: three
// nodes in token mode with wrangler.toml's defaults; node-1 filled with MAX_LIVE_READERS live readers
// (long-polls, or SSE responses with MINK_BENCH_MODE=sse) from four read tokens, a share each; then 7
// appends of one byte to another stream on node-1, one at a time: their latencies and median, the fill
// time, whether any node's epoch changed, and the RSS of the Worker's process tree (one workerd holds the
// Worker and every node under the local runtime). Needs `ulimit -n` above 11,000.
//
//   npm run bench:live-readers                     # MINK_BENCH_MODE=sse for SSE responses
//
// Long-polls are ended by one append to their stream; SSE responses by their 60 s end (closing 10,000
// connections at once kills the local workerd: docs/limits.md). Everything started here is stopped by PID.
import { execFileSync } from "node:child_process";
import { Agent, fetch } from "undici";
import { allLive, call, mint, namesByOwner, nodeEpochs, OPS, startHostileService, streamPath } from "../e2e/hostile-support.ts";
import { eventually } from "../support/eventually.ts";
import { positiveInt } from "./env-knobs.ts";

const MODE = process.env.MINK_BENCH_MODE === "sse" ? "sse" : "long-poll";
const PER_TOKEN = positiveInt("MINK_BENCH_PER_TOKEN", 2_500);
const TOKENS = 4;
const APPENDS = 7;
const WAVE = 500;

/** RSS in KB of `pid` and its descendants. */
function treeRssKb(pid: number): number {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,rss="]).toString().trim().split("\n").map((row) => row.trim().split(/\s+/).map(Number));
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of rows) {
      if (tree.has(child!) || !tree.has(parent!)) continue;
      tree.add(child!);
      grew = true;
    }
  }
  return rows.filter(([child]) => tree.has(child!)).reduce((sum, row) => sum + row[2]!, 0);
}

const service = await startHostileService({}, { longPollTimeoutMs: 30_000 });
try {
  const root = await mint(service, [""], OPS);
  const tokens = await Promise.all(Array.from({ length: TOKENS }, () => mint(service, [""], ["read"])));
  await allLive(service, root.token);
  const [park, write] = (await namesByOwner(service, "bench/s", root.token, (m) => (m.get("node-1")?.length ?? 0) >= 2)).get("node-1")! as [string, string];
  const before = await nodeEpochs(service);
  const agent = new Agent({ connections: TOKENS * PER_TOKEN + 100, pipelining: 0, keepAliveTimeout: 90_000, headersTimeout: 0, bodyTimeout: 0 });
  const gauge = async (): Promise<number> =>
    Number(/^mink_live_readers\{node="node-1"\} (\d+)/m.exec((await call(service, "/metrics", { token: service.adminToken })).text)?.[1]);
  const started = performance.now();
  const readers: Promise<unknown>[] = [];
  /** Readers that ended (before the fill is complete: refused or failed), by status or error. */
  const outcomes = new Map<string, number>();
  // WAVE connections at a time: 10,000 connects at once overflow the local runtime's accept backlog.
  for (const token of tokens) {
    for (let sent = 0; sent < PER_TOKEN; sent += WAVE) {
      for (let i = 0; i < Math.min(WAVE, PER_TOKEN - sent); i++) {
        const url = `${service.baseUrl}${streamPath(`${park}?offset=now&live=${MODE}`, "node-1")}`;
        const outcome = fetch(url, { headers: { authorization: `Bearer ${token.token}` }, dispatcher: agent }).then(
          async (response) => (await response.text(), String(response.status)),
          (error: unknown) => String((error as Error).cause ?? error).slice(0, 60),
        );
        readers.push(outcome.then((key) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1)));
      }
      const target = Math.min(readers.length, TOKENS * PER_TOKEN);
      await eventually(
        async () => {
          const held = await gauge();
          if (held !== target && outcomes.size > 0) throw new Error(`readers ended before the fill: ${JSON.stringify([...outcomes])}`);
          return held === target;
        },
        { timeoutMs: 30_000, what: `node-1 to hold ${target}`, errors: "fail" },
      );
    }
  }
  const fillS = (performance.now() - started) / 1000;
  const appendMs: number[] = [];
  for (let i = 0; i < APPENDS; i++) {
    const at = performance.now();
    const answer = await call(service, streamPath(write, "node-1"), { method: "POST", token: root.token, headers: { "content-type": "text/plain" }, body: "x" });
    appendMs.push(Math.round(performance.now() - at));
    if (answer.status !== 204) console.log(`append ${i}: ${answer.status} ${answer.text}`);
  }
  const after = await nodeEpochs(service);
  const medianMs = [...appendMs].sort((a, b) => a - b)[Math.floor(APPENDS / 2)];
  const epochsSame = [...before].every(([node, epoch]) => after.get(node) === epoch);
  console.log(JSON.stringify({ mode: MODE, readers: TOKENS * PER_TOKEN, fillS: Number(fillS.toFixed(1)), appendMs, medianMs, epochsSame, rssKb: treeRssKb(service.pid!) }));
  if (MODE === "long-poll") await call(service, streamPath(park, "node-1"), { method: "POST", token: root.token, headers: { "content-type": "text/plain" }, body: "wake" });
  await Promise.all(readers);
  await agent.close();
} finally {
  await service.stop();
}
