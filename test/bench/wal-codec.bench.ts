// WAL encode/decode throughput (MB/s) for group-commit objects of many small records and of a few large
// ones. Called by object-store.bench.ts; runs on its own too: npx tsx test/bench/wal-codec.bench.ts
import { pathToFileURL } from "node:url";
import type { WalRecord } from "../../src/storage/record-codec.ts";
import { decodeWalObject, encodeWalObject } from "../../src/storage/wal-format.ts";

function records(count: number, dataBytes: number): WalRecord[] {
  const data = new Uint8Array(dataBytes).map((_, i) => (i * 31) & 0xff);
  return Array.from({ length: count }, (_, i) => ({
    streamId: `stream-${i % 64}`,
    streamEpoch: 7,
    firstOffset: i * dataBytes,
    flags: 0,
    meta: new Uint8Array(0),
    data,
  }));
}

function mbPerSecond(bytes: number, ms: number): string {
  return ((bytes / (1024 * 1024)) / (ms / 1000)).toFixed(0);
}

export function benchWalCodec(): void {
  console.log("WAL codec throughput (payload MB/s, best of 5 rounds of 20 objects)");
  const shapes: [string, number, number][] = [
    ["1,024 records of 100 B", 1024, 100],
    ["1,024 records of 1 KiB", 1024, 1024],
    ["8 records of 512 KiB", 8, 512 * 1024],
  ];
  for (const [label, count, size] of shapes) {
    const wal = { kind: "records" as const, nodeId: "node-0", nodeEpoch: 1_764_000_000_000, seq: 42, records: records(count, size) };
    const encoded = encodeWalObject(wal);
    let bestEncodeMs = Infinity;
    let bestDecodeMs = Infinity;
    for (let round = 0; round < 5; round++) {
      let started = performance.now();
      for (let i = 0; i < 20; i++) encodeWalObject(wal);
      bestEncodeMs = Math.min(bestEncodeMs, performance.now() - started);
      started = performance.now();
      for (let i = 0; i < 20; i++) decodeWalObject(encoded, "wal/bench");
      bestDecodeMs = Math.min(bestDecodeMs, performance.now() - started);
    }
    const payload = 20 * count * size;
    console.log(`  ${label.padEnd(24)} object ${(encoded.byteLength / 1024).toFixed(0).padStart(5)} KiB  encode ${mbPerSecond(payload, bestEncodeMs).padStart(5)} MB/s  decode ${mbPerSecond(payload, bestDecodeMs).padStart(5)} MB/s`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) benchWalCodec();
