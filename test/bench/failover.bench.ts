// Failover benchmark (docs/failover.md): how long the streams of a crashed node are
// unavailable to their writers, and what the takeover costs. Two settings, each on a fresh three-node mink
// under the local runtime (test/e2e/service.ts; embedded S3 endpoint, router in redirect mode) with
// FAULTS_ENABLED=1:
//   - short:   LEASE_TTL_MS=3000  HEARTBEAT_MS=500  COORDINATOR_TICK_MS=500 (the failover e2e tests' setting);
//   - default: LEASE_TTL_MS=30000 HEARTBEAT_MS=5000 COORDINATOR_TICK_MS=5000 (mink's defaults).
// Each round (failover-bench/rounds.ts) creates S new streams, runs an idempotent writer on each
// (test/e2e/failover-clients.ts: through the router, following 307s, the same Producer-Seq retried 50 ms
// after any failure), crashes a non-coordinator node owning some of them (POST /admin/faults) and times, per
// moved stream, the crash to its first acknowledgement by a new owner; then heals the node. The takeover's
// cost comes from /metrics deltas and the takeover report in the Worker's log (failover-bench/takeover-cost.ts).
// At the end every stream is read back and checked against its writer: a mismatch is printed, not asserted.
//
//   npm run bench:failover      # MINK_BENCH_FAILOVER_ROUNDS=R (default 3 short, 1 default),
//                               # MINK_BENCH_FAILOVER_STREAMS=S (default 30),
//                               # MINK_BENCH_FAILOVER_SETTINGS=short,default (which settings, in order)
//
// It prints figures and asserts nothing. Progress goes to stderr, the figures to stdout.
import { availableParallelism, cpus, loadavg } from "node:os";
import { percentiles } from "../e2e/failover-clients.ts";
import { runSetting, type RoundResult, type Setting, type SettingResult } from "./failover-bench/rounds.ts";
import { formatMs } from "./service-bench/stats.ts";
import { positiveInt } from "./env-knobs.ts";
import { gitCommit } from "./git-commit.ts";

const STREAMS = positiveInt("MINK_BENCH_FAILOVER_STREAMS", 30);
const SETTINGS: Record<string, Setting> = {
  short: { label: "short", leaseTtlMs: 3_000, heartbeatMs: 500, coordinatorTickMs: 500, rounds: positiveInt("MINK_BENCH_FAILOVER_ROUNDS", 3), streams: STREAMS },
  default: { label: "default", leaseTtlMs: 30_000, heartbeatMs: 5_000, coordinatorTickMs: 5_000, rounds: positiveInt("MINK_BENCH_FAILOVER_ROUNDS", 1), streams: STREAMS },
};

const progress = (text: string): void => console.error(`[${new Date().toISOString().slice(11, 19)}] ${text}`);
const loads = (): string => loadavg().map((v) => v.toFixed(2)).join(" ");

function settingTitle(s: Setting): string {
  return `${s.label}${s.label === "default" ? " (mink's defaults)" : ""}: LEASE_TTL_MS ${s.leaseTtlMs}, HEARTBEAT_MS ${s.heartbeatMs}, COORDINATOR_TICK_MS ${s.coordinatorTickMs}`;
}

/** Values per round as one cell: "12" when they agree, else "10, 12, 9". */
function perRound(values: readonly (number | null)[], format: (v: number) => string = String): string {
  if (values.length === 0) return "-";
  if (values.some((v) => v === null)) return values.every((v) => v === null) ? "n/a" : values.map((v) => (v === null ? "n/a" : format(v))).join(", ");
  const texts = values.map((v) => format(v!));
  return texts.every((t) => t === texts[0]) ? texts[0]! : texts.join(", ");
}

/** Per takeover of a round: from /metrics when it has the figure, else from the logged report, else null. */
function perTakeover(round: RoundResult, fromMetrics: (m: Exclude<RoundResult["metrics"], string>) => number | null, fromLog: (sum: (key: "walObjectsReplayed" | "walBytesReplayed" | "streamsClosed" | "durationMs") => number) => number): number | null {
  const m = typeof round.metrics === "string" ? null : round.metrics;
  const value = m === null ? null : fromMetrics(m);
  if (value !== null && m !== null && m.takeovers > 0) return value / m.takeovers;
  if (round.logged.length === 0) return null;
  return fromLog((key) => round.logged.reduce((sum, report) => sum + report[key], 0)) / round.logged.length;
}

const walObjects = (r: RoundResult) => perTakeover(r, (m) => m.walObjects, (sum) => sum("walObjectsReplayed"));
const walBytes = (r: RoundResult) => perTakeover(r, (m) => m.walBytes, (sum) => sum("walBytesReplayed"));
const streamsClosed = (r: RoundResult) => perTakeover(r, (m) => m.streamsClosed, (sum) => sum("streamsClosed"));
/** The longest takeover of the round: exact when one takeover ran (its duration_ms_total delta), else the _max gauge, else the log. */
function takeoverMsMax(r: RoundResult): number | null {
  const logged = r.logged.length === 0 ? null : Math.max(...r.logged.map((report) => report.durationMs));
  if (typeof r.metrics === "string") return logged;
  if (r.metrics.takeovers === 1) return r.metrics.durationMsTotal;
  return r.metrics.durationMsMax ?? logged;
}

function printRows(rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  for (const r of rows) console.log(r.map((text, col) => (col === 0 ? text.padEnd(widths[col]!) : text.padStart(widths[col]!))).join("  ").trimEnd());
}

function tableRow(result: SettingResult): string[] {
  const { setting, rounds } = result;
  const label = `${setting.label} (${setting.leaseTtlMs / 1000} s lease, ${setting.coordinatorTickMs / 1000} s tick)${result.error === null ? "" : " FAILED"}`;
  const delays = rounds.flatMap((r) => r.delaysMs);
  const p = percentiles(delays);
  const fmt = (ms: number): string => (delays.length === 0 ? "-" : formatMs(ms));
  const maxTakeover = rounds.map(takeoverMsMax).filter((v): v is number => v !== null);
  return [
    label,
    `${rounds.length}`,
    fmt(p.p50),
    fmt(p.p99),
    fmt(p.max),
    `${delays.length}`,
    maxTakeover.length === 0 ? "n/a" : formatMs(Math.max(...maxTakeover)),
    perRound(rounds.map(walObjects), (v) => v.toFixed(0)),
    perRound(rounds.map(walBytes), (v) => v.toFixed(0)),
    perRound(rounds.map(streamsClosed), (v) => v.toFixed(0)),
    rounds.length === 0 ? "-" : `${perRound(rounds.map((r) => r.moved))} of ${setting.streams}`,
  ];
}

const counts = (map: ReadonlyMap<string, number>): string => [...map].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v}`).join(", ");

function roundLine(setting: Setting, r: RoundResult, index: number): string {
  const p = percentiles(r.delaysMs);
  const m = r.metrics;
  const metricText = typeof m === "string"
    ? `/metrics failed: ${m}`
    : `/metrics deltas: ${m.takeovers} takeover(s) (log: ${m.failovers} failover(s), ${m.logTakeovers} takeover(s)), ${m.durationMsTotal} ms in all (max gauge ${m.durationMsMax ?? "unchanged"}), ` +
      `${m.walObjects} WAL objects, WAL bytes ${m.walBytes ?? "n/a"}, streams closed ${m.streamsClosed ?? "n/a"}`;
  const logText = r.logged.length === 0
    ? "no takeover report in the Worker's log"
    : r.logged.map((t) => `log: ${t.by} took over ${t.nodeId}@${t.nodeEpoch} in ${t.durationMs} ms, ${t.walObjectsReplayed} WAL objects (${t.walBytesReplayed} B), ${t.streamsClosed} streams closed`).join("; ");
  return `  ${setting.label} round ${index + 1}: ${r.victim} crashed owning ${r.moved} of ${setting.streams} (placement: ${counts(r.spread)}); new owners ${counts(r.newOwners)}; ` +
    `crash to first ack p50 ${formatMs(p.p50)} / max ${formatMs(p.max)} ms; ${r.victim} live again after ${r.backAfterMs} ms\n    ${metricText}\n    ${logText}`;
}

function report(results: readonly SettingResult[]): void {
  console.log();
  printRows([
    ["", "rounds", "p50 ms", "p99 ms", "max ms", "n", "takeover ms max", "WAL objects/takeover", "WAL bytes/takeover", "streams closed/takeover", "streams moved/round"],
    ...results.map(tableRow),
  ]);
  console.log("(p50 / p99 / max: crash to the first acknowledgement by a new owner, over every moved stream of every round; per-round cells list each round)");
  const rounds = results.flatMap((result) => result.rounds);
  const fromLog = (pick: (m: Exclude<RoundResult["metrics"], string>) => number | null): boolean =>
    rounds.some((r) => (typeof r.metrics === "string" || pick(r.metrics) === null) && r.logged.length > 0);
  const logged = [...(fromLog((m) => m.walBytes) ? ["WAL bytes"] : []), ...(fromLog((m) => m.streamsClosed) ? ["streams closed"] : [])];
  if (logged.length > 0) console.log(`(${logged.join(" and ")}: from the takeover report in the Worker's log; /metrics has no family for them)`);
  console.log();
  for (const result of results) {
    console.log(settingTitle(result.setting));
    result.rounds.forEach((r, i) => console.log(roundLine(result.setting, r, i)));
    console.log(`  read back: ${result.streamsChecked} streams, ${result.acknowledged} acknowledged appends, ${result.mismatches.length} mismatch(es)` +
      `${result.mismatches.length === 0 ? "" : `: ${result.mismatches.slice(0, 5).join("; ")}`}`);
    console.log(`  writer attempts failed and retried: ${result.writerFailures.size === 0 ? "none" : counts(result.writerFailures)}`);
    if (result.error !== null) console.log(`  FAILED: ${result.error}\n  mink's last log lines:\n${result.logTail}`);
    else if (result.mismatches.length > 0) console.log(`  mink's last log lines:\n${result.logTail}`);
  }
}

async function main(): Promise<void> {
  const names = (process.env.MINK_BENCH_FAILOVER_SETTINGS ?? "short,default").split(",").map((s) => s.trim()).filter((s) => s !== "");
  const settings = names.map((name) => {
    const setting = SETTINGS[name];
    if (setting === undefined) throw new Error(`MINK_BENCH_FAILOVER_SETTINGS: unknown setting ${name} (short, default)`);
    return setting;
  });
  console.log(`failover benchmark: ${new Date().toISOString()}, commit ${gitCommit()}, Node ${process.version}, ` +
    `${cpus()[0]?.model ?? "unknown CPU"}, ${availableParallelism()} cores, load average ${loads()}`);
  console.log(`mink: 3 nodes under the local runtime, embedded S3 endpoint (in this process), router in redirect mode, FAULTS_ENABLED=1; ` +
    `a fresh service per setting; ${STREAMS} new streams per round, an idempotent writer on each (retry after 50 ms); ` +
    `crash: POST /admin/faults {"mode":"crash"} on a non-coordinator node owning streams, healed after every moved stream was acknowledged`);
  const startedMs = Date.now();
  const results: SettingResult[] = [];
  for (const setting of settings) results.push(await runSetting(setting, progress));
  report(results);
  console.log(`\nrun time ${((Date.now() - startedMs) / 1000).toFixed(0)} s; load average at the end: ${loads()}`);
}

await main();
