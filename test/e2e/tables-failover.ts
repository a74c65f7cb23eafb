// A bucket leader crashed while the TypeScript client writes (docs/tables.md, "Why a bucket is a stream"):
// a writer sends batches through a fetch that loses some answers, a snapshot is taken, more is written, the
// leader of one bucket is crashed with the fault switch, and the writer goes on until the new leader has
// acknowledged some of its batches. Every batch is `delete k, upsert k {v: n}` per key, so applying a batch
// twice would leave a second `+I` of the same row in the changelog: counting them checks exactly once.
import { TableClient, TableClientError, TableWriteError, type BucketWriteResult, type TableHandle } from "../../src/client/index.ts";
import { bucketOf } from "../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import type { Service } from "./service.ts";
import { adminHeaders, allLive, coordinatorOf, describeTable, expectStatus, fault, loggedLoads, lossyFetch, readChangelog, type LoggedLoad } from "./tables-clients.ts";

/** Keys written over and over, a slice per batch: each key is written once every KEYS / KEYS_PER_WRITE batches. */
const KEYS = 240;
const KEYS_PER_WRITE = 12;
/** Batches acknowledged before the snapshot, between the snapshot and the crash, and by the new leader. */
const BATCHES_BEFORE_SNAPSHOT = 10;
const BATCHES_BEFORE_CRASH = 10;
const BATCHES_AFTER_RE_LEAD = 5;
const RE_LEAD_TIMEOUT_MS = 60_000;

export interface CrashOptions {
  readonly table: string;
  readonly buckets: number;
  /** Every this many bucket writes, the answer is lost after the leader served it. */
  readonly loseEvery: number;
}

export interface CrashOutcome {
  readonly reLed: { bucket: number; victim: string; epochBefore: number; leaderAfter: string | null; epochAfter: number };
  /** Parts of the crashed leader's bucket acknowledged at the new leader epoch. */
  readonly ackedByNewLeader: number;
  readonly crashToFirstAckMs: number;
  readonly lostAnswers: number;
  /** Parts answered 204: a retry the leader had written already. */
  readonly duplicatesAnswered: number;
  /** The new leader's load of the bucket, from the Worker's log. */
  readonly restore: LoggedLoad | null;
  /** Every mismatch between what the writer saw acknowledged and what the table holds. */
  readonly problems: readonly string[];
}

const rowKey = (id: unknown, v: unknown): string => `${String(id)}/${String(v)}`;

class LedgerWriter {
  readonly acked = new Set<string>();
  /** Written or not: the client gave up with the outcome unknown. */
  readonly unknown = new Set<string>();
  readonly parts: (BucketWriteResult & { atMs: number })[] = [];
  readonly refusals: string[] = [];
  ackedBatches = 0;
  #running = true;
  #done: Promise<void> = Promise.resolve();
  #next = 0;

  constructor(private readonly handle: TableHandle, private readonly definition: TableDefinition) {}

  start(): void {
    this.#done = this.#loop();
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#done;
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const n = this.#next++;
      const ids = Array.from({ length: KEYS_PER_WRITE }, (_, i) => (n * KEYS_PER_WRITE + i) % KEYS);
      try {
        const result = await this.handle.write(ids.flatMap((id) => [{ delete: { id } }, { upsert: { id, v: n } }]));
        this.#settle(n, ids, result.buckets);
      } catch (error) {
        if (!(error instanceof TableClientError)) throw error;
        this.#settle(n, ids, error instanceof TableWriteError ? error.written : []);
        if (!error.retryable) this.refusals.push(`batch ${n}: ${error.code} ${error.message}`);
      }
    }
  }

  #settle(n: number, ids: readonly number[], written: readonly BucketWriteResult[]): void {
    const atMs = Date.now();
    for (const part of written) this.parts.push({ ...part, atMs });
    const done = new Set(written.map((part) => part.bucket));
    for (const id of ids) (done.has(bucketOf(this.definition, { id, v: 0 })) ? this.acked : this.unknown).add(rowKey(id, n));
    if (done.size === new Set(ids.map((id) => bucketOf(this.definition, { id, v: 0 }))).size) this.ackedBatches++;
  }
}

async function acksBeyond(writer: LedgerWriter, batches: number, what: string): Promise<void> {
  const target = writer.ackedBatches + batches;
  await eventually(
    () => {
      if (writer.ackedBatches < target) throw new NotYet(`${writer.ackedBatches} of ${target} batches; refused: ${writer.refusals.slice(-3).join("; ")}`);
      return true;
    },
    { timeoutMs: RE_LEAD_TIMEOUT_MS, what },
  );
}

export async function crashWhileWriting(service: Service, options: CrashOptions): Promise<CrashOutcome> {
  const lossy = lossyFetch(options.loseEvery);
  const handle = new TableClient({ baseUrl: service.baseUrl, fetch: lossy.fetch }).table(options.table);
  const raw = { columns: [{ name: "id", type: "int" }, { name: "v", type: "int" }], primaryKey: ["id"], buckets: options.buckets };
  const definition = parseTableDefinition(raw);
  if (!definition.ok) throw new Error(definition.error.message);
  await handle.create(raw);
  const writer = new LedgerWriter(handle, definition.value);
  writer.start();
  let reLed: CrashOutcome["reLed"];
  let crashAtMs: number;
  try {
    await acksBeyond(writer, BATCHES_BEFORE_SNAPSHOT, "batches before the snapshot");
    await snapshotAll(service, options.table);
    await acksBeyond(writer, BATCHES_BEFORE_CRASH, "batches between the snapshot and the crash");
    const { bucket, victim, epochBefore } = await pickVictim(service, options.table);
    crashAtMs = Date.now();
    await fault(service, victim, "crash");
    reLed = await waitReLed(service, writer, options.table, { bucket, victim, epochBefore });
    await acksBeyond(writer, BATCHES_AFTER_RE_LEAD, "batches after the bucket was re-led");
  } finally {
    await writer.stop();
  }
  await fault(service, reLed.victim, "heal");
  await allLive(service, 3);
  const atNewLeader = writer.parts.filter((part) => part.bucket === reLed.bucket && part.leaderEpoch > reLed.epochBefore);
  return {
    reLed,
    ackedByNewLeader: atNewLeader.length,
    crashToFirstAckMs: Math.min(...atNewLeader.map((part) => part.atMs)) - crashAtMs,
    lostAnswers: lossy.lost(),
    duplicatesAnswered: writer.parts.filter((part) => part.duplicate).length,
    restore: loggedLoads(service.logFile, options.table, reLed.bucket).filter((load) => load.node === reLed.leaderAfter).at(-1) ?? null,
    problems: [...writer.refusals, ...(await checkChangelogs(service, options.table, options.buckets, writer)), ...(await checkRows(handle, writer))],
  };
}

/** POST /admin/tables/<t>/snapshot: every primary-key bucket snapshotted now; throws if one was not (a big bucket takes a while: `timeoutMs`). */
export async function snapshotAll(service: Service, table: string, timeoutMs?: number): Promise<void> {
  const answer = await expectStatus(service, 200, "POST", `/admin/tables/${table}/snapshot`, undefined, adminHeaders(service), timeoutMs);
  const buckets = (answer.body as { buckets: { bucket: number; coveredOffset: string | null; error: string | null }[] }).buckets;
  const failed = buckets.filter((bucket) => bucket.error !== null || bucket.coveredOffset === null);
  if (failed.length > 0) throw new Error(`snapshot of ${table}: ${JSON.stringify(failed)}`);
}

/** A bucket led by a node that is not the coordinator (its crash then tests re-leading, not coordinator failover). */
export async function pickVictim(service: Service, table: string): Promise<{ bucket: number; victim: string; epochBefore: number }> {
  const coordinator = await coordinatorOf(service);
  const chosen = (await describeTable(service, table)).buckets.find((bucket) => bucket.leader !== null && bucket.leader !== coordinator);
  if (chosen === undefined || chosen.leader === null) throw new Error(`no bucket of ${table} led by a node other than ${coordinator}`);
  return { bucket: chosen.bucket, victim: chosen.leader, epochBefore: chosen.leaderEpoch ?? 0 };
}

async function waitReLed(service: Service, writer: LedgerWriter, table: string, crashed: { bucket: number; victim: string; epochBefore: number }): Promise<CrashOutcome["reLed"]> {
  return eventually(
    async () => {
      const view = (await describeTable(service, table)).buckets[crashed.bucket]!;
      const served = writer.parts.some((part) => part.bucket === crashed.bucket && part.leaderEpoch > crashed.epochBefore);
      if (view.leader === crashed.victim || (view.leaderEpoch ?? 0) <= crashed.epochBefore || !served) throw new NotYet(`${JSON.stringify(view)}, served ${served}`);
      return { ...crashed, leaderAfter: view.leader, epochAfter: view.leaderEpoch ?? 0 };
    },
    { timeoutMs: RE_LEAD_TIMEOUT_MS, what: `bucket ${crashed.bucket} re-led and serving` },
  );
}

/** Each acknowledged row (id, v) is inserted exactly once in the changelog; a row the writer does not know of, never. */
async function checkChangelogs(service: Service, table: string, buckets: number, writer: LedgerWriter): Promise<string[]> {
  const inserted = new Map<string, number>();
  for (let bucket = 0; bucket < buckets; bucket++) {
    for (const record of await readChangelog(service, table, bucket)) {
      if (record.op === "+I" || record.op === "+U") inserted.set(rowKey(record.row["id"], record.row["v"]), (inserted.get(rowKey(record.row["id"], record.row["v"])) ?? 0) + 1);
    }
  }
  const problems: string[] = [];
  for (const key of writer.acked) if (inserted.get(key) !== 1) problems.push(`acknowledged row ${key} inserted ${inserted.get(key) ?? 0} times`);
  for (const key of writer.unknown) if ((inserted.get(key) ?? 0) > 1) problems.push(`row ${key} (outcome unknown) inserted ${inserted.get(key)} times`);
  for (const [key, count] of inserted) if (!writer.acked.has(key) && !writer.unknown.has(key)) problems.push(`row ${key} never written, inserted ${count} times`);
  return problems;
}

/** Each key holds the row of its last acknowledged batch, or of a later batch whose outcome is unknown. */
async function checkRows(handle: TableHandle, writer: LedgerWriter): Promise<string[]> {
  const batchesOf = (id: number, set: ReadonlySet<string>): number[] => [...set].filter((key) => key.startsWith(`${id}/`)).map((key) => Number(key.split("/")[1]));
  const rows = await handle.lookup(Array.from({ length: KEYS }, (_, id) => ({ id })));
  const problems: string[] = [];
  rows.forEach((row, id) => {
    const lastAcked = Math.max(-1, ...batchesOf(id, writer.acked));
    const allowed = [lastAcked, ...batchesOf(id, writer.unknown).filter((n) => n > lastAcked)].filter((n) => n >= 0);
    const v = row === null ? null : row["v"];
    if (allowed.length === 0 ? row !== null : !allowed.includes(v as number)) problems.push(`key ${id} holds ${JSON.stringify(row)}, expected v in ${JSON.stringify(allowed)}`);
  });
  return problems;
}
