// Transfer benchmark (docs/transfers.md): the unavailability window of a transfer, for a stream moved back and forth
// between two nodes of a three-node mink (under the local runtime, scripts/local-runtime.ts, as started by
// test/e2e/service.ts; embedded S3 endpoint),
// as a client going through the router sees it (following 307s, retrying 409/503 after 10 ms):
//   - quiet stream: t0 just before POST /admin/transfers, then one append at once; the window is t0 to that
//     append's acknowledgement. Also t0 to the admin API showing the stream opened by the target.
//   - busy stream: 8 appenders (idempotent producers, 64 B bodies) never stop; the window is the longest gap
//     between consecutive acknowledgements from t0 until 1 s after the target opened the stream. Baseline:
//     the gaps between acknowledgements with no transfer running. At the end the stream is read back and
//     compared with the acknowledged appends.
//
//   npx tsx test/bench/transfer.bench.ts        # MINK_BENCH_TRANSFERS=100 (per stream), MINK_BENCH_S3=embedded|external,
//                                               # MINK_BENCH_VERBOSE=1: a line per busy transfer
//
// It prints figures and asserts nothing. The Worker is bundled once at the start; later source edits do not
// touch the running service.
import { availableParallelism, cpus, loadavg } from "node:os";
import { startService, type Service } from "../e2e/service.ts";
import { errorText, formatMs, summarize } from "./service-bench/stats.ts";
import { Client, RETRY_PAUSE_MS } from "./transfer-bench/client.ts";
import { busyStream, quietStream, type BusyResult, type QuietResult } from "./transfer-bench/phases.ts";
import { gitCommit } from "./git-commit.ts";

const NODES = 3;
const TRANSFERS = Number.parseInt(process.env.MINK_BENCH_TRANSFERS ?? "100", 10);
const S3_KIND = process.env.MINK_BENCH_S3 === "external" ? "external" : "embedded";
const BUSY = { writers: 8, bodyBytes: 64, baselineMs: 3_000, afterOpenedMs: 1_000 };


const progress = (text: string): void => console.error(`[${new Date().toISOString().slice(11, 19)}] ${text}`);

function row(label: string, samples: readonly number[]): string[] {
  if (samples.length === 0) return [label, "-", "-", "-", "0"];
  const s = summarize(samples);
  return [label, formatMs(s.p50Ms), formatMs(s.p99Ms), formatMs(s.maxMs), String(s.count)];
}

function printRows(rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  for (const r of rows) console.log(r.map((text, col) => (col === 0 ? text.padEnd(widths[col]!) : text.padStart(widths[col]!))).join("  ").trimEnd());
}

function report(quiet: QuietResult | string, busy: BusyResult | string, quietClient: Client, busyClient: Client): void {
  const rows: string[][] = [["", "p50 ms", "p99 ms", "max ms", "n"]];
  if (typeof quiet === "string") rows.push(["quiet: FAILED (below)", "-", "-", "-", "-"]);
  else {
    rows.push(row("quiet: t0 to the append's acknowledgement (window)", quiet.windowsMs));
    rows.push(row("quiet: t0 to opened on the target (admin API)", quiet.openedMs));
  }
  if (typeof busy === "string") rows.push(["busy: FAILED (below)", "-", "-", "-", "-"]);
  else {
    rows.push(row(`busy: longest ack gap, t0 to opened + ${BUSY.afterOpenedMs / 1000} s (window)`, busy.windowsMs));
    rows.push(row("busy: t0 to opened on the target (admin API)", busy.openedMs));
    rows.push(row(`busy baseline: gap between acks, no transfer (${BUSY.baselineMs / 1000} s)`, busy.baseline.gapsMs));
  }
  console.log();
  printRows(rows);
  console.log();
  if (typeof quiet === "string") console.log(`quiet stream failed: ${quiet}`);
  else console.log(`quiet stream content held: ${quiet.contentHeld}`);
  if (typeof busy === "string") console.log(`busy stream failed: ${busy}`);
  else {
    console.log(`busy stream: ${busy.writers} writers x ${BUSY.bodyBytes} B; baseline ${(busy.baseline.acks / (busy.baseline.durationMs / 1000)).toFixed(0)} appends/s; ` +
      `${busy.acknowledged} appends acknowledged in all`);
    console.log(`busy stream content held: ${busy.contentHeld}`);
    if (busy.writerErrors.length > 0) console.log(`busy writer errors: ${busy.writerErrors.join("; ")}`);
  }
  console.log(`what clients met before their answers (redirects followed, statuses retried): quiet: ${quietClient.detours.describe()}`);
  console.log(`                                                                       busy: ${busyClient.detours.describe()}`);
}

async function main(): Promise<void> {
  if (!Number.isInteger(TRANSFERS) || TRANSFERS < 1) throw new Error(`MINK_BENCH_TRANSFERS: not a positive integer: ${process.env.MINK_BENCH_TRANSFERS}`);
  const cpuModel = cpus()[0]?.model ?? "unknown CPU";
  console.log(`transfer benchmark: ${new Date().toISOString()}, commit ${gitCommit()}, Node ${process.version}, ` +
    `${cpuModel}, ${availableParallelism()} cores, load average ${loadavg().map((v) => v.toFixed(2)).join(" ")}`);
  console.log(`mink: ${NODES} nodes under the local runtime, ${S3_KIND === "embedded" ? "embedded S3 endpoint (in this process)" : `external S3 ${process.env.MINK_TEST_S3_ENDPOINT}`}, ` +
    `router in redirect mode; ${TRANSFERS} transfers per stream between two nodes; clients retry 409/503 after ${RETRY_PAUSE_MS} ms`);

  let service: Service | undefined;
  const clients: Client[] = [];
  try {
    progress("starting mink (local runtime)");
    service = await startService({ nodes: NODES, s3: S3_KIND });
    const runId = Date.now().toString(36);
    const quietClient = new Client(service.baseUrl, service.adminToken, 4);
    const busyClient = new Client(service.baseUrl, service.adminToken, BUSY.writers + 4);
    clients.push(quietClient, busyClient);

    progress("quiet stream");
    let quiet: QuietResult | string;
    try {
      quiet = await quietStream(quietClient, `bench-transfer/quiet-${runId}`, TRANSFERS, progress);
    } catch (error) {
      quiet = errorText(error);
    }
    progress("busy stream");
    let busy: BusyResult | string;
    try {
      busy = await busyStream(busyClient, `bench-transfer/busy-${runId}`, { ...BUSY, transfers: TRANSFERS, verbose: process.env.MINK_BENCH_VERBOSE === "1" }, progress);
    } catch (error) {
      busy = errorText(error);
    }

    report(quiet, busy, quietClient, busyClient);
    console.log(`load average at the end: ${loadavg().map((v) => v.toFixed(2)).join(" ")}`);
    if (typeof quiet === "string" || typeof busy === "string") console.log(`\nmink's last log lines:\n${service.logTail(20)}`);
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    await service?.stop().catch((error: unknown) => console.error(`stopping mink: ${errorText(error)}`));
  }
}

await main();
