// Metadata-log benchmark: what one MetaLog costs at 100,000 and 1,000,000 streams, measured on the pure core
// in Node (the Durable Object runs the same code): memory per stream, apply and lookup time, snapshot size,
// encode time and load (decode) time, and the time to build the full view.
//
//   npx tsx test/bench/meta-log.bench.ts [--streams 100000,1000000] [--nodes 16]
//   (for memory figures: node --expose-gc --import tsx test/bench/meta-log.bench.ts)
//
// It prints figures; it asserts nothing. Numbers are only comparable within one run on one machine.
import { parseArgs } from "node:util";
import {
  apply,
  decodeSnapshot,
  emptyState,
  encodeSnapshot,
  fullView,
  lookupStream,
  type ApplyContext,
  type Command,
  type MetaState,
} from "../../src/core/meta/index.ts";

const { values } = parseArgs({
  options: { streams: { type: "string", default: "100000,1000000" }, nodes: { type: "string", default: "16" } },
});
const sizes = values.streams.split(",").map(Number);
const nodeCount = Number(values.nodes);
const CTX: ApplyContext = { nowMs: 1_700_000_000_000 };
/** Each stream gets its own config object, as after RPC or JSON decoding (nothing shared). */
const config = (): { contentType: string } => ({ contentType: "application/json" });

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsedBytes(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function streamName(i: number): string {
  return `tenant-${i % 1000}/stream-${i}`;
}

function mustApply(state: MetaState, command: Command): MetaState {
  const { state: next, result } = apply(state, command, CTX);
  if (!result.ok) throw new Error(`${command.type} rejected: ${result.error.message}`);
  return next;
}

interface Row {
  streams: number;
  heapBytesPerStream: number | null;
  /** Heap of the snapshot text plus the decoded state: what a restarting MetaLog holds at the end of its load. */
  loadHeapBytesPerStream: number | null;
  createPlaceUsPerCommand: number;
  openCloseUsAtSize: number;
  lookupByNameUs: number;
  lookupByIdUs: number;
  snapshotBytes: number;
  snapshotBytesPerStream: number;
  encodeMs: number;
  decodeMs: number;
  fullViewMs: number;
}

function bench(streamCount: number): Row {
  const heapBefore = heapUsedBytes();
  let state = emptyState();
  for (let n = 0; n < nodeCount; n++) {
    state = mustApply(state, { type: "RegisterNode", nodeId: `node-${String(n).padStart(2, "0")}`, nodeEpoch: 1, addr: `https://mink.example/n/node-${n}`, slots: 1 + (n % 4) });
  }
  const started = performance.now();
  for (let i = 0; i < streamCount; i++) {
    state = mustApply(state, { type: "CreateStream", name: streamName(i), config: config() });
    state = mustApply(state, { type: "PlaceStream", streamId: `s${i + 1}` });
  }
  const createPlaceUsPerCommand = ((performance.now() - started) * 1000) / (2 * streamCount);
  const heapAfter = heapUsedBytes();

  // Open and close at full size: the per-entry cost of the log once the state is large.
  const sample = 20_000;
  const openStarted = performance.now();
  for (let k = 0; k < sample; k++) {
    const id = `s${1 + ((k * 7919) % streamCount)}`;
    const owner = state.streams.get(id)?.owner ?? "";
    const opened = apply(state, { type: "OpenStream", streamId: id, nodeId: owner, nodeEpoch: 1 }, CTX);
    if (!opened.result.ok) throw new Error("open rejected");
    state = mustApply(opened.state, { type: "CloseStream", streamId: id, nodeId: owner, nodeEpoch: 1, epoch: opened.result.value.stream.epoch });
  }
  const openCloseUsAtSize = ((performance.now() - openStarted) * 1000) / (2 * sample);

  const lookups = 200_000;
  let found = 0;
  let lookupStarted = performance.now();
  for (let k = 0; k < lookups; k++) if (lookupStream(state, { name: streamName((k * 104_729) % streamCount) }).stream !== null) found++;
  const lookupByNameUs = ((performance.now() - lookupStarted) * 1000) / lookups;
  lookupStarted = performance.now();
  for (let k = 0; k < lookups; k++) if (lookupStream(state, { id: `s${1 + ((k * 104_729) % streamCount)}` }).stream !== null) found++;
  const lookupByIdUs = ((performance.now() - lookupStarted) * 1000) / lookups;
  if (found !== 2 * lookups) throw new Error("lookups missed");

  const heapWithState = heapUsedBytes();
  let t = performance.now();
  const text = encodeSnapshot(state);
  const encodeMs = performance.now() - t;
  const snapshotBytes = Buffer.byteLength(text, "utf8");
  t = performance.now();
  const decoded = decodeSnapshot(text);
  const decodeMs = performance.now() - t;
  const heapWithLoad = heapUsedBytes();
  if (decoded.streams.size !== streamCount) throw new Error("decode lost streams");
  t = performance.now();
  const view = fullView(state);
  const fullViewMs = performance.now() - t;
  if (view.streams.length !== streamCount) throw new Error("view lost streams");

  return {
    streams: streamCount,
    heapBytesPerStream: gc === undefined ? null : (heapAfter - heapBefore) / streamCount,
    loadHeapBytesPerStream: gc === undefined ? null : (heapWithLoad - heapWithState) / streamCount,
    createPlaceUsPerCommand,
    openCloseUsAtSize,
    lookupByNameUs,
    lookupByIdUs,
    snapshotBytes,
    snapshotBytesPerStream: snapshotBytes / streamCount,
    encodeMs,
    decodeMs,
    fullViewMs,
  };
}

function printTable(rows: Row[]): void {
  const header = [
    "streams",
    "heap B/stream",
    "load heap B/stream",
    "create+place us/cmd",
    "open/close us/cmd",
    "lookup name us",
    "lookup id us",
    "snapshot MB",
    "snapshot B/stream",
    "encode ms",
    "decode (load) ms",
    "full view ms",
  ];
  const table = [
    header,
    ...rows.map((r) => [
      r.streams.toLocaleString("en-US"),
      r.heapBytesPerStream === null ? "n/a (--expose-gc)" : r.heapBytesPerStream.toFixed(0),
      r.loadHeapBytesPerStream === null ? "n/a" : r.loadHeapBytesPerStream.toFixed(0),
      r.createPlaceUsPerCommand.toFixed(2),
      r.openCloseUsAtSize.toFixed(2),
      r.lookupByNameUs.toFixed(3),
      r.lookupByIdUs.toFixed(3),
      (r.snapshotBytes / 1e6).toFixed(1),
      r.snapshotBytesPerStream.toFixed(1),
      r.encodeMs.toFixed(0),
      r.decodeMs.toFixed(0),
      r.fullViewMs.toFixed(0),
    ]),
  ];
  const widths = header.map((_, col) => Math.max(...table.map((row) => row[col]!.length)));
  for (const row of table) console.log(row.map((cell, col) => cell.padStart(widths[col]!)).join("  "));
}

console.log(`metadata log: ${nodeCount} nodes, names like "${streamName(123456)}", config ${JSON.stringify(config())}, Node ${process.version}`);
const rows: Row[] = [];
for (const size of sizes) rows.push(bench(size));
printTable(rows);
