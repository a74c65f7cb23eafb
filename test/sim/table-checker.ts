// The table invariants (docs/simulation.md, "Tables"), read from the history and each bucket's changelog and
// final lookup: 1 the changelog is a valid change history of rows clients wrote; 2 every acknowledged write
// is in it once, where it was acknowledged, in real-time order (and a no-op answer matches a state the
// bucket held); 3 the final lookup is the changelog replayed; 4 each key's final row follows its last
// acknowledged writes; 5 a lookup sees a state of the changelog that was durable when it answered, at or
// after its minOffset.
import { incarnationLabel, superseded, type History } from "./history.ts";
import { describeOps } from "./table-clients.ts";
import { boundariesWhere, durableSteps, replay, sameRow, type Replay } from "./table-replay.ts";
import type { BucketFinal, ChangelogEntry, SimRow, TableOp, TableWriteRecord } from "./table-history.ts";
import type { Violation } from "./violations.ts";

export const TABLE_INVARIANT = {
  changelog: "tables 1 (a bucket's changelog is a valid change history of rows clients wrote)",
  once: "tables 2 (every acknowledged table write is in its changelog once, where and when it was acknowledged)",
  lookup: "tables 3 (the final lookup equals the changelog replayed)",
  lastWrite: "tables 4 (each key's final row follows its last acknowledged write)",
  reads: "tables 5 (a lookup sees a durable state of the changelog, at or after its minOffset)",
  liveness: "tables liveness (every bucket reads back after the run settled)",
  staleAnswer: "notice: a zombie answered a table write from stale state",
  staleRead: "notice: a lookup saw a state older than a write acknowledged before it was sent",
} as const;

interface Sink {
  readonly out: Violation[];
  readonly notices: Violation[];
}

export function checkTables(history: History, out: Violation[], notices: Violation[]): void {
  const tables = history.tables;
  const sink = { out, notices };
  checkAnomalies(history, sink);
  if (!tables.existsAtEnd) {
    if (tables.createdStep !== null) out.push({ invariant: TABLE_INVARIANT.once, message: "the table's create was acknowledged; it does not exist at the end", focus: ["table"] });
    return;
  }
  // Each bucket of the workload (in a partitioned table, each (partition, bucket)) is checked on its own.
  for (const [bucket, { partition }] of tables.buckets) {
    if (partition !== null && !tables.listed.has(bucket)) {
      // A partition is there once its add was acknowledged; one the run ended before adding has no buckets (and no writes: the clients wait for every partition).
      const added = tables.partitionsAdded.get(partition);
      if (added !== undefined) out.push({ invariant: TABLE_INVARIANT.once, message: `partition ${partition}'s add was acknowledged at step ${added}; its bucket ${bucket} does not exist at the end`, focus: [pathOf(history, bucket)] });
      continue;
    }
    const final = tables.final.get(bucket);
    const focus = [pathOf(history, bucket)];
    const reason = tables.unreadable.get(bucket);
    if (final === undefined) out.push({ invariant: TABLE_INVARIANT.liveness, message: `bucket ${bucket} was not read back: ${reason ?? "never read"}`, focus });
    else checkBucket(history, bucket, final, sink);
  }
  // A bucket the table has that the workload does not know is one that cannot be read back as the workload's.
  for (const [bucket, reason] of tables.unreadable) {
    if (!tables.buckets.has(bucket)) out.push({ invariant: TABLE_INVARIANT.liveness, message: reason, focus: [bucket] });
  }
}

/** A bucket's path (the trace's name for it), from its `bucketIdText`. */
function pathOf(history: History, bucket: string): string {
  return history.tables.buckets.get(bucket)?.path ?? bucket;
}

/** A producer told of a seq gap or a stale epoch: a lost write, unless a superseded incarnation answered. */
function checkAnomalies(history: History, sink: Sink): void {
  for (const anomaly of history.tables.anomalies) {
    const stale = superseded(history, anomaly.by, anomaly.step);
    const by = anomaly.by === null ? "?" : incarnationLabel(anomaly.by);
    (stale ? sink.notices : sink.out).push({
      invariant: stale ? TABLE_INVARIANT.staleAnswer : TABLE_INVARIANT.once,
      message: `table client ${anomaly.client} on bucket ${anomaly.bucket} at step ${anomaly.step}, answered by ${by}: ${anomaly.detail}`,
      focus: [pathOf(history, anomaly.bucket), anomaly.client],
      step: anomaly.step,
    });
  }
}

interface BucketCheck {
  readonly history: History;
  readonly bucket: string;
  readonly final: BucketFinal;
  readonly replayed: Replay;
  readonly writes: readonly TableWriteRecord[];
  /** Acknowledged writes whose records were found, with their index range in the changelog. */
  readonly placed: Map<TableWriteRecord, { readonly first: number; readonly end: number }>;
  readonly focus: readonly string[];
  readonly sink: Sink;
}

function checkBucket(history: History, bucket: string, final: BucketFinal, sink: Sink): void {
  const writes = history.tables.writes.filter((write) => write.bucket === bucket);
  const replayed = replay(final.changelog);
  const c: BucketCheck = { history, bucket, final, replayed, writes, placed: new Map(), focus: [pathOf(history, bucket)], sink };
  for (const error of replayed.errors) violation(c, TABLE_INVARIANT.changelog, `bucket ${bucket}, record ${error.index} at ${final.changelog[error.index]!.start}: ${error.message}`);
  checkRowsWritten(c);
  checkAcknowledged(c);
  checkRealTimeOrder(c);
  checkFinalLookup(c);
  checkLastWrites(c);
  checkNoops(c);
  checkLookups(c);
}

function violation(c: BucketCheck, invariant: string, message: string, focus: readonly string[] = [], step?: number): void {
  c.sink.out.push({ invariant, message, focus: [...c.focus, ...focus], ...(step === undefined ? {} : { step }) });
}

/** 1 and 2: every inserted or updated row is an upsert of this bucket; each write's upserts appear once (or, unsettled, at most once), all or none. */
function checkRowsWritten(c: BucketCheck): void {
  const upserts = new Map<number, { write: TableWriteRecord; row: SimRow }>();
  for (const write of c.writes) for (const op of write.ops) if (op.kind === "upsert") upserts.set(op.row.v, { write, row: op.row });
  const seen = new Map<number, number>();
  c.final.changelog.forEach((entry, index) => {
    if (entry.op !== "+I" && entry.op !== "+U") return;
    seen.set(entry.row.v, (seen.get(entry.row.v) ?? 0) + 1);
    const source = upserts.get(entry.row.v);
    if (source === undefined || !sameRow(source.row, entry.row)) {
      violation(c, TABLE_INVARIANT.changelog, `bucket ${c.bucket}, record ${index} at ${entry.start}: ${entry.op} ${JSON.stringify(entry.row)}, which no client wrote to it`);
    }
  });
  for (const write of c.writes) {
    const counts = write.ops.flatMap((op) => (op.kind === "upsert" ? [seen.get(op.row.v) ?? 0] : []));
    if (counts.length === 0) continue;
    const present = counts.filter((n) => n > 0).length;
    const must = write.outcome === "acked" || write.outcome === "duplicate";
    const wrong = counts.some((n) => n > 1) || (present > 0 && present < counts.length) || (must && present === 0) || (write.outcome === "noop" && present > 0);
    if (wrong) violation(c, TABLE_INVARIANT.once, `${describeWrite(write)}: its upserts appear ${counts.join(", ")} times in the changelog`, [write.client], write.answer?.step);
  }
}

/** 2: an acknowledged write's records end exactly where its answer said, and are its ops' images. */
function checkAcknowledged(c: BucketCheck): void {
  const { positions } = c.replayed;
  for (const write of c.writes) {
    if (write.outcome !== "acked" || write.ack === undefined) continue;
    const end = positions.indexOf(write.ack.end);
    const first = end - write.ack.count;
    const problem =
      end < 0 || first < 0
        ? `no ${write.ack.count} records end at ${write.ack.end} (the changelog ends at ${positions.at(-1) ?? 0})`
        : matchBatch(write.ops, c.final.changelog.slice(first, end), c.replayed, first);
    if (problem === null) c.placed.set(write, { first, end });
    else violation(c, TABLE_INVARIANT.once, `${describeWrite(write)}, acknowledged ending at ${write.ack.end}: ${problem}`, [write.client], write.answer?.step);
  }
}

/** The records of one batch, in op order: +I or -U/+U for an upsert, -D or (a missing key) nothing for a delete. */
function matchBatch(ops: readonly TableOp[], records: readonly ChangelogEntry[], replayed: Replay, first: number): string | null {
  let i = 0;
  for (const op of ops) {
    const record = records[i];
    if (op.kind === "upsert") {
      if (record?.op === "+I" && sameRow(record.row, op.row)) i += 1;
      else if (record?.op === "-U" && record.row.id === op.row.id && records[i + 1]?.op === "+U" && sameRow(records[i + 1]!.row, op.row)) i += 2;
      else return `its upsert of ${op.row.id}=${op.row.v} is not there (found ${describeRecords(records)})`;
    } else if (record?.op === "-D" && record.row.id === op.id) {
      i += 1;
    } else if (replayed.states[first + i]!.has(op.id)) {
      return `its delete of ${op.id}, which held a row, left no -D (found ${describeRecords(records)})`;
    }
  }
  return i === records.length ? null : `records beyond its ops: ${describeRecords(records.slice(i))}`;
}

/** 2: acknowledged writes never share records, and one sent after another's acknowledgement came lies after it. */
function checkRealTimeOrder(c: BucketCheck): void {
  const byFirst = [...c.placed.entries()].sort(([, a], [, b]) => a.first - b.first);
  for (let i = 1; i < byFirst.length; i++) {
    const [before, range] = byFirst[i - 1]!;
    const [after, next] = byFirst[i]!;
    if (next.first < range.end) violation(c, TABLE_INVARIANT.once, `${describeWrite(after)} and ${describeWrite(before)} were acknowledged over the same records`, [after.client, before.client]);
  }
  const placed = [...c.placed.entries()].sort(([a], [b]) => a.answer!.step - b.answer!.step);
  for (const [later, at] of placed) {
    for (const [earlier, before] of placed) {
      if (earlier.answer!.step >= later.sentStep) break;
      if (at.first < before.end) {
        violation(c, TABLE_INVARIANT.once, `${describeWrite(later)} sent at step ${later.sentStep} lies before ${describeWrite(earlier)} acknowledged at step ${earlier.answer!.step}`, [later.client, earlier.client], later.answer!.step);
        break;
      }
    }
  }
}

/** 3: the leader's final lookup of every key is the changelog replayed. */
function checkFinalLookup(c: BucketCheck): void {
  const last = c.replayed.states.at(-1)!;
  for (const [id, row] of c.final.rows) {
    if (!sameRow(row, last.get(id))) {
      violation(c, TABLE_INVARIANT.lookup, `bucket ${c.bucket}: ${incarnationLabel(c.final.by)} looked ${id} up as ${JSON.stringify(row)}; the changelog replayed gives ${JSON.stringify(last.get(id) ?? null)}`, [id]);
    }
  }
}

/**
 * 4: a key's final row is what one of its last settled writes (acknowledged, duplicate or no-op, with no
 * settled write to the key sent after its answer) left, or what a write of unknown outcome did.
 */
function checkLastWrites(c: BucketCheck): void {
  for (const [id, row] of c.final.rows) {
    const onKey = c.writes.filter((write) => write.ops.some((op) => keyOf(op) === id));
    // A no-op a superseded incarnation answered proves nothing (checkNoops reports it when it is false).
    const proves = (write: TableWriteRecord): boolean => write.answer !== undefined && !(write.outcome === "noop" && superseded(c.history, write.answer.by, write.answer.step));
    const settled = onKey.filter(proves);
    const last = settled.filter((write) => !settled.some((other) => other.sentStep > write.answer!.step));
    const candidates = [...last, ...onKey.filter((write) => !proves(write))];
    const allowed = candidates.map((write) => effectOn(write, id));
    if (settled.length === 0) allowed.push(null);
    if (!allowed.some((effect) => sameRow(effect, row))) {
      const what = last.map((write) => `${describeWrite(write)} (answered at step ${write.answer!.step})`).join("; ");
      violation(c, TABLE_INVARIANT.lastWrite, `bucket ${c.bucket}: ${id} ends as ${JSON.stringify(row)}; its last acknowledged writes: ${what || "none"}`, [id]);
    }
  }
}

/** 2: a no-op answer says every op's key already was as the op leaves it: some state between the writes acknowledged before it and those sent after it. */
function checkNoops(c: BucketCheck): void {
  for (const write of c.writes) {
    if (write.outcome !== "noop" || write.answer === undefined) continue;
    const { from, to } = window(c, write.answer.sentStep, write.answer.step);
    const matches = (state: ReadonlyMap<string, SimRow>): boolean => write.ops.every((op) => sameRow(state.get(keyOf(op)), effectOn(write, keyOf(op))));
    if (boundariesWhere(c.replayed, from, to, matches).length > 0) continue;
    const stale = superseded(c.history, write.answer.by, write.answer.step);
    const finding = {
      invariant: stale ? TABLE_INVARIANT.staleAnswer : TABLE_INVARIANT.once,
      message: `${describeWrite(write)} was answered by ${incarnationLabel(write.answer.by)} at step ${write.answer.step} as changing nothing; no state of the changelog between ${from} and ${to} agrees`,
      focus: [...c.focus, write.client],
      step: write.answer.step,
    };
    (stale ? c.sink.notices : c.sink.out).push(finding);
  }
}

/**
 * 5: a lookup's rows are one state of the changelog, at or after its minOffset, before any write sent after
 * its answer, and durable (in WAL objects that had landed) when it answered: never a row not yet acknowledged.
 */
function checkLookups(c: BucketCheck): void {
  const landed = c.history.writes.flatMap((write) => write.walData.filter((record) => record.streamId === c.final.streamId).map((record) => ({ ...record, step: write.step })));
  const durable = durableSteps(c.final.changelog, c.replayed, landed);
  for (const lookup of c.history.tables.lookups) {
    if (lookup.bucket !== c.bucket) continue;
    const { from, to } = window(c, lookup.sentStep, lookup.step);
    const matches = (state: ReadonlyMap<string, SimRow>): boolean => lookup.ids.every((id, i) => sameRow(state.get(id), lookup.rows[i]));
    const found = boundariesWhere(c.replayed, lookup.minOffset ?? 0, to, matches).filter((i) => durable[i]! <= lookup.step);
    const by = incarnationLabel(lookup.by);
    const what = `${lookup.client}'s lookup at step ${lookup.step} (minOffset ${lookup.minOffset ?? "none"}), answered by ${by}: ${JSON.stringify(lookup.rows)}`;
    if (found.length === 0) violation(c, TABLE_INVARIANT.reads, `bucket ${c.bucket}: ${what} is no state of the changelog in [${lookup.minOffset ?? 0}, ${to}] durable by then`, [lookup.client], lookup.step);
    else if (!found.some((i) => c.replayed.positions[i]! >= from)) {
      c.sink.notices.push({ invariant: TABLE_INVARIANT.staleRead, message: `bucket ${c.bucket}: ${what} is older than ${from}`, focus: [...c.focus, lookup.client], step: lookup.step });
    }
  }
}

/**
 * The changelog positions an operation sent at `sentStep` and answered at `answeredStep` may have seen: after
 * every write acknowledged before it was sent, before every acknowledged write sent after its answer.
 */
function window(c: BucketCheck, sentStep: number, answeredStep: number): { from: number; to: number } {
  let from = 0;
  let to = c.replayed.positions.at(-1) ?? 0;
  for (const [write, at] of c.placed) {
    if (write.answer!.step < sentStep) from = Math.max(from, c.replayed.positions[at.end]!);
    if (write.sentStep > answeredStep) to = Math.min(to, c.replayed.positions[at.first]!);
  }
  return { from, to };
}

const keyOf = (op: TableOp): string => (op.kind === "upsert" ? op.row.id : op.id);

/** What a write leaves at key `id`: its upsert's row, or nothing for a delete. */
function effectOn(write: TableWriteRecord, id: string): SimRow | null {
  const op = write.ops.find((candidate) => keyOf(candidate) === id);
  return op?.kind === "upsert" ? op.row : null;
}

function describeWrite(write: TableWriteRecord): string {
  const { epoch, seq } = write.producer;
  return `${write.client} b${write.bucket} e${epoch}.s${seq} (${write.outcome}: ${describeOps(write.ops)})`;
}

function describeRecords(records: readonly ChangelogEntry[]): string {
  return records.map((record) => `${record.op} ${record.row.id}=${record.row.v}`).join(", ") || "nothing";
}
