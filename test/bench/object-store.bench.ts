// Object-store benchmark: PUT (create-only and compare-and-swap) and GET latency percentiles, side by side
// for the in-memory store, the embedded S3 endpoint and an outside S3 server (radosgw) when
// MINK_TEST_S3_* names one; then WAL encode/decode throughput.
//
//   npx tsx test/bench/object-store.bench.ts [--ops 300] [--size 4096]
//   (with radosgw: bash scripts/radosgw/start.sh /tmp/rgw && set -a && . /tmp/rgw/env && set +a first)
//
// It prints figures; it asserts nothing. Numbers are only comparable within one run on one machine.
import { parseArgs } from "node:util";
import { startEmbeddedS3 } from "../../scripts/embedded-s3.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { S3Store } from "../../src/storage/s3-store.ts";
import { externalS3Target } from "../support/s3-stores.ts";
import { benchWalCodec } from "./wal-codec.bench.ts";

const { values } = parseArgs({ options: { ops: { type: "string", default: "300" }, size: { type: "string", default: "4096" } } });
const ops = Number(values.ops);
const sizeBytes = Number(values.size);

interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function percentiles(samplesMs: number[]): Percentiles {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

async function timeEach(count: number, operation: (i: number) => Promise<unknown>): Promise<Percentiles> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await operation(i);
    samples.push(performance.now() - started);
  }
  return percentiles(samples);
}

async function benchStore(store: ObjectStore): Promise<Record<string, Percentiles>> {
  const prefix = `bench/${Date.now().toString(36)}`;
  const body = new Uint8Array(sizeBytes).map((_, i) => i & 0xff);
  const createOnly = await timeEach(ops, (i) => store.put(`${prefix}/create/${i}`, body, { condition: { ifNoneMatch: "*" } }));
  const casKey = `${prefix}/cas`;
  let etag = (await store.put(casKey, body)).etag;
  const compareAndSwap = await timeEach(ops, async () => {
    etag = (await store.put(casKey, body, { condition: { ifMatch: etag } })).etag;
  });
  const get = await timeEach(ops, (i) => store.get(`${prefix}/create/${i}`));
  const rangedGet = await timeEach(ops, (i) => store.get(`${prefix}/create/${i}`, { offset: 100, length: 512 }));
  return { "PUT If-None-Match": createOnly, "PUT If-Match": compareAndSwap, GET: get, "GET range": rangedGet };
}

function printTable(results: Map<string, Record<string, Percentiles>>): void {
  const rows: string[][] = [["store", "operation", "p50 ms", "p90 ms", "p99 ms", "max ms"]];
  for (const [store, operations] of results) {
    for (const [operation, p] of Object.entries(operations)) {
      rows.push([store, operation, ...[p.p50, p.p90, p.p99, p.max].map((v) => v.toFixed(3))]);
    }
  }
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  for (const row of rows) console.log(row.map((cell, col) => (col < 2 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join("  "));
}

async function main(): Promise<void> {
  console.log(`object-store latency: ${ops} sequential operations of ${sizeBytes} B each, Node ${process.version}`);
  const results = new Map<string, Record<string, Percentiles>>();
  results.set("in-memory", await benchStore(new MemoryStore()));

  const embedded = await startEmbeddedS3({ port: 0 });
  try {
    const store = new S3Store({ ...embedded, endpoint: embedded.url, region: "auto" });
    results.set("embedded endpoint", await benchStore(store));
  } finally {
    await embedded.stop();
  }

  const external = externalS3Target();
  if (external === undefined) console.log("(no MINK_TEST_S3_ENDPOINT: radosgw column skipped)");
  else results.set(`s3 ${external.endpoint}`, await benchStore(new S3Store(external)));

  printTable(results);
  console.log();
  benchWalCodec();
}

await main();
