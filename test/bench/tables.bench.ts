// Tables benchmark (docs/tables.md): what a primary-key table costs to write and read, and what a new
// leader of a big bucket costs. Two phases, each on a fresh three-node mink under the local runtime
// (test/e2e/service.ts; embedded S3 endpoint, router in redirect mode), rows of about 100 B of JSON
// (`{"id": int, "payload": string}`, the id the primary key), every upsert a new key:
//   - serving (tables-bench/serving.ts), mink's default settings: upserts per second per bucket with 500-row
//     batches, and each batch's acknowledgement time, at the leader (the bucket path with producer headers,
//     as src/client writes) and through the router (POST /v1/table/<t>/write), on tables of 1 bucket and of
//     3 (a bucket per node), a fresh table per path; then lookups of 1 and of 100 keys, one at a time;
//   - restore (tables-bench/restore.ts), FAULTS_ENABLED=1, short leases by default
//     (LEASE_TTL_MS=3000 HEARTBEAT_MS=500 COORDINATOR_TICK_MS=500, the failover bench's "short" setting:
//     with mink's 30 s lease the lease is most of the crash-to-ack time), TABLE_SNAPSHOT_BYTES=1 GiB and
//     TABLE_SNAPSHOT_INTERVAL_MS=1 h so that only the forced snapshot exists: R rows loaded into one bucket,
//     a snapshot forced (POST /admin/tables/<t>/snapshot), more rows, then the leader crashed
//     (POST /admin/faults) while a writer writes; the new leader's load from its `table.load` log line, and
//     the crash to the first acknowledgement by the new leader.
//
//   npm run bench:tables      # MINK_BENCH_TABLES_PHASES=serving,restore (which phases, in order),
//                             # MINK_BENCH_TABLES_ROWS=R (default 1000000: the restored bucket's rows),
//                             # MINK_BENCH_TABLES_BATCHES=B (default 200: timed 500-row batches per bucket and path),
//                             # MINK_BENCH_TABLES_IN_FLIGHT=N (default 1: batches in flight per bucket while serving),
//                             # MINK_BENCH_TABLES_LOAD_IN_FLIGHT=N (default 4: batches in flight while loading R rows),
//                             # MINK_BENCH_TABLES_LOOKUPS=L (default 1000 per kind),
//                             # MINK_BENCH_TABLES_SETTING=short|default (the restore phase's leases)
//
// It prints figures and asserts nothing. Progress goes to stderr, the figures to stdout.
import { availableParallelism, cpus, loadavg } from "node:os";
import { percentiles } from "../e2e/failover-clients.ts";
import { positiveInt } from "./env-knobs.ts";
import { gitCommit } from "./git-commit.ts";
import { formatMs } from "./service-bench/stats.ts";
import { runRestore, type LeaseSetting, type RestoreResult } from "./tables-bench/restore.ts";
import { runServing, type ServingResult } from "./tables-bench/serving.ts";

const BATCH_ROWS = 500;
const SETTINGS: Record<string, LeaseSetting> = {
  short: { label: "short", leaseTtlMs: 3_000, heartbeatMs: 500, coordinatorTickMs: 500 },
  default: { label: "default", leaseTtlMs: 30_000, heartbeatMs: 5_000, coordinatorTickMs: 5_000 },
};

const progress = (text: string): void => console.error(`[${new Date().toISOString().slice(11, 19)}] ${text}`);
const loads = (): string => loadavg().map((v) => v.toFixed(2)).join(" ");
const thousands = (n: number): string => Math.round(n).toLocaleString("en-US");
const seconds = (ms: number | null): string => (ms === null ? "n/a" : `${(ms / 1000).toFixed(1)} s`);

function printRows(rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  for (const r of rows) console.log(r.map((text, col) => (col === 0 ? text.padEnd(widths[col]!) : text.padStart(widths[col]!))).join("  ").trimEnd());
}

const tableLabel = (buckets: number): string => (buckets === 1 ? "1 bucket" : `${buckets} buckets (a bucket per node)`);

function reportServing(result: ServingResult, inFlight: number): void {
  console.log(`\nserving: writes, ${BATCH_ROWS}-row batches of new keys, ${inFlight} batch${inFlight === 1 ? "" : "es"} in flight per bucket, all buckets at once`);
  printRows([
    ["", "upserts/s/bucket", "upserts/s", "ack p50 ms", "ack p99 ms", "ack max ms", "batches", "retried", "background snapshots"],
    ...result.writes.map((w) => {
      const p = percentiles(w.acks.map((ack) => ack.latencyMs));
      const perSecond = (w.rows * 1000) / w.elapsedMs;
      return [`${tableLabel(w.buckets)}, ${w.path === "leader" ? "at the leader" : "through the router"}`, thousands(perSecond / w.buckets), thousands(perSecond), formatMs(p.p50), formatMs(p.p99), formatMs(p.max), `${p.n}`, w.failures.describe(),
        w.snapshotsMs.length === 0 ? "none" : `${w.snapshotsMs.length} (${w.snapshotsMs.map((ms) => `${formatMs(ms)} ms`).join(", ")})`];
    }),
  ]);
  console.log("(at the leader: POST <leaderAddr>/v1/table/<t>/bucket/<i>/write with Producer-Id/Epoch/Seq; through the router: POST /v1/table/<t>/write, each batch the keys of one bucket;");
  console.log(" background snapshots: the table's `table.snapshot` log lines during the timed batches, TABLE_SNAPSHOT_BYTES 16 MiB by default)");
  console.log(`\nserving: lookups, one at a time`);
  printRows([
    ["", "p50 ms", "p99 ms", "max ms", "n", "missing", "failed"],
    ...result.lookups.map((l) => {
      const p = percentiles(l.latenciesMs);
      return [`${tableLabel(l.buckets)}, ${l.keys} key${l.keys === 1 ? "" : "s"}, ${l.path === "leader" ? "at the leader" : "through the router"}`, formatMs(p.p50), formatMs(p.p99), formatMs(p.max), `${p.n}`, `${l.missing}`, `${l.failed}`];
    }),
  ]);
  console.log("(at the leader: keys of one bucket, POST <leaderAddr>/v1/table/<t>/bucket/<i>/lookup; through the router: POST /v1/table/<t>/lookup, keys of any bucket)");
  if (result.error !== null) console.log(`serving FAILED: ${result.error}\n  mink's last log lines:\n${result.logTail}`);
}

function reportRestore(r: RestoreResult): void {
  const { options } = r;
  const { setting } = options;
  console.log(`\nrestore: LEASE_TTL_MS ${setting.leaseTtlMs}, HEARTBEAT_MS ${setting.heartbeatMs}, COORDINATOR_TICK_MS ${setting.coordinatorTickMs} (${setting.label}), ` +
    `TABLE_SNAPSHOT_BYTES 1 GiB, TABLE_SNAPSHOT_INTERVAL_MS 1 h`);
  const loadP = percentiles(r.loadAcks.map((ack) => ack.latencyMs));
  const loadRate = r.loadMs === null ? null : (r.loadedRows * 1000) / r.loadMs;
  console.log(`  load: ${thousands(r.loadedRows)} rows into bucket ${r.bucket ?? "?"} (leader ${r.victim ?? "?"}) in ${seconds(r.loadMs)}` +
    `${loadRate === null ? "" : `, ${thousands(loadRate)} rows/s`}, ${options.loadInFlight} batches of ${BATCH_ROWS} in flight, ack p50/p99 ${formatMs(loadP.p50)}/${formatMs(loadP.p99)} ms`);
  console.log(`  snapshot (POST /admin/tables/<t>/snapshot): ${seconds(r.snapshotMs)}, ${r.snapshotRows === null ? "?" : thousands(r.snapshotRows)} rows, covered offset ${r.snapshotOffset ?? "n/a"}`);
  console.log(`  after the snapshot: ${thousands(options.afterRows)} rows, then ${thousands(r.writerRowsBeforeCrash)} by the crash writer before the crash`);
  const load = r.load;
  const replayed = load === null || r.snapshotRows === null ? null : load.rows - r.snapshotRows;
  console.log(`  crash of ${r.victim ?? "?"} at leader epoch ${r.epochBefore ?? "?"}; new leader ${r.newLeader ?? "?"} at epoch ${r.epochAfter ?? "?"}`);
  console.log(`  new leader's load (table.load): ${load === null ? "no line in the log" : `${formatMs(load.durationMs)} ms (snapshot restore + replay; the line does not split them), ` +
    `restored from offset ${load.restoredFrom ?? "none"}, replayed ${thousands(load.replayedBytes)} B${replayed === null ? "" : ` (${thousands(replayed)} records: rows after load minus rows in the snapshot)`}, ${thousands(load.rows)} rows`}`);
  const t = r.takeover;
  console.log(`  takeover of ${r.victim ?? "?"} (takeover.end): ${t === null ? "no line in the log" : `by ${t.by} in ${formatMs(t.durationMs)} ms, ${t.walObjectsReplayed} WAL objects (${thousands(t.walBytesReplayed)} B), ${t.streamsClosed} streams closed`}`);
  console.log(`  crash to the new leader in GET /v1/table/<t> (as the writer saw it): ${seconds(r.crashToViewMs)}`);
  console.log(`  crash to the first acknowledgement by the new leader: ${seconds(r.crashToFirstAckMs)}`);
  console.log(`  failed attempts retried: ${r.failures.describe()}`);
  if (r.error !== null) console.log(`  restore FAILED: ${r.error}\n  mink's last log lines:\n${r.logTail}`);
}

async function main(): Promise<void> {
  const phases = (process.env.MINK_BENCH_TABLES_PHASES ?? "serving,restore").split(",").map((s) => s.trim()).filter((s) => s !== "");
  for (const phase of phases) if (phase !== "serving" && phase !== "restore") throw new Error(`MINK_BENCH_TABLES_PHASES: unknown phase ${phase} (serving, restore)`);
  const settingName = process.env.MINK_BENCH_TABLES_SETTING ?? "short";
  const setting = SETTINGS[settingName];
  if (setting === undefined) throw new Error(`MINK_BENCH_TABLES_SETTING: unknown setting ${settingName} (short, default)`);
  const inFlight = positiveInt("MINK_BENCH_TABLES_IN_FLIGHT", 1);
  const serving = { batchRows: BATCH_ROWS, batches: positiveInt("MINK_BENCH_TABLES_BATCHES", 200), warmupBatches: 10, inFlight, lookups: positiveInt("MINK_BENCH_TABLES_LOOKUPS", 1_000) };
  const restore = { rows: positiveInt("MINK_BENCH_TABLES_ROWS", 1_000_000), batchRows: BATCH_ROWS, loadInFlight: positiveInt("MINK_BENCH_TABLES_LOAD_IN_FLIGHT", 4), afterRows: 20 * BATCH_ROWS, setting };

  console.log(`tables benchmark: ${new Date().toISOString()}, commit ${gitCommit()}, Node ${process.version}, ` +
    `${cpus()[0]?.model ?? "unknown CPU"}, ${availableParallelism()} cores, load average ${loads()}`);
  console.log(`mink: 3 nodes under the local runtime, embedded S3 endpoint (in this process), router in redirect mode; a fresh service per phase; ` +
    `rows {"id": int (primary key), "payload": string} of about 100 B, every upsert a new key; phases ${phases.join(", ")}`);
  const startedMs = Date.now();
  for (const phase of phases) {
    if (phase === "serving") reportServing(await runServing(serving, progress), inFlight);
    else reportRestore(await runRestore(restore, progress));
  }
  console.log(`\nrun time ${((Date.now() - startedMs) / 1000).toFixed(0)} s; load average at the end: ${loads()}`);
}

await main();
