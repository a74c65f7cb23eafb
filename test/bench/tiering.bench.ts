// Tiering benchmark (docs/tiering.md, docs/benchmarks.md "Tiering"): rows per second tiered and the size of
// the Parquet written per 1,000,000 rows, for a log table and a primary-key table (every row a new key, so
// a primary-key round also writes one equality delete per row). Two phases, interleaved run by run:
//   - writer (tiering-bench/writer.ts): the tiering code alone, in Node over the in-memory store;
//   - service (tiering-bench/service.ts): three nodes under the local runtime, rows written through the
//     router, then POST /admin/tables/<t>/tier until nothing is new.
// Medians of --runs with their range. It prints figures and asserts nothing.
//
//   npm run bench:tiering -- [--runs 3] [--rows 1000000] [--service-rows 200000] [--phases writer,service]
import { availableParallelism, cpus } from "node:os";
import { parseArgs } from "node:util";
import { gitCommit } from "./git-commit.ts";
import { median } from "./service-bench/medians.ts";
import { runService, type ServiceResult } from "./tiering-bench/service.ts";
import { runWriter, type TableKind, type WriterResult } from "./tiering-bench/writer.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    rows: { type: "string", default: "1000000" },
    "service-rows": { type: "string", default: "200000" },
    phases: { type: "string", default: "writer,service" },
  },
});
const runs = Number(values.runs);
const rows = Number(values.rows);
const serviceRows = Number(values["service-rows"]);
const phases = new Set(values.phases.split(","));
const KINDS: readonly TableKind[] = ["log", "primary-key"];
const MAX_ROUND_BYTES = 16 * 1024 * 1024;

const progress = (text: string): void => console.error(`[${new Date().toISOString().slice(11, 19)}] ${text}`);
const cell = (xs: readonly number[], format: (x: number) => string): string => (xs.length === 0 ? "-" : `${format(median(xs))} (${format(Math.min(...xs))}-${format(Math.max(...xs))})`);
const thousands = (x: number): string => Math.round(x).toLocaleString("en-US");
const mib = (x: number): string => (x / 1024 / 1024).toFixed(1);

async function main(): Promise<void> {
  const writer = new Map<TableKind, WriterResult[]>(KINDS.map((kind) => [kind, []]));
  const service = new Map<TableKind, ServiceResult[]>(KINDS.map((kind) => [kind, []]));
  for (let run = 0; run < runs; run++) {
    const kinds = run % 2 === 0 ? KINDS : [...KINDS].reverse();
    for (const kind of kinds) {
      if (phases.has("writer")) {
        progress(`run ${run + 1}/${runs}: writer, ${kind} table, ${thousands(rows)} rows`);
        writer.get(kind)!.push(await runWriter(kind, rows, MAX_ROUND_BYTES));
      }
      if (phases.has("service")) {
        progress(`run ${run + 1}/${runs}: service, ${kind} table, ${thousands(serviceRows)} rows`);
        service.get(kind)!.push(await runService(kind, serviceRows));
      }
    }
  }
  console.log(`tiering, commit ${gitCommit()}, ${availableParallelism()} cores (${cpus()[0]?.model ?? "?"}); median (range) of ${runs} runs`);
  console.log("| table | writer alone: rows/s | Parquet per 1,000,000 rows: data, equality deletes (MiB) | three nodes, through the service: rows/s |");
  console.log("| --- | --- | --- | --- |");
  for (const kind of KINDS) {
    const w = writer.get(kind)!;
    const s = service.get(kind)!;
    const perMillion = (bytes: (r: WriterResult) => number) => w.map((r) => (bytes(r) * 1_000_000) / r.rows);
    console.log(
      `| ${kind} | ${cell(w.map((r) => r.rows / r.seconds), thousands)} | ${cell(perMillion((r) => r.parquetBytes), mib)}, ${cell(perMillion((r) => r.deleteBytes), mib)} | ${cell(s.map((r) => r.rows / r.seconds), thousands)} |`,
    );
  }
  console.log(`(writer: ${thousands(rows)} rows in rounds of at most ${mib(MAX_ROUND_BYTES)} MiB (TIERING_MAX_ROUND_BYTES), 4 buckets; service: ${thousands(serviceRows)} rows, 4 buckets over 3 nodes)`);
}

await main();
