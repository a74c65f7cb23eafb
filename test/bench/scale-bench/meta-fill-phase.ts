// bench:scale's third part (--meta-fill N): one MetaLog filled with N stream records, then what it costs and
// what its restart costs: its workerd's resident memory empty, full and after a restart (VmRSS), the time
// from the restarted runtime's start to its first lookup answer, and lookups by name over random old names.
// The fill goes through the MetaLog's bulk path (proposeBatch: CreateStream, the rule every create goes
// through, 1,000 commands a call, from Node through Miniflare): a million creates over HTTP take half an
// hour here (`--fill` times those). Lookups go through the same path, so their latency includes the hop
// from Node into workerd. The runtime is in this process (scripts/local-runtime.ts), alone: no node, no
// router request, no object store.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildWorker, startLocalRuntime, type LocalRuntime } from "../../../scripts/local-runtime.ts";
import type { Command, StreamLookup, StreamQuery } from "../../../src/core/meta/index.ts";
import { META_LOG_NAME, type ProposeResult } from "../../../src/ports/meta-log-client.ts";
import { readProcStats } from "../../support/proc-stat.ts";
import { summarize, type LatencySummary } from "../service-bench/stats.ts";

/** What the bench calls on the MetaLog (durable-objects/meta-log.ts). */
interface MetaLogStub {
  proposeBatch(commands: readonly Command[]): Promise<ProposeResult[]>;
  lookupStream(query: StreamQuery): Promise<StreamLookup>;
}

export interface MetaFillFigures {
  readonly streams: number;
  readonly createsPerSecond: number;
  readonly rssEmptyBytes: number;
  readonly rssFullBytes: number;
  readonly rssRestartedBytes: number;
  /** From starting the runtime again to its answer to `ready` (the analogue of /health). */
  readonly startMs: number;
  /** From there to the first lookup's answer (the MetaLog's start is inside it). */
  readonly readyToFirstLookupMs: number;
  readonly lookups: LatencySummary;
}

const BATCH = 1000;
const LOOKUPS = 2000;

const nameOf = (i: number): string => `tenant-${i % 1000}/stream-${i}`;

/** Resident bytes of the workerd processes this process started. */
function workerdRss(): number {
  let bytes = 0;
  for (const stat of readProcStats()) {
    if (stat.ppid !== process.pid || stat.comm !== "workerd") continue;
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${stat.pid}/status`, "utf8"))?.[1];
    bytes += Number(kb ?? 0) * 1024;
  }
  return bytes;
}

async function metaLog(runtime: LocalRuntime): Promise<MetaLogStub> {
  return (await runtime.durableObject("META_LOG", META_LOG_NAME)) as MetaLogStub;
}

export async function measureMetaFill(streams: number, log: (line: string) => void): Promise<MetaFillFigures> {
  const dir = mkdtempSync(join(tmpdir(), "mink-meta-fill-"));
  const build = await buildWorker(join(".mink", "bench-meta-fill"));
  // The bounds as they ship (MAX_STREAMS 10,000,000).
  const options = { build, persistDir: join(dir, "state") };
  let runtime: LocalRuntime | null = await startLocalRuntime(options);
  try {
    let meta = await metaLog(runtime);
    await meta.lookupStream({ name: "warm-up" });
    const rssEmptyBytes = workerdRss();
    const started = performance.now();
    for (let from = 0; from < streams; from += BATCH) {
      const commands: Command[] = [];
      for (let i = from; i < Math.min(streams, from + BATCH); i++) commands.push({ type: "CreateStream", name: nameOf(i), config: { contentType: "application/json" } });
      const results = await meta.proposeBatch(commands);
      const refused = results.find((result) => !result.ok);
      if (refused !== undefined && !refused.ok) throw new Error(`create refused: ${refused.error.code}: ${refused.error.message}`);
      if ((from + BATCH) % 100_000 === 0) log(`  ${from + BATCH} streams, ${((from + BATCH) / ((performance.now() - started) / 1000)).toFixed(0)}/s`);
    }
    const createsPerSecond = streams / ((performance.now() - started) / 1000);
    const rssFullBytes = workerdRss();
    await runtime.stop();
    runtime = null;

    const restartAt = performance.now();
    runtime = await startLocalRuntime(options);
    const readyAt = performance.now();
    meta = await metaLog(runtime);
    const first = await meta.lookupStream({ name: nameOf(streams - 1) });
    const firstAt = performance.now();
    if (first.stream === null) throw new Error(`after the restart ${nameOf(streams - 1)} is unknown`);
    const latenciesMs: number[] = [];
    for (let i = 0; i < LOOKUPS; i++) {
      const name = nameOf(Math.floor(Math.random() * streams));
      const sent = performance.now();
      const answer = await meta.lookupStream({ name });
      latenciesMs.push(performance.now() - sent);
      if (answer.stream === null) throw new Error(`lookup of ${name} found nothing`);
    }
    return {
      streams,
      createsPerSecond,
      rssEmptyBytes,
      rssFullBytes,
      rssRestartedBytes: workerdRss(),
      startMs: readyAt - restartAt,
      readyToFirstLookupMs: firstAt - readyAt,
      lookups: summarize(latenciesMs),
    };
  } finally {
    await runtime?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
