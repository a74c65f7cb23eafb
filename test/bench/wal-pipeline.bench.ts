// The WAL writer alone at R2's latency: appends/s, latency and PUTs per append with 1, 4, 8 and 16 objects
// in flight (WAL_MAX_IN_FLIGHT), against the embedded S3 endpoint with --latency-ms added to every request.
// Two kinds of load: closed loops (each connection sends its next append once the last is acknowledged:
// they fall into step, and one object per round trip carries them all), and an open loop (--rate appends
// per second, spread evenly, whatever the answers: an append that arrives just after a PUT left waits
// for a free slot, which is what several in flight shorten).
// What the writer can carry when the node's CPU is not the limit (in `npm run dev` on this 2-core machine
// it is: docs/benchmarks.md, "Service"). The settings run interleaved, --runs times; each figure is the
// median of the runs with its range, never the best run.
//
//   npx tsx test/bench/wal-pipeline.bench.ts [--runs 3] [--latency-ms 30] [--seconds 5] [--in-flight 1,4,8,16]
//
// It prints figures; it asserts nothing.
import { parseArgs } from "node:util";
import { startEmbeddedS3 } from "../../scripts/embedded-s3.ts";
import { S3Store } from "../../src/storage/s3-store.ts";
import type { WalRecord } from "../../src/storage/record-codec.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { median } from "./service-bench/medians.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    "latency-ms": { type: "string", default: "30" },
    seconds: { type: "string", default: "5" },
    "in-flight": { type: "string", default: "1,4,8,16" },
    rate: { type: "string", default: "1500" },
  },
});
const runs = Number(values.runs);
const latencyMs = Number(values["latency-ms"]);
const phaseMs = Number(values.seconds) * 1000;
const inFlights = values["in-flight"].split(",").map(Number);
const openRate = Number(values.rate);

interface Phase {
  readonly appendsPerSecond: number;
  readonly megabytesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly putsPerThousand: number;
}

const PHASES = [
  { name: "64 connections x 100 B", connections: 64, bytes: 100 },
  { name: "16 connections x 64 KiB", connections: 16, bytes: 64 * 1024 },
  { name: `open loop, ${openRate} appends/s x 100 B`, connections: 0, bytes: 100 },
] as const;

/** Appends at `openRate` per second, spread evenly (a tick of 2 ms), for `phaseMs`, each timed to its ack. */
async function openLoop(writer: WalWriter, data: Uint8Array, latencies: number[]): Promise<void> {
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let sent = 0, tick = 0; performance.now() < started + phaseMs; tick++) {
    const due = Math.floor(((performance.now() - started) / 1000) * openRate);
    for (; sent < due; sent++) {
      const record: WalRecord = { streamId: `s${sent % 64}`, streamEpoch: 1, firstOffset: sent * data.byteLength, flags: 0, meta: new Uint8Array(0), data };
      const at = performance.now();
      pending.push(writer.append([record]).then(() => void latencies.push(performance.now() - at)));
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all(pending);
}

const at = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** `connections` appenders, each appending and awaiting its acknowledgement, for `phaseMs`. */
async function phase(store: S3Store, maxInFlight: number, connections: number, bytes: number, label: string): Promise<Phase> {
  const writer = new WalWriter(store, `bench-${label}-${Date.now().toString(36)}`, 1, 0, { maxInFlight, batchDeadlineMs: 10_000 });
  const data = new Uint8Array(bytes).fill(7);
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + phaseMs;
  if (connections === 0) await openLoop(writer, data, latencies);
  else await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const record: WalRecord = { streamId: `s${c}`, streamEpoch: 1, firstOffset: i * bytes, flags: 0, meta: new Uint8Array(0), data };
        const sent = performance.now();
        await writer.append([record]);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    appendsPerSecond: latencies.length / seconds,
    megabytesPerSecond: (latencies.length * bytes) / seconds / 1e6,
    p50Ms: at(sorted, 0.5),
    p99Ms: at(sorted, 0.99),
    putsPerThousand: (1000 * writer.stats.objectsWritten) / latencies.length,
  };
}

const cell = (xs: readonly number[], digits: number): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

async function main(): Promise<void> {
  const embedded = await startEmbeddedS3({ port: 0, latencyMs });
  try {
    const store = new S3Store({ ...embedded, endpoint: embedded.url, region: "auto" });
    const results = new Map<string, Phase[]>();
    for (let run = 0; run < runs; run++) {
      // Interleaved: each setting runs once per run, the order turning with the run.
      const order = inFlights.map((_, i) => inFlights[(i + run) % inFlights.length]!);
      for (const { name, connections, bytes } of PHASES) {
        for (const maxInFlight of order) {
          const key = `${name}|${maxInFlight}`;
          results.set(key, [...(results.get(key) ?? []), await phase(store, maxInFlight, connections, bytes, `${run}-${maxInFlight}`)]);
        }
      }
    }
    console.log(`WAL writer alone, ${latencyMs} ms per S3 request, median (min–max) of ${runs} interleaved runs of ${phaseMs / 1000} s:`);
    for (const { name, bytes } of PHASES) {
      console.log(`\n${name}`);
      console.log(["in flight", bytes > 1000 ? "MB/s" : "appends/s", "p50 ms", "p99 ms", "p99 round trips", "PUTs per 1,000 appends"].join(" | "));
      for (const maxInFlight of inFlights) {
        const phases = results.get(`${name}|${maxInFlight}`)!;
        const rate = bytes > 1000 ? cell(phases.map((p) => p.megabytesPerSecond), 1) : cell(phases.map((p) => p.appendsPerSecond), 0);
        const p99 = phases.map((p) => p.p99Ms);
        const roundTrips = latencyMs > 0 ? (median(p99) / latencyMs).toFixed(2) : "-";
        console.log([maxInFlight, rate, cell(phases.map((p) => p.p50Ms), 1), cell(p99, 1), roundTrips, cell(phases.map((p) => p.putsPerThousand), 0)].join(" | "));
      }
    }
  } finally {
    await embedded.stop();
  }
}

await main();
