// The recorded history of one run: what clients asked and heard, what nodes started and ended, what the
// metadata log accepted and what the object store took. The checker (checker.ts) reads only this (and the
// final read-back), never the live system.
import type { LogEntry, MetaState } from "../../src/core/meta/index.ts";
import { SubscriptionHistory } from "./subscription-history.ts";
import { TableHistory } from "./table-history.ts";

export interface IncarnationId {
  readonly nodeId: string;
  readonly epoch: number;
}

/** Virtual time starts here; node epochs (wall-clock ms at start) are printed relative to it. */
export const EPOCH_BASE_MS = 1_750_000_000_000;

export const incarnationLabel = (id: IncarnationId): string => `${id.nodeId}@${id.epoch - EPOCH_BASE_MS}`;

/** What the metadata log said about a stream at one moment. */
export interface Ownership {
  readonly streamId: string | null;
  readonly name: string | null;
  readonly ownership: string | null;
  readonly owner: string | null;
  readonly epoch: number | null;
  /** The incarnation whose OpenStream is the stream's latest (null: never opened). */
  readonly opener: IncarnationId | null;
  /** Re-led away from a dead incarnation that has not been taken over yet (ReassignStreams). */
  readonly orphanOf: { readonly node: string; readonly nodeEpoch: number } | null;
}

export interface AckRecord {
  readonly step: number;
  /** Virtual time the answer reached the client. */
  readonly ms: number;
  /** The incarnation that answered. */
  readonly by: IncarnationId;
  readonly start: number;
  readonly end: number;
  /** What the log said about the stream when the answer reached the client (its stream id, mostly). */
  readonly ownership: Ownership;
}

export type AppendOutcome =
  /** Acknowledged as new data at [start, end). */
  | "acked"
  /** Acknowledged as a duplicate of an earlier attempt (idempotent producer): present once, somewhere. */
  | "duplicate"
  /** No definite answer (an error that may follow a landed write, a lost connection): present at most once. */
  | "unknown"
  /** Refused before anything was written (404): absent. */
  | "rejected";

export interface AppendRecord {
  readonly id: number;
  readonly client: string;
  readonly stream: string;
  /** The bytes sent, unique in the run. */
  readonly token: string;
  readonly producer: { readonly id: string; readonly epoch: number; readonly seq: number } | null;
  /** The step its first attempt was sent at. */
  readonly sentStep: number;
  /** Virtual time its first attempt was sent at. */
  readonly sentMs: number;
  outcome: AppendOutcome;
  ack?: AckRecord;
  /** The step a duplicate answer (204) reached the client. */
  duplicateStep?: number;
  /** The answers of every attempt, for the trace. */
  readonly attempts: string[];
}

export interface ReadRecord {
  readonly client: string;
  readonly stream: string;
  readonly mode: "catch-up" | "long-poll" | "final";
  readonly start: number;
  readonly next: number;
  readonly bytes: string;
  /** The answer said Stream-Up-To-Date: `next` was the tail when it was read. */
  readonly upToDate: boolean;
  /** The step and virtual time the request was sent at. */
  readonly sentStep: number;
  readonly sentMs: number;
  /** The step the request reached the node that answered it (null: unknown). */
  readonly arrivedStep: number | null;
  /** The step and virtual time the answer reached the client. */
  readonly step: number;
  readonly answeredMs: number;
  readonly by: IncarnationId;
}

/** A long-poll that ended without data (204). */
export interface EmptyPollRecord {
  readonly client: string;
  readonly stream: string;
  readonly offset: number;
  readonly next: number;
  readonly sentStep: number;
  readonly sentMs: number;
  readonly answeredStep: number;
  readonly answeredMs: number;
  readonly by: IncarnationId;
}

export interface CreateRecord {
  readonly client: string;
  readonly stream: string;
  readonly status: number;
  readonly step: number;
}

/** An accepted metadata log entry and the state it was applied to. */
export interface JournalRecord {
  readonly step: number;
  readonly entry: LogEntry;
  readonly before: MetaState;
}

/** A data record of a WAL object that landed, with what the log said about its stream at that moment. */
export interface WalDataRecord {
  readonly streamId: string;
  readonly streamEpoch: number;
  readonly firstOffset: number;
  readonly text: string;
  readonly ownership: Ownership;
}

/** An object-store write that took effect. */
export interface StoreWrite {
  readonly step: number;
  /** The incarnation that wrote it. */
  readonly owner: string;
  readonly key: string;
  readonly body: Uint8Array;
  /** For a manifest: what the metadata log said about the stream when the write landed. */
  readonly manifestOf: Ownership | null;
  /** For a WAL object holding data: its data records. */
  readonly walData: readonly WalDataRecord[];
}

/** A producer answer that only a lost or reordered append could explain (a seq gap, a stale epoch). */
export interface ProducerAnomaly {
  readonly client: string;
  readonly stream: string;
  readonly step: number;
  readonly detail: string;
  /** The incarnation that answered. */
  readonly by: IncarnationId | null;
}

/**
 * A stream's acknowledged state moving on at a node (an append acknowledged, or a close), seen by an
 * observer the simulation adds to each incarnation (cluster.ts), in acknowledgement order: the checker maps
 * each to the WAL object holding the bytes that end at `tail`.
 */
export interface AcknowledgedRecord {
  readonly by: IncarnationId;
  readonly stream: string;
  /** The stream's tail after it, in bytes. */
  readonly tail: number;
  readonly step: number;
}

/** Something only a bug explains, found while the run goes on (a corrupt WAL at start): the seed stops there. */
export interface FatalRecord {
  readonly step: number;
  readonly message: string;
  readonly focus: readonly string[];
}

export interface IncarnationRecord {
  readonly id: IncarnationId;
  readonly startedStep: number;
  endedStep: number | null;
  end: string | null;
}

export class History {
  readonly appends: AppendRecord[] = [];
  readonly reads: ReadRecord[] = [];
  readonly emptyPolls: EmptyPollRecord[] = [];
  readonly creates: CreateRecord[] = [];
  readonly journal: JournalRecord[] = [];
  readonly writes: StoreWrite[] = [];
  /** Every object delete that took effect (a WAL clean-up, a collection): the step and the key. */
  readonly deletes: { readonly step: number; readonly key: string }[] = [];
  readonly producerAnomalies: ProducerAnomaly[] = [];
  readonly incarnations: IncarnationRecord[] = [];
  /** Every acknowledgement at a node, in the order they happened (cluster.ts). */
  readonly acknowledged: AcknowledgedRecord[] = [];
  /** The first finding that stops the run early (null: none). */
  fatal: FatalRecord | null = null;
  /** Final content per stream name (null: the stream does not exist at the end). */
  readonly finalContent = new Map<string, string | null>();
  /** Streams whose final read did not complete. */
  readonly unreadable = new Map<string, string>();

  /** The table workload's writes, lookups and final read-back (empty when the seed has no tables). */
  readonly tables = new TableHistory();

  /** The subscription book's rows, the consumers' offers and acks (empty when the seed has no subscriptions). */
  readonly subscriptions = new SubscriptionHistory();

  /** Event counts (coverage: how often the run reached each interesting situation). */
  readonly counts = new Map<string, number>();

  count(event: string): void {
    this.counts.set(event, (this.counts.get(event) ?? 0) + 1);
  }

  newAppend(input: Omit<AppendRecord, "id" | "outcome" | "attempts">): AppendRecord {
    const record: AppendRecord = { ...input, id: this.appends.length + 1, outcome: "unknown", attempts: [] };
    this.appends.push(record);
    return record;
  }
}

/**
 * An incarnation answering after a newer one of its node started is a zombie: it has not noticed, and
 * answers what appends nothing (a producer's duplicate or gap, a read) from its own, older state.
 */
export function superseded(history: History, by: IncarnationId | null, step: number): boolean {
  if (by === null) return false;
  return history.incarnations.some((inc) => inc.id.nodeId === by.nodeId && inc.id.epoch > by.epoch && inc.startedStep <= step);
}
