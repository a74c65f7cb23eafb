// The table workload (docs/simulation.md, "Tables"): one primary-key table of four buckets (or, on some
// seeds, partitioned: two partitions of two buckets each), created at the coordinator once there is one
// (partitions added there too), and table clients that write batches of upserts and deletes to one bucket
// at a time with idempotent producer headers (one producer per bucket stream: a lost answer, sometimes
// dropped by the client itself, is retried with the same seq; a write given up on moves the producer to a
// new epoch), and sometimes look keys up (after their own last write: read your writes). Every write and
// what its answer proved goes into the history.
import type { JsonValue } from "../../src/core/meta/json.ts";
import { formatOffset, parseOffset } from "../../src/core/protocol/offsets.ts";
import { bucketPath } from "../../src/core/tables/bucket-paths.ts";
import { bucketOf, encodePartition } from "../../src/core/tables/bucketing.ts";
import { definitionJson, parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";
import { bucketIdText, type BucketId } from "../../src/core/tables/requests.ts";
import { validateRow } from "../../src/core/tables/rows.ts";
import type { History } from "./history.ts";
import type { HttpAnswer, Network } from "./network.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import type { SimRow, TableOp, TableWriteRecord } from "./table-history.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

export const SIM_TABLE = "simt";
const BUCKETS = 4;
/** A partitioned seed's table: `PARTITION_BUCKETS` buckets in each of the partitions `PARTITIONS`. */
const PARTITION_BUCKETS = 2;
const PARTITIONS: readonly number[] = [1, 2];
const KEYS_PER_BUCKET = 3;
const JSON_TYPE = { "content-type": "application/json" };
/** How often a table client loses a write's answer (so retries meet writes that did land). */
const LOST_ANSWER = 0.1;

/** One bucket of the table as the workload sees it: where it is, its keys (ids), and its partition's value. */
export interface SimBucket {
  readonly id: BucketId;
  /** `bucketIdText(id)`: the name every per-bucket map of the workload, the final read and the checker uses. */
  readonly text: string;
  /** Its bucket path, without the operation. */
  readonly path: string;
  /** The partition column's value of its rows (null: the table is not partitioned). */
  readonly partition: number | null;
  readonly ids: readonly string[];
}

/** The path of a bucket's operation (`write`, `lookup`, `changelog`). */
export const opPath = (bucket: SimBucket, op: string): string => `${bucket.path}/${op}`;

/** What the table clients share: the definition, its buckets and their keys, whether the table is ready. */
export class TableWorld {
  readonly definition: TableDefinition;
  readonly buckets: readonly SimBucket[];
  /** The partition values the creator adds (none when the table is not partitioned). */
  readonly partitions: readonly number[];
  /** The create (and every partition's add) was acknowledged. */
  created = false;
  private values = 0;

  constructor(readonly partitioned = false) {
    const parsed = parseTableDefinition(
      partitioned
        ? {
            columns: [
              { name: "p", type: "int" },
              { name: "id", type: "string" },
              { name: "v", type: "int" },
            ],
            primaryKey: ["p", "id"],
            bucketKey: ["id"],
            buckets: PARTITION_BUCKETS,
            partitionBy: "p",
          }
        : {
            columns: [
              { name: "id", type: "string" },
              { name: "v", type: "int" },
            ],
            primaryKey: ["id"],
            buckets: BUCKETS,
          },
    );
    if (!parsed.ok) throw new Error(`the simulated table's definition: ${parsed.error.message}`);
    this.definition = parsed.value;
    this.partitions = partitioned ? PARTITIONS : [];
    this.buckets = partitioned ? PARTITIONS.flatMap((p) => bucketsOf(parsed.value, p)) : bucketsOf(parsed.value, null);
  }

  get definitionJson(): JsonValue {
    return definitionJson(this.definition) as JsonValue;
  }

  /** The buckets the create itself makes: the definition's, or none for a partitioned table (its partitions add them). */
  get createBuckets(): number {
    return this.partitioned ? 0 : this.definition.buckets;
  }

  /** A value no other upsert of the run carries (so every row in a changelog names the write it came from). */
  nextValue(): number {
    return ++this.values;
  }
}

/** A row of bucket `bucket` (its partition column too, when partitioned). */
export function rowOf(bucket: SimBucket, id: string, v: number): SimRow {
  return bucket.partition === null ? { id, v } : { p: bucket.partition, id, v };
}

/** A key of bucket `bucket` as a lookup or delete names it. */
export function keyOf(bucket: SimBucket, id: string): Record<string, string | number> {
  return bucket.partition === null ? { id } : { p: bucket.partition, id };
}

/**
 * The buckets of one partition (`partition` null: of the table), `KEYS_PER_BUCKET` ids each, `k0`, `k1`, ...
 * assigned by the table's own bucketing; the partition's key is the core's encodePartition.
 */
function bucketsOf(definition: TableDefinition, partition: number | null): SimBucket[] {
  const keys: string[][] = Array.from({ length: definition.buckets }, () => []);
  for (let i = 0; keys.some((list) => list.length < KEYS_PER_BUCKET); i++) {
    const row = validateRow(definition, partition === null ? { id: `k${i}`, v: 0 } : { p: partition, id: `k${i}`, v: 0 });
    if (!row.ok) throw new Error(`key k${i}: ${row.error.message}`);
    const list = keys[bucketOf(definition, row.value)]!;
    if (list.length < KEYS_PER_BUCKET) list.push(`k${i}`);
  }
  return keys.map((ids, bucket) => {
    const id: BucketId = { partition: partition === null ? null : encodePartition(partition), bucket };
    return { id, text: bucketIdText(id), path: bucketPath(SIM_TABLE, id), partition, ids };
  });
}

export interface TableDeps {
  readonly net: Network;
  readonly prng: Prng;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly history: History;
  readonly world: TableWorld;
}

/** One bucket stream's producer: its epoch, next seq, and the write not yet settled. */
interface BucketProducer {
  epoch: number;
  seq: number;
  pending: TableWriteRecord | null;
  /** An attempt of the pending write timed out: it may still be decided, so its seq is not reused after a no-op. */
  timedOut: boolean;
  /** The offset the last acknowledged write of this client ended at (for read-your-writes lookups). */
  lastEnd: number | null;
}

type Settled = "done" | "retry" | "later";

export class TableWriter implements Actor {
  private busy = false;
  private readonly producers: BucketProducer[];

  constructor(
    readonly name: string,
    private readonly deps: TableDeps,
  ) {
    this.producers = deps.world.buckets.map(() => ({ epoch: 0, seq: 0, pending: null, timedOut: false, lastEnd: null }));
  }

  get idle(): boolean {
    return !this.busy;
  }

  choices(phase: Phase): readonly Choice[] {
    if (this.busy || phase !== "active" || !this.deps.world.created) return [];
    const run = (): void => {
      this.busy = true;
      this.act()
        .catch((error: unknown) => this.deps.trace.write(`  table client ${this.name} failed: ${String(error)}`))
        .finally(() => (this.busy = false));
    };
    return [{ category: "table", label: `table client ${this.name} acts`, run }];
  }

  private async act(): Promise<void> {
    const { prng, world } = this.deps;
    const index = prng.below(world.buckets.length);
    if (prng.chance(0.2)) await this.lookup(world.buckets[index]!, this.producers[index]!.lastEnd);
    else await this.write(index);
  }

  private async write(index: number): Promise<void> {
    const { prng, history, trace, world } = this.deps;
    const bucket = world.buckets[index]!;
    const producer = this.producers[index]!;
    if (producer.pending !== null && prng.chance(0.15)) {
      // Given up on: whatever of it is still on its way carries an epoch the next write makes stale.
      producer.pending.outcome = "abandoned";
      this.nextEpoch(producer);
    }
    if (producer.pending === null) {
      if (producer.seq > 0 && prng.chance(0.03)) this.nextEpoch(producer);
      const { epoch, seq } = producer;
      producer.pending = history.tables.newWrite({ client: this.name, bucket: bucket.text, ops: this.drawOps(bucket), producer: { id: this.name, epoch, seq }, sentStep: trace.currentStep });
      producer.timedOut = false;
    }
    const write = producer.pending;
    trace.write(`  table ${this.name} b${bucket.text} e${write.producer.epoch}.s${write.producer.seq}: ${describeOps(write.ops)}`);
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) await this.sleep(prng.between(20, 400));
      const sentStep = trace.currentStep;
      const answer = await this.send(bucket, write);
      write.attempts.push(describe(answer));
      if (answer.error === "timed out") producer.timedOut = true;
      if (answer.status !== 0 && prng.chance(LOST_ANSWER)) {
        // The answer is lost on its way back (the client cannot tell this from a reset): try the same seq again.
        write.attempts.push("answer lost");
        trace.write(`  table ${this.name} b${write.bucket} e${write.producer.epoch}.s${write.producer.seq}: answer lost`);
        continue;
      }
      const settled = this.settle(producer, write, answer, sentStep);
      if (settled === "done" && write.outcome === "acked" && prng.chance(0.3)) await this.lookup(bucket, producer.lastEnd);
      if (settled !== "retry") return;
    }
  }

  private send(bucket: SimBucket, write: TableWriteRecord): Promise<HttpAnswer> {
    const { epoch, seq } = write.producer;
    const ops = write.ops.map((op) => (op.kind === "upsert" ? { upsert: op.row } : { delete: keyOf(bucket, op.id) }));
    return this.deps.net.request(this.name, {
      method: "POST",
      path: opPath(bucket, "write"),
      headers: { ...JSON_TYPE, "producer-id": this.name, "producer-epoch": String(epoch), "producer-seq": String(seq) },
      body: JSON.stringify({ ops }),
    });
  }

  /** What an answer proves about the pending write, and whether to try again. */
  private settle(producer: BucketProducer, write: TableWriteRecord, answer: HttpAnswer, sentStep: number): Settled {
    const { trace, history } = this.deps;
    const by = answer.by;
    if ((answer.status === 200 || answer.status === 204) && by !== null) {
      write.answer = { step: trace.currentStep, sentStep, by };
      const taken = answer.status === 204 || answer.headers.get("producer-seq") !== null;
      write.outcome = answer.status === 204 ? "duplicate" : taken ? "acked" : "noop";
      if (write.outcome === "acked") this.acknowledge(producer, write, answer);
      producer.pending = null;
      if (taken) producer.seq++;
      // A no-op leaves the seq free for the next write, unless an attempt that timed out may still take it.
      else if (producer.timedOut) this.nextEpoch(producer);
      return "done";
    }
    if (answer.status === 400 || answer.status === 403 || (answer.status === 409 && answer.headers.has("producer-expected-seq"))) {
      // The client never skips a seq nor goes back an epoch: only a lost write (or a stale answerer) explains these.
      const { epoch, seq } = write.producer;
      history.tables.anomalies.push({ client: this.name, bucket: write.bucket, step: trace.currentStep, by, detail: `e${epoch}.s${seq} answered ${answer.status} ${answer.text.slice(0, 160)}` });
      return "later";
    }
    return "retry";
  }

  private acknowledge(producer: BucketProducer, write: TableWriteRecord, answer: HttpAnswer): void {
    const body = parseJson(answer.text) as { nextOffset?: unknown; count?: unknown } | null;
    const end = typeof body?.nextOffset === "string" ? parseOffset(body.nextOffset) : null;
    if (end === null || typeof body?.count !== "number") {
      write.attempts.push(`ack without nextOffset and count: ${answer.text.slice(0, 120)}`);
      return;
    }
    write.ack = { end, count: body.count };
    producer.lastEnd = end;
  }

  private nextEpoch(producer: BucketProducer): void {
    producer.epoch++;
    producer.seq = 0;
    producer.pending = null;
  }

  /** One to three ops on distinct keys of the bucket, mostly upserts (each with a fresh value). */
  private drawOps(bucket: SimBucket): TableOp[] {
    const { prng, world } = this.deps;
    const keys = [...bucket.ids];
    const ops: TableOp[] = [];
    for (let n = prng.between(1, keys.length); n > 0; n--) {
      const id = keys.splice(prng.below(keys.length), 1)[0]!;
      ops.push(prng.chance(0.7) ? { kind: "upsert", row: rowOf(bucket, id, world.nextValue()) } : { kind: "delete", id });
    }
    return ops;
  }

  /** Looks up every key of the bucket, at or after `minOffset` when given. */
  private async lookup(bucket: SimBucket, minOffset: number | null): Promise<void> {
    const { net, history, trace } = this.deps;
    const ids = bucket.ids;
    const sentStep = trace.currentStep;
    const body = { keys: ids.map((id) => keyOf(bucket, id)), ...(minOffset === null ? {} : { minOffset: formatOffset(minOffset) }) };
    const answer = await net.request(this.name, { method: "POST", path: opPath(bucket, "lookup"), headers: JSON_TYPE, body: JSON.stringify(body) });
    const rows = answer.status === 200 ? (parseJson(answer.text) as { rows?: unknown } | null)?.rows : undefined;
    if (!Array.isArray(rows) || answer.by === null || rows.length !== ids.length) {
      trace.write(`  table ${this.name} lookup b${bucket.text} not answered: ${describe(answer)}`);
      return;
    }
    history.tables.lookups.push({ client: this.name, bucket: bucket.text, ids, minOffset, rows: rows as (SimRow | null)[], sentStep, step: trace.currentStep, by: answer.by });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.deps.clock.schedule(ms, () => resolve(), null, `backoff ${this.name}`));
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

export function describeOps(ops: readonly TableOp[]): string {
  return ops.map((op) => (op.kind === "upsert" ? `upsert ${op.row.id}=${op.row.v}` : `delete ${op.id}`)).join(", ");
}

function describe(answer: HttpAnswer): string {
  return answer.error ?? `${answer.status} ${answer.text.slice(0, 120)}`;
}
