// Other default caps filled by one client (docs/limits.md, "Caps a node can hold"). Prints, asserts
// nothing: three nodes in token mode with wrangler.toml's defaults, one root token, and for each cap the
// fill time, how the first request past it was answered, and 7 appends of one byte to a stream on each
// node right after (the worst of the three per append: median and max), plus whether any epoch changed.
//   1. MAX_PRODUCERS_PER_STREAM: 1,000 producer ids on one stream of node-1 (32 at a time), then a new one.
//   2. OPS_PER_BATCH: a 10,000-op write to a one-bucket table while the appends run beside it.
//   3. MAX_SUBSCRIPTIONS: pull-wake subscriptions (32 at a time) until 10,000 or MINK_BENCH_SUB_SECONDS.
//
//   npx tsx test/bench/default-caps.bench.ts          # npm run bench:default-caps
import { allLive, call, mint, namesOnEachNode, nodeEpochs, OPS, startHostileService, streamPath } from "../e2e/hostile-support.ts";
import type { Service } from "../e2e/service.ts";
import { positiveInt } from "./env-knobs.ts";

const MAX_PRODUCERS_PER_STREAM = 1_000;
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const OPS_PER_BATCH = positiveInt("MINK_BENCH_OPS", 10_000);
const VALUE_CHARS = positiveInt("MINK_BENCH_VALUE_CHARS", 100);
/** MINK_BENCH_PHASES: a comma-separated subset of producers,body,table,subscriptions (default all). */
const PHASES = new Set((process.env.MINK_BENCH_PHASES ?? "producers,body,table,subscriptions").split(","));
const MAX_SUBSCRIPTIONS = 10_000;
const SUB_SECONDS = positiveInt("MINK_BENCH_SUB_SECONDS", 240);
const CONCURRENCY = 32;
const TEXT = { "content-type": "text/plain" };
const JSON_TYPE = { "content-type": "application/json" };

const service: Service = await startHostileService({}, { longPollTimeoutMs: 30_000 });
let token = "";

async function pool(count: number, task: (index: number) => Promise<void>, deadlineMs = Infinity): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count && performance.now() < deadlineMs) await task(next++);
    }),
  );
  return Math.min(next, count);
}

/** 7 rounds of one append to each of `streams` at once: per round the slowest, then median and max. */
async function appendsAcross(streams: readonly string[]): Promise<{ medianMs: number; maxMs: number; failed: string[] }> {
  const worst: number[] = [];
  const failed: string[] = [];
  for (let round = 0; round < 7; round++) {
    const times = await Promise.all(
      streams.map(async (name) => {
        const at = performance.now();
        const answer = await call(service, streamPath(name), { method: "POST", token, headers: TEXT, body: "x" });
        if (answer.status !== 204) failed.push(`${name}: ${answer.status}`);
        return performance.now() - at;
      }),
    );
    worst.push(Math.max(...times));
  }
  const sorted = worst.sort((a, b) => a - b);
  return { medianMs: Math.round(sorted[3]!), maxMs: Math.round(sorted[6]!), failed };
}

try {
  token = (await mint(service, [""], OPS)).token;
  await allLive(service, token);
  const epochs = await nodeEpochs(service);
  const writers = [...(await namesOnEachNode(service, "dc/w", token)).values()];
  const target = (await namesOnEachNode(service, "dc/p", token)).get("node-1")!;
  console.log(JSON.stringify({ phase: "baseline", ...(await appendsAcross(writers)) }));

  if (PHASES.has("producers")) await producersPhase(target, writers);
  if (PHASES.has("body")) await bodyPhase(target, writers);
  if (PHASES.has("table")) await tablePhase(writers);
  if (PHASES.has("subscriptions")) await subscriptionsPhase(writers);
  const after = await nodeEpochs(service);
  console.log(JSON.stringify({ epochsSame: [...epochs].every(([node, epoch]) => after.get(node) === epoch) }));
} finally {
  await service.stop();
}

async function producersPhase(target: string, writers: readonly string[]): Promise<void> {
  const started = performance.now();
  await pool(MAX_PRODUCERS_PER_STREAM, async (i) => {
    const answer = await call(service, streamPath(target), { method: "POST", token, headers: { ...TEXT, "producer-id": `p-${i}-${"x".repeat(900)}`, "producer-epoch": "0", "producer-seq": "0" }, body: "p" });
    if (answer.status !== 200 && answer.status !== 204) throw new Error(`producer ${i}: ${answer.status} ${answer.text}`);
  });
  const fillS = (performance.now() - started) / 1000;
  const past = await call(service, streamPath(target), { method: "POST", token, headers: { ...TEXT, "producer-id": "one-more", "producer-epoch": "0", "producer-seq": "0" }, body: "p" });
  console.log(JSON.stringify({ phase: "producers", filled: MAX_PRODUCERS_PER_STREAM, fillS: Number(fillS.toFixed(1)), past: past.status, ...(await appendsAcross(writers)) }));
}

async function bodyPhase(target: string, writers: readonly string[]): Promise<void> {
  const started = performance.now();
  const big = call(service, streamPath(target), { method: "POST", token, headers: TEXT, body: "b".repeat(MAX_BODY_BYTES), timeoutMs: 120_000 });
  const beside = await appendsAcross(writers);
  const answer = await big;
  console.log(JSON.stringify({ phase: "body", bytes: MAX_BODY_BYTES, status: answer.status, appendS: Number(((performance.now() - started) / 1000).toFixed(1)), ...beside }));
}

async function tablePhase(writers: readonly string[]): Promise<void> {
  const table = { columns: [{ name: "id", type: "int" }, { name: "v", type: "string" }], primaryKey: ["id"], buckets: 1 };
  const created = await call(service, "/v1/table/dc-batch", { method: "PUT", token, headers: JSON_TYPE, body: JSON.stringify(table) });
  if (created.status !== 201 && created.status !== 200) throw new Error(`table: ${created.status} ${created.text}`);
  const ops = Array.from({ length: OPS_PER_BATCH }, (_, id) => ({ upsert: { id, v: "v".repeat(VALUE_CHARS) } }));
  const started = performance.now();
  const batch = call(service, "/v1/table/dc-batch/write", { method: "POST", token, headers: JSON_TYPE, body: JSON.stringify({ ops }), timeoutMs: 120_000 });
  const beside = await appendsAcross(writers);
  const written = await batch;
  if (written.status !== 200) console.log(`table write: ${written.status} ${written.text.slice(0, 300)}`);
  console.log(JSON.stringify({ phase: "table batch", ops: OPS_PER_BATCH, valueChars: VALUE_CHARS, status: written.status, writeS: Number(((performance.now() - started) / 1000).toFixed(1)), ...beside }));
}

async function subscriptionsPhase(writers: readonly string[]): Promise<void> {
  const started = performance.now();
  let refused = 0;
  const made = await pool(
    MAX_SUBSCRIPTIONS,
    async (i) => {
      const body = JSON.stringify({ type: "pull-wake", pattern: `dc/sub${i}/*`, wake_stream: `dc/wake-${i}` });
      const answer = await call(service, `/v1/stream/__ds/subscriptions/dc-${i}`, { method: "PUT", token, headers: JSON_TYPE, body });
      if (answer.status === 429) refused++;
      else if (answer.status !== 201) throw new Error(`subscription ${i}: ${answer.status} ${answer.text}`);
    },
    performance.now() + SUB_SECONDS * 1000,
  );
  const subS = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ phase: "subscriptions", made, refused, fillS: Number(subS.toFixed(1)), ...(await appendsAcross(writers)) }));
}
