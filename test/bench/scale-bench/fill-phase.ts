// bench:scale's second part: one node filled with many streams (one append each), then what that costs
// and what a restart costs: the node's workerd resident memory empty, full and after a SIGKILL and restart
// (VmRSS from /proc), the time from the restart to `/health` and from there to the first read of an old
// stream, and read latency over old streams afterwards. mink only: the reference server keeps no per-stream
// state in memory to compare.
import { readFileSync } from "node:fs";
import { Pool } from "undici";
import type { Service } from "../../e2e/service.ts";
import { readProcStats } from "../../support/proc-stat.ts";
import { REQUEST_TIMEOUT_MS } from "../service-bench/http.ts";
import { summarize, type LatencySummary } from "../service-bench/stats.ts";

export interface FillFigures {
  readonly streams: number;
  readonly createsPerSecond: number;
  readonly rssEmptyBytes: number;
  /** Right after the last create. */
  readonly rssFullBytes: number;
  /** How long the node took to compact and evict down to its resident cap; null: it did not within SETTLE_TIMEOUT_MS. */
  readonly settleMs: number | null;
  /** Streams the node held in memory when it was killed (mink_open_streams). */
  readonly openStreamsAtKill: number;
  /** Once settled (or at the deadline): the figure for a node whose streams are mostly idle. */
  readonly rssSettledBytes: number;
  readonly rssRestartedBytes: number;
  readonly restartToHealthMs: number;
  /** Null: no read succeeded within FIRST_READ_TIMEOUT_MS of /health (every attempt answered 503). */
  readonly healthToFirstReadMs: number | null;
  readonly firstReadAttempts: number;
  readonly reads: LatencySummary | null;
}

/** Resident bytes of the workerd processes under the service's runner (the embedded S3 endpoint's is not one). */
function workerdRss(service: Service): number {
  const stats = readProcStats();
  const runner = service.pid;
  if (runner === undefined) throw new Error("the service has no runner process");
  const tree = new Set([runner]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const stat of stats) {
      if (tree.has(stat.ppid) && !tree.has(stat.pid)) {
        tree.add(stat.pid);
        grew = true;
      }
    }
  }
  let bytes = 0;
  for (const stat of stats) {
    if (!tree.has(stat.pid) || stat.comm !== "workerd") continue;
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${stat.pid}/status`, "utf8"))?.[1];
    bytes += Number(kb ?? 0) * 1024;
  }
  return bytes;
}

/** After the fill, how long the node may take to compact and evict down to MAX_RESIDENT_STREAMS. */
export const SETTLE_TIMEOUT_MS = 2_400_000;

/** After settling, how long the bench waits for the compaction that drops evicted streams from the snapshot. */
const COMPACTION_TIMEOUT_MS = 600_000;

/** Waits for a `compaction.done` line of a compaction begun after `sinceMs` (epoch ms); whether one came in time. */
async function compactedSince(service: Service, sinceMs: number): Promise<boolean> {
  const started = performance.now();
  while (performance.now() - started < COMPACTION_TIMEOUT_MS) {
    for (const line of readFileSync(service.logFile, "utf8").split("\n")) {
      if (!line.includes('"compaction.done"')) continue;
      const ts = /"ts":"([^"]+)"/.exec(line)?.[1];
      const durationMs = Number(/"durationMs":([\d.]+)/.exec(line)?.[1] ?? Infinity);
      // Begun after `sinceMs`: its snapshot was decided once the evictions were done.
      if (ts !== undefined && Date.parse(ts) - durationMs >= sinceMs) return true;
    }
    await settle(1_000);
  }
  return false;
}

/** The streams the node holds in memory, summed over nodes (GET /metrics, `mink_open_streams`). */
async function openStreams(service: Service): Promise<number> {
  const response = await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET /metrics: ${response.status} ${text.slice(0, 200)}`);
  let sum = 0;
  for (const match of text.matchAll(/^mink_open_streams(?:\{[^}]*\})? (\d+)$/gm)) sum += Number(match[1]);
  return sum;
}

/** Polls until the node holds at most `residentCap` streams; the time it took, or null at the deadline. */
async function settleResident(service: Service, residentCap: number, log: (line: string) => void): Promise<number | null> {
  const started = performance.now();
  let lastLogged = started;
  while (performance.now() - started < SETTLE_TIMEOUT_MS) {
    const open = await openStreams(service);
    if (open <= residentCap) return performance.now() - started;
    if (performance.now() - lastLogged >= 30_000) {
      log(`${open} streams in memory, waiting for ${residentCap}`);
      lastLogged = performance.now();
    }
    await settle(1_000);
  }
  return null;
}

/** The first read after a restart waits for the node's start, which grows with the stream count. */
export const FIRST_READ_TIMEOUT_MS = 300_000;

async function request(pool: Pool, method: "PUT" | "POST" | "GET", path: string, body?: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<number> {
  const response = await pool.request({
    path,
    method,
    headers: { "content-type": "text/plain" },
    body,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text.slice(0, 200)}`);
  return response.statusCode;
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureFill(
  service: Service,
  prefix: string,
  fill: { readonly streams: number; readonly connections: number; readonly residentCap: number },
  log: (line: string) => void,
): Promise<FillFigures> {
  const { streams, connections } = fill;
  const pool = new Pool(service.baseUrl, { connections, keepAliveTimeout: 60_000, headersTimeout: REQUEST_TIMEOUT_MS });
  const path = (i: number): string => `/v1/stream/${prefix}/s-${i}`;
  try {
    await settle(2_000);
    const rssEmptyBytes = workerdRss(service);
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: connections }, async () => {
      while (next < streams) {
        const i = next++;
        await request(pool, "PUT", path(i));
        await request(pool, "POST", path(i), `stream ${i}: one append`);
        if (i > 0 && i % 10_000 === 0) log(`filled ${i} of ${streams}`);
      }
    }));
    const createsPerSecond = (streams * 1000) / (performance.now() - started);
    await settle(3_000);
    const rssFullBytes = workerdRss(service);
    log("waiting for the node to compact and evict idle streams");
    const settleMs = await settleResident(service, fill.residentCap, log);
    const settledAt = Date.now();
    log("waiting for a compaction after the evictions");
    if (!(await compactedSince(service, settledAt))) log(`no compaction within ${COMPACTION_TIMEOUT_MS / 1000} s of settling`);
    const openStreamsAtKill = await openStreams(service);
    const rssSettledBytes = workerdRss(service);
    await pool.close();
    log("SIGKILL and restart");
    await service.kill();
    const killed = performance.now();
    await service.restart(); // resolves once GET /health answers 200
    const healthy = performance.now();
    const again = new Pool(service.baseUrl, { connections: 1, keepAliveTimeout: 60_000, headersTimeout: FIRST_READ_TIMEOUT_MS });
    try {
      // A node still starting answers 503 (retry): retried as a client would, until FIRST_READ_TIMEOUT_MS.
      let attempts = 0;
      let firstRead: number | null = null;
      while (firstRead === null && performance.now() - healthy < FIRST_READ_TIMEOUT_MS) {
        attempts++;
        try {
          await request(again, "GET", `${path(0)}?offset=-1`, undefined, FIRST_READ_TIMEOUT_MS);
          firstRead = performance.now();
        } catch (error) {
          if (!String(error).includes(": 503 ")) throw error;
          await settle(500);
        }
      }
      const samplesMs: number[] = [];
      for (let i = 0; firstRead !== null && i < 200; i++) {
        const sent = performance.now();
        await request(again, "GET", `${path(Math.floor(Math.random() * streams))}?offset=-1`);
        samplesMs.push(performance.now() - sent);
      }
      return {
        streams,
        createsPerSecond,
        rssEmptyBytes,
        rssFullBytes,
        settleMs,
        openStreamsAtKill,
        rssSettledBytes,
        rssRestartedBytes: workerdRss(service),
        restartToHealthMs: healthy - killed,
        healthToFirstReadMs: firstRead === null ? null : firstRead - healthy,
        firstReadAttempts: attempts,
        reads: firstRead === null ? null : summarize(samplesMs),
      };
    } finally {
      await again.close();
    }
  } finally {
    await pool.destroy().catch(() => undefined);
  }
}
