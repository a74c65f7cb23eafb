// One phase of the service benchmark for one server, measured once; service.bench.ts runs each several
// times, interleaved with the other servers, and prints the medians:
//   latency     sequential 100 B appends to one stream at one keep-alive connection, p50/p99;
//   throughput  appends/s by N connections over N streams for a fixed time (100 B), their latency, the CPU
//               every process of the server used meanwhile per append, and mink's object-store PUTs;
//   bandwidth   MB/s by M connections over M streams appending 64 KiB each, latency, CPU per MB;
//   sse         delivery latency from an append's send to its receipt by each of R SSE readers.
// CPU is utime + stime over each server's process tree (process-cpu.ts) just before and just after the
// timed part; object-store requests come from mink's own counters (GET /metrics).
import { measureAppendLatency, measureAppendThroughput, type ThroughputResult } from "./append-phases.ts";
import { diffMetrics, type MinkMetrics } from "./mink-metrics.ts";
import { cpuSnapshot, cpuUsed, type CpuSnapshot, type CpuUsage, type ProcessPicker } from "./process-cpu.ts";
import { S3_LABEL, type PhaseName, type Side } from "./sides.ts";
import { measureSseFanOut } from "./sse-fan-out.ts";
import { ErrorTally, errorText } from "./stats.ts";

export interface PhaseParams {
  latencyAppends: number;
  connections: number;
  durationMs: number;
  bandwidthConnections: number;
  readers: number;
  sseAppends: number;
  sseIntervalMs: number;
}

export const APPEND_BYTES = 100;
const BANDWIDTH_APPEND_BYTES = 64 * 1024;

/** Every figure a phase can measure; a phase fills its own. */
export interface Figures {
  latencyP50?: number;
  latencyP99?: number;
  putsPer1000At1?: number;
  appendsPerSecond?: number;
  loadP50?: number;
  loadP99?: number;
  cpuMsPerAppend?: number;
  s3CpuMsPerAppend?: number;
  clientCpuMsPerAppend?: number;
  putsPer1000AtN?: number;
  mbPerSecond?: number;
  bandwidthP50?: number;
  bandwidthP99?: number;
  cpuMsPerMb?: number;
  sseP50?: number;
  sseP99?: number;
  sseReady?: number;
  sseComplete?: number;
}

/** One run of one phase: its figures and the requests that failed in it. */
interface Measured {
  readonly figures: Figures;
  readonly errors: ErrorTally;
}

/** A phase's outcome: what it measured, or the text of the error that ended it. */
export type Outcome = Measured | string;

/** This process: the client (undici pools), and the Node host of each embedded S3 endpoint. */
const clientProcess: ProcessPicker = () => new Map([[process.pid, "benchmark client"]]);

export async function runPhase(side: Side, phase: PhaseName, params: PhaseParams, prefix: string): Promise<Outcome> {
  try {
    switch (phase) {
      case "latency":
        return await latency(side, params, prefix);
      case "throughput":
        return await load(side, prefix, phase, { connections: params.connections, durationMs: params.durationMs, sizeBytes: APPEND_BYTES });
      case "bandwidth":
        return await load(side, prefix, phase, { connections: params.bandwidthConnections, durationMs: params.durationMs, sizeBytes: BANDWIDTH_APPEND_BYTES });
      case "sse":
        return await fanOut(side, params, prefix);
    }
  } catch (error) {
    return errorText(error);
  }
}

/** Object-store PUTs per 1,000 acknowledged appends since `before`; undefined without counters or after a restart. */
async function putsPer1000(side: Side, before: MinkMetrics | undefined, acknowledged: number): Promise<number | undefined> {
  if (side.metrics === undefined || before === undefined || acknowledged === 0) return undefined;
  const diff = diffMetrics(await side.metrics(), before);
  return typeof diff === "string" ? undefined : (diff.store.put * 1000) / acknowledged;
}

async function latency(side: Side, params: PhaseParams, prefix: string): Promise<Measured> {
  let before: MinkMetrics | undefined;
  const result = await measureAppendLatency(side.baseUrl, prefix, { appends: params.latencyAppends, sizeBytes: APPEND_BYTES, maxMs: 120_000 }, async () => {
    before = await side.metrics?.();
  });
  return {
    figures: { latencyP50: result.latency.p50Ms, latencyP99: result.latency.p99Ms, putsPer1000At1: await putsPer1000(side, before, result.acknowledged) },
    errors: result.errors,
  };
}

/** CPU seconds per unit of work over a phase: total, the S3 endpoint's part, the client's. */
function cpuPer(used: CpuUsage, client: CpuUsage, units: number): { all: number; s3: number; client: number } {
  const s3 = used.processes.filter((p) => p.label === S3_LABEL).reduce((sum, p) => sum + p.seconds, 0);
  return { all: used.seconds / units, s3: s3 / units, client: client.seconds / units };
}

async function load(
  side: Side,
  prefix: string,
  kind: "throughput" | "bandwidth",
  options: { connections: number; durationMs: number; sizeBytes: number },
): Promise<Measured> {
  let before: MinkMetrics | undefined;
  let cpuBefore: CpuSnapshot | undefined;
  let clientBefore: CpuSnapshot | undefined;
  const result: ThroughputResult = await measureAppendThroughput(side.baseUrl, prefix, options, async () => {
    before = await side.metrics?.(); // first: reading /metrics costs mink CPU too
    cpuBefore = cpuSnapshot(side.processes);
    clientBefore = cpuSnapshot(clientProcess);
  });
  const used = cpuUsed(cpuBefore!, cpuSnapshot(side.processes));
  const client = cpuUsed(clientBefore!, cpuSnapshot(clientProcess));
  const acknowledged = result.acknowledged;
  if (kind === "throughput") {
    const perAppend = acknowledged === 0 ? undefined : cpuPer(used, client, acknowledged);
    return {
      figures: {
        appendsPerSecond: result.appendsPerSecond,
        loadP50: result.latency.p50Ms,
        loadP99: result.latency.p99Ms,
        cpuMsPerAppend: perAppend && perAppend.all * 1000,
        s3CpuMsPerAppend: perAppend && perAppend.s3 * 1000,
        clientCpuMsPerAppend: perAppend && perAppend.client * 1000,
        putsPer1000AtN: await putsPer1000(side, before, acknowledged),
      },
      errors: result.errors,
    };
  }
  const megabytes = (acknowledged * options.sizeBytes) / 1e6;
  return {
    figures: {
      mbPerSecond: megabytes / (result.elapsedMs / 1000),
      bandwidthP50: result.latency.p50Ms,
      bandwidthP99: result.latency.p99Ms,
      cpuMsPerMb: acknowledged === 0 ? undefined : cpuPer(used, client, megabytes).all * 1000,
    },
    errors: result.errors,
  };
}

async function fanOut(side: Side, params: PhaseParams, prefix: string): Promise<Measured> {
  const result = await measureSseFanOut(side.baseUrl, prefix, {
    readers: params.readers,
    appends: params.sseAppends,
    intervalMs: params.sseIntervalMs,
    sizeBytes: APPEND_BYTES,
    openTimeoutMs: 60_000,
    drainTimeoutMs: 15_000,
  });
  const errors = new ErrorTally();
  errors.addAll(result.readerErrors);
  errors.addAll(result.appendErrors);
  const missing = result.readersRequested - result.readersComplete;
  if (missing > 0) errors.add(`${missing} of ${result.readersRequested} readers did not get every acknowledged append (${result.delivered} of ${result.expected} deliveries)`);
  return {
    figures: { sseP50: result.latency.p50Ms, sseP99: result.latency.p99Ms, sseReady: result.readersReady, sseComplete: result.readersComplete },
    errors,
  };
}
