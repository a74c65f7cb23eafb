// What the table workload recorded (docs/simulation.md, "Tables"): the create, every bucket write with its
// producer (epoch, seq), its attempts and what its answer proved, the lookups made while the run went on,
// and each bucket's changelog and final lookup read back after the run settled. table-checker.ts reads it.

/** The incarnation that answered (history.ts's IncarnationId; declared here so the two modules form no cycle). */
export interface Answerer {
  readonly nodeId: string;
  readonly epoch: number;
}

/**
 * A row of the simulated table: `id` is the primary key (with the partition `p`, when the table is
 * partitioned: within one bucket every row has the same `p`, so `id` names a key there), `v` unique per
 * upsert in the run.
 */
export interface SimRow {
  readonly p?: number;
  readonly id: string;
  readonly v: number;
}

export type TableOp = { readonly kind: "upsert"; readonly row: SimRow } | { readonly kind: "delete"; readonly id: string };

export type TableWriteOutcome =
  /** 200 with Producer-Seq: its records end at `ack.end` of the bucket's changelog. */
  | "acked"
  /** 200 without Producer-Seq: the ops changed nothing when they were decided (the seq was not taken). */
  | "noop"
  /** 204: an earlier attempt of this (epoch, seq) was written; in the changelog once. */
  | "duplicate"
  /** No definite answer yet: in the changelog at most once. */
  | "unknown"
  /** Given up on (the client moved to a new producer epoch): in the changelog at most once. */
  | "abandoned";

export interface TableWriteRecord {
  readonly id: number;
  readonly client: string;
  /** The bucket's `bucketIdText` (`<bucket>`, or `<partition key>/<bucket>`). */
  readonly bucket: string;
  readonly ops: readonly TableOp[];
  readonly producer: { readonly id: string; readonly epoch: number; readonly seq: number };
  /** The step its first attempt was sent at. */
  readonly sentStep: number;
  outcome: TableWriteOutcome;
  /** The step the answer that settled it (acked, noop, duplicate) came at, and who gave it. */
  answer?: { readonly step: number; readonly sentStep: number; readonly by: Answerer };
  /** For an acked write: the changelog position its records end at, and how many records it made. */
  ack?: { readonly end: number; readonly count: number };
  readonly attempts: string[];
}

/** A lookup made during the run, `rows[i]` the answer for `ids[i]`. */
export interface TableLookupRecord {
  readonly client: string;
  readonly bucket: string;
  readonly ids: readonly string[];
  readonly minOffset: number | null;
  readonly rows: readonly (SimRow | null)[];
  readonly sentStep: number;
  readonly step: number;
  readonly by: Answerer;
}

/** One changelog record as read back, with the stream positions it occupies. */
export interface ChangelogEntry {
  readonly op: string;
  readonly row: SimRow;
  readonly start: number;
  readonly end: number;
}

/** A bucket read back after the run: its whole changelog, then a lookup of every key at its leader. */
export interface BucketFinal {
  /** The bucket's stream (its WAL records show when each record became durable). */
  readonly streamId: string;
  readonly changelog: readonly ChangelogEntry[];
  readonly rows: ReadonlyMap<string, SimRow | null>;
  readonly by: Answerer;
}

/** A producer answer only a lost write (or a stale answerer) explains: a seq gap, a stale epoch. */
export interface TableAnomaly {
  readonly client: string;
  readonly bucket: string;
  readonly step: number;
  readonly detail: string;
  readonly by: Answerer | null;
}

export class TableHistory {
  /** The step the create was first acknowledged at (null: never). */
  createdStep: number | null = null;
  readonly writes: TableWriteRecord[] = [];
  readonly lookups: TableLookupRecord[] = [];
  readonly anomalies: TableAnomaly[] = [];
  /** The buckets of the workload by `bucketIdText`: their paths and keys (set when the final read starts). */
  buckets: ReadonlyMap<string, { readonly path: string; readonly partition: string | null; readonly ids: readonly string[] }> = new Map();
  /** The partitions (by key) whose add was acknowledged, and the step it first was. */
  readonly partitionsAdded = new Map<string, number>();
  /** The buckets (`bucketIdText`) the metadata log listed when the final read began. */
  readonly listed = new Set<string>();
  /** Whether the table is partitioned (each (partition, bucket) is one bucket here). */
  partitioned = false;
  readonly final = new Map<string, BucketFinal>();
  /** Buckets whose final read did not complete, and why. */
  readonly unreadable = new Map<string, string>();
  /** Whether the table was found in the metadata log when the final read began. */
  existsAtEnd = false;

  newWrite(input: Omit<TableWriteRecord, "id" | "outcome" | "attempts">): TableWriteRecord {
    const record: TableWriteRecord = { ...input, id: this.writes.length + 1, outcome: "unknown", attempts: [] };
    this.writes.push(record);
    return record;
  }
}
