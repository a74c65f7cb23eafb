// What a takeover cost, from two sources:
//  - GET /metrics (admin token) before the crash and after the healed node is back: the per-node counters
//    mink_node_takeovers_total, mink_node_takeover_duration_ms_total / _max and
//    mink_node_takeover_wal_objects_total, and the log's mink_failovers_total / mink_takeovers_total. Node
//    counters are per incarnation (mink_node_epoch): a node whose epoch changed in between (the healed one)
//    started again at 0, so its whole value is the delta. WAL bytes and streams closed are read from
//    /metrics too should a family for them appear (`mink_node_takeover_wal_bytes_total`,
//    `mink_node_takeover_streams_closed_total`); today there is none.
//  - the Worker's log: the node that took over writes a `takeover.end` line (docs/observability.md) with
//    deadNode, deadEpoch, walObjects, walBytes, streamsClosed and durationMs.
import { readFileSync } from "node:fs";

const SAMPLE = /^(mink_[a-z_]+)(?:\{([^}]*)\})? (\S+)$/;

/** family -> node label ("" for the log's unlabelled samples) -> value */
export type MetricSnapshot = Map<string, Map<string, number>>;

export async function readMetrics(baseUrl: string, adminToken: string): Promise<MetricSnapshot> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status} ${text.slice(0, 200)}`);
  const snapshot: MetricSnapshot = new Map();
  for (const line of text.split("\n")) {
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const node = /node="([^"]*)"/.exec(match[2] ?? "")?.[1] ?? "";
    const family = snapshot.get(match[1]!) ?? new Map<string, number>();
    family.set(node, (family.get(node) ?? 0) + Number(match[3]));
    snapshot.set(match[1]!, family);
  }
  return snapshot;
}

export interface MetricDelta {
  takeovers: number;
  durationMsTotal: number;
  /** The largest mink_node_takeover_duration_ms_max that rose (or is new) between the readings, else null. */
  durationMsMax: number | null;
  walObjects: number;
  walBytes: number | null;
  streamsClosed: number | null;
  /** mink_failovers_total and mink_takeovers_total of the metadata log. */
  failovers: number;
  logTakeovers: number;
}

const WAL_BYTES = "mink_node_takeover_wal_bytes_total";
const STREAMS_CLOSED = "mink_node_takeover_streams_closed_total";

export function diffTakeoverMetrics(before: MetricSnapshot, after: MetricSnapshot): MetricDelta {
  const epochBefore = before.get("mink_node_epoch") ?? new Map<string, number>();
  const epochAfter = after.get("mink_node_epoch") ?? new Map<string, number>();
  const sameIncarnation = (node: string): boolean => epochBefore.has(node) && epochBefore.get(node) === epochAfter.get(node);
  const nodeDelta = (name: string): number | null => {
    const family = after.get(name);
    if (family === undefined) return null;
    let sum = 0;
    for (const [node, value] of family) sum += value - (sameIncarnation(node) ? (before.get(name)?.get(node) ?? 0) : 0);
    return sum;
  };
  let durationMsMax: number | null = null;
  for (const [node, value] of after.get("mink_node_takeover_duration_ms_max") ?? []) {
    const rose = sameIncarnation(node) ? value > (before.get("mink_node_takeover_duration_ms_max")?.get(node) ?? 0) : value > 0;
    if (rose) durationMsMax = Math.max(durationMsMax ?? 0, value);
  }
  const global = (name: string): number => (after.get(name)?.get("") ?? 0) - (before.get(name)?.get("") ?? 0);
  return {
    takeovers: nodeDelta("mink_node_takeovers_total") ?? 0,
    durationMsTotal: nodeDelta("mink_node_takeover_duration_ms_total") ?? 0,
    durationMsMax,
    walObjects: nodeDelta("mink_node_takeover_wal_objects_total") ?? 0,
    walBytes: nodeDelta(WAL_BYTES),
    streamsClosed: nodeDelta(STREAMS_CLOSED),
    failovers: global("mink_failovers_total"),
    logTakeovers: global("mink_takeovers_total"),
  };
}

export interface LoggedTakeover {
  by: string;
  nodeId: string;
  nodeEpoch: number;
  walObjectsReplayed: number;
  walBytesReplayed: number;
  streamsClosed: number;
  durationMs: number;
}

interface TakeoverEndLine {
  event: string;
  node: string;
  deadNode: string;
  deadEpoch: number;
  walObjects: number;
  walBytes: number;
  streamsClosed: number;
  durationMs: number;
}

/** The takeover reports of incarnation `dead`@`epoch` in the Worker's log (empty if none). */
export function loggedTakeovers(logFile: string, dead: string, epoch: number): LoggedTakeover[] {
  let text: string;
  try {
    text = readFileSync(logFile, "utf8");
  } catch {
    return [];
  }
  const reports: LoggedTakeover[] = [];
  for (const line of text.split("\n")) {
    const start = line.indexOf("{");
    if (start < 0 || !line.includes('"takeover.end"')) continue;
    let report: TakeoverEndLine;
    try {
      report = JSON.parse(line.slice(start)) as TakeoverEndLine;
    } catch {
      continue; // a line cut by the log's buffering: not a report
    }
    if (report.event !== "takeover.end" || report.deadNode !== dead || report.deadEpoch !== epoch) continue;
    reports.push({
      by: report.node,
      nodeId: report.deadNode,
      nodeEpoch: report.deadEpoch,
      walObjectsReplayed: report.walObjects,
      walBytesReplayed: report.walBytes,
      streamsClosed: report.streamsClosed,
      durationMs: report.durationMs,
    });
  }
  return reports;
}
