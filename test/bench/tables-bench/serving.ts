// The serving phase of the tables benchmark: a fresh three-node mink (mink's default leases and snapshot
// settings), primary-key tables of 1 bucket and of 3 (one bucket per node, table A), a fresh table per path:
//  - writes at the leaders: per bucket, `inFlight` producers (requests.ts) send 500-row batches of new keys
//    to the bucket's leader address, all buckets at once; or the same through the router, each batch still
//    the keys of one bucket (so the leader does the same work and the router's hop is the difference).
//    Warm-up batches first (the first request loads the bucket), then `batches` per bucket, timed;
//  - lookups of rows written above, one at a time: 1 key and 100 keys, at a leader (the bucket path, keys of
//    that bucket, the buckets in turn) and through the router (keys of any bucket: 100 keys of the 3-bucket
//    table are split over its three leaders).
import { readFileSync } from "node:fs";
import { startService, type Service } from "../../e2e/service.ts";
import { allLive, expectStatus } from "../../e2e/tables-clients.ts";
import { errorText } from "../service-bench/stats.ts";
import { BucketProducer, Failures, LeaderAddress, routerWrite, timedLookup, type Ack } from "./requests.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { BucketKeys, parsedDefinition, rowOf, tableBody } from "./rows.ts";

const NODES = 3;
/** A phase's writes give up when one batch is not acknowledged for this long (nothing crashes here). */
const WRITE_GIVE_UP_MS = 60_000;
const LOOKUP_WARMUP = 20;

export interface ServingOptions {
  readonly batchRows: number;
  /** Timed batches per bucket and path. */
  readonly batches: number;
  readonly warmupBatches: number;
  /** Producers per bucket, each with one batch in flight. */
  readonly inFlight: number;
  /** Timed lookups per kind. */
  readonly lookups: number;
}

type Path = "leader" | "router";

interface WriteFigures {
  readonly buckets: number;
  readonly path: Path;
  readonly rows: number;
  readonly elapsedMs: number;
  readonly acks: readonly Ack[];
  readonly failures: Failures;
  /** Durations of the background snapshots of the table (`table.snapshot` lines) logged during the timed batches. */
  readonly snapshotsMs: readonly number[];
}

interface LookupFigures {
  readonly buckets: number;
  readonly path: Path;
  readonly keys: number;
  readonly latenciesMs: readonly number[];
  readonly missing: number;
  readonly failed: number;
}

export interface ServingResult {
  readonly writes: WriteFigures[];
  readonly lookups: LookupFigures[];
  error: string | null;
  logTail: string;
}

type Progress = (text: string) => void;

export async function runServing(options: ServingOptions, progress: Progress): Promise<ServingResult> {
  const result: ServingResult = { writes: [], lookups: [], error: null, logTail: "" };
  let service: Service | undefined;
  try {
    progress(`serving: starting mink (${NODES} nodes, default leases and snapshot settings)`);
    service = await startService({ nodes: NODES, longPollTimeoutMs: 1_000 });
    await allLive(service, NODES, 120_000);
    for (const buckets of [1, 3]) await servingTable(service, buckets, options, result, progress);
  } catch (error) {
    result.error = errorText(error);
    progress(`serving: FAILED: ${result.error}`);
    if (service !== undefined) result.logTail = service.logTail(30);
  } finally {
    await service?.stop().catch((error: unknown) => progress(`stopping mink: ${errorText(error)}`));
  }
  return result;
}

async function servingTable(service: Service, buckets: number, options: ServingOptions, result: ServingResult, progress: Progress): Promise<void> {
  const definition = parsedDefinition(buckets);
  for (const path of ["leader", "router"] as const) {
    // A table per path: each window starts from the same empty buckets, and neither meets the background
    // snapshot that the second 16 MiB of one bucket's changelog would start.
    const table = `serve${buckets}b-${path}`;
    await expectStatus(service, 201, "PUT", `/v1/table/${table}`, tableBody(buckets));
    const keys = Array.from({ length: buckets }, (_, b) => new BucketKeys(definition, b));
    const leaders = await Promise.all(keys.map((k) => LeaderAddress.of(service, table, k.bucket)));
    const failures = new Failures();
    const lanes = keys.flatMap((k, b) =>
      Array.from({ length: options.inFlight }, (_, lane) => {
        const producer = new BucketProducer(leaders[b]!, `bench-${table}-b${b}-p${lane}`, failures);
        return (ids: number[]) => {
          const ops = ids.map((id) => ({ upsert: rowOf(id) }));
          const giveUpAtMs = Date.now() + WRITE_GIVE_UP_MS;
          return path === "leader" ? producer.write(ops, giveUpAtMs) : routerWrite(service, table, ops, failures, giveUpAtMs);
        };
      }).map((send) => ({ keys: k, send })),
    );
    await runBatches(lanes, options.warmupBatches, options.batchRows);
    progress(`serving: ${table} (leaders ${leaders.map((l) => `${l.bucket}: ${l.node}`).join(", ")}): ${options.batches} batches of ${options.batchRows} rows per bucket`);
    const snapshotsBefore = loggedSnapshots(service.logFile, table).length;
    const startedMs = performance.now();
    const acks = await runBatches(lanes, options.batches, options.batchRows);
    const elapsedMs = performance.now() - startedMs;
    // A snapshot that ends just after the last batch is logged a moment later and is not counted.
    const snapshotsMs = loggedSnapshots(service.logFile, table).slice(snapshotsBefore);
    result.writes.push({ buckets, path, rows: acks.length * options.batchRows, elapsedMs, acks, failures, snapshotsMs });
    for (const count of [1, 100]) result.lookups.push(await measureLookups(service, table, keys, leaders, path, count, options.lookups));
    progress(`serving: ${table}: lookups done`);
  }
}

/** Runs `perBucket` batches on every bucket, its lanes sharing them; the acks of all. */
async function runBatches(lanes: readonly { keys: BucketKeys; send: (ids: number[]) => Promise<Ack> }[], perBucket: number, batchRows: number): Promise<Ack[]> {
  const left = new Map(lanes.map((lane) => [lane.keys, perBucket]));
  const acks: Ack[] = [];
  await Promise.all(
    lanes.map(async (lane) => {
      while (left.get(lane.keys)! > 0) {
        left.set(lane.keys, left.get(lane.keys)! - 1);
        acks.push(await lane.send(lane.keys.take(batchRows)));
      }
    }),
  );
  return acks;
}

async function measureLookups(service: Service, table: string, keys: readonly BucketKeys[], leaders: readonly LeaderAddress[], path: Path, count: number, lookups: number): Promise<LookupFigures> {
  const random = seededRandom(count * 7 + keys.length);
  const figures = { buckets: keys.length, path, keys: count, latenciesMs: [] as number[], missing: 0, failed: 0 };
  for (let i = 0; i < LOOKUP_WARMUP + lookups; i++) {
    const bucket = i % keys.length;
    // At a leader every key is of its bucket; through the router any bucket's (the router splits them).
    const ids = path === "leader" ? keys[bucket]!.sample(count, random) : Array.from({ length: count }, () => keys[Math.floor(random() * keys.length)]!.sample(1, random)[0]!);
    const url = path === "leader" ? leaders[bucket]!.url("lookup") : `${service.baseUrl}/v1/table/${table}/lookup`;
    try {
      const outcome = await timedLookup(url, ids);
      if (i < LOOKUP_WARMUP) continue;
      figures.latenciesMs.push(outcome.latencyMs);
      figures.missing += outcome.missing;
    } catch {
      figures.failed++;
    }
  }
  return figures;
}

/** The durations of the `table.snapshot` lines of `table` in the Worker's log so far, oldest first. */
function loggedSnapshots(logFile: string, table: string): number[] {
  const durationsMs: number[] = [];
  for (const line of readFileSync(logFile, "utf8").split("\n")) {
    const start = line.indexOf("{");
    if (start < 0 || !line.includes('"table.snapshot"')) continue;
    try {
      const fields = JSON.parse(line.slice(start)) as { event?: unknown; table?: unknown; durationMs?: unknown };
      if (fields.event === "table.snapshot" && fields.table === table && typeof fields.durationMs === "number") durationsMs.push(fields.durationMs);
    } catch {
      // a line cut by the log's buffering
    }
  }
  return durationsMs;
}
