// The servers the service benchmark drives ("sides"): mink, started by test/e2e/service.ts as `npm run dev`
// runs it (the local runtime, ROUTER_MODE=redirect, the embedded S3 endpoint), and the reference server
// `@durable-streams/server` in a child process. A side names the processes whose CPU counts as its own,
// the phases it runs and, for mink, its own counters.
import { startService, type Service, type ServiceOptions } from "../../e2e/service.ts";
import { readMinkMetrics, type MinkMetrics } from "./mink-metrics.ts";
import { descendantsNamed, treeOf, type ProcessPicker } from "./process-cpu.ts";
import { startReferenceServer } from "./reference-server.ts";

export type PhaseName = "latency" | "throughput" | "bandwidth" | "sse";

export interface Side {
  /** For progress lines: "mink, 3 nodes", "reference". */
  readonly name: string;
  readonly baseUrl: string;
  /** Every process of the server, for the CPU figures. */
  readonly processes: ProcessPicker;
  /** mink's counters (GET /metrics); undefined for a server without an object store. */
  readonly metrics?: () => Promise<MinkMetrics>;
  readonly phases: readonly PhaseName[];
  /** The last lines of the server's log, printed when one of its phases failed. */
  readonly logTail?: () => string;
}

export interface Started {
  readonly side: Side;
  stop(): Promise<void>;
}

/** The label of the embedded S3 endpoint's workerd in the CPU breakdown (R2's share of the work in production). */
export const S3_LABEL = "S3 workerd";

/**
 * mink's processes: the runner (scripts/serve.ts, the group leader) and its workerd, plus the embedded S3
 * endpoint's workerd, a child of this process: the one workerd that appeared here while this service started
 * and is not in the runner's tree (each mink of the benchmark has its own endpoint).
 */
function minkProcesses(service: Service, s3Candidates: ReadonlySet<number>): ProcessPicker {
  return (table) => {
    const picked = new Map<number, string>();
    const runner = service.pid;
    const tree = runner === undefined ? new Set<number>() : treeOf(table, [runner]);
    for (const pid of tree) picked.set(pid, pid === runner ? "runner node" : table.get(pid)?.comm ?? "?");
    for (const pid of s3Candidates) if (!tree.has(pid) && table.has(pid)) picked.set(pid, S3_LABEL);
    return picked;
  };
}

export async function startMink(name: string, options: ServiceOptions, phases: readonly PhaseName[]): Promise<Started> {
  const workerdsBefore = descendantsNamed(process.pid, "workerd");
  const service = await startService(options);
  const started = [...descendantsNamed(process.pid, "workerd")].filter((pid) => !workerdsBefore.has(pid));
  return {
    side: {
      name,
      baseUrl: service.baseUrl,
      processes: minkProcesses(service, new Set(started)),
      metrics: () => readMinkMetrics(service.baseUrl, service.adminToken),
      phases,
      logTail: () => `${service.logFile}:\n${service.logTail(15)}`,
    },
    stop: () => service.stop(),
  };
}

export async function startReference(longPollTimeoutMs: number, phases: readonly PhaseName[]): Promise<Started> {
  const reference = await startReferenceServer(longPollTimeoutMs);
  const processes: ProcessPicker = (table) => new Map([...treeOf(table, [reference.pid])].map((pid) => [pid, table.get(pid)?.comm ?? "?"]));
  return { side: { name: "reference", baseUrl: reference.baseUrl, processes, phases }, stop: () => reference.stop() };
}
