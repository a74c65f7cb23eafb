// The WAL writer of one node incarnation: group commit with up to `maxInFlight` WAL objects in flight.
//
// Appends queue up and go out together in the next object; a lone append on an idle writer costs one PUT.
// Each object takes the next seq and is written with `If-None-Match: *`; appends are acknowledged only after
// their object and every object below it landed, strictly in seq order. So a seq that never landed bounds
// what was acknowledged, which is what the seal relies on (wal-seal.ts, docs/storage-format.md table WS):
// a writer never issues a seq at or above its lowest unacknowledged one plus WAL_IN_FLIGHT_CAP.
//
// Batching follows the round trip: with nothing in flight an object goes out at once; with j objects in
// flight the next waits until its oldest append has waited j / `maxInFlight` of the observed round trip (or
// a full object is ready). The more are in flight, the longer the next one gathers: under steady load about
// sqrt(maxInFlight) objects are in flight, each carrying what arrived in that share of a round trip, so an
// append waits a fraction of a round trip for its PUT, and the PUT count (the CPU and R2's per-request
// price) stays near half of what one object per free slot would send.
//
// A `precondition_failed` means someone sealed the chain: the writer is fenced. A retryable failure is
// retried, but first the key is read back, because a conditional PUT whose answer was lost would collide
// with itself: our bytes there → it landed; other bytes → fenced. A failure at seq s rejects every append
// at or above s (queued, in flight, or landed above it) and the writer never issues again; objects below s
// are still acknowledged when they land.
//
// Bounds (docs/limits.md): one deadline per object (`batchDeadlineMs`) in place of counted, nested retries: the
// store calls of one object (PUTs, read-backs, the adapter's own retries) all stop when it passes. Its
// outcome is then unknown, exactly as after a PUT that kept failing: the writer stops, its appends get
// 503, and the node restarts at a new epoch whose seal settles whether the object landed (it is replayed
// if it did; nothing acknowledged is lost, nothing is written twice: the seq is taken by one or the
// other). `queuedBytes` counts what waits for its object, for the append path's backpressure.

import type { ObjectStore } from "./object-store.ts";
import { putCreateOnce } from "./create-once.ts";
import { resolveRetry, type ResolvedRetry, type RetryOptions } from "./retry-policy.ts";
import { walKey } from "./keys.ts";
import { InvalidRecordError, checkSafeU64, type WalRecord } from "./record-codec.ts";
import { WalFencedError, WalWriterFailedError, objectDeadline } from "./wal-writer-bounds.ts";
import { WAL_IN_FLIGHT_CAP, encodeWalObject, walObjectOverheadBytes, walRecordBytes } from "./wal-format.ts";

export type WalWriterState = "open" | "fenced" | "failed";

export interface WalWriterOptions extends RetryOptions {
  /** Soft bound on one WAL object's size; a backlog above it goes into several objects (default 8 MiB). */
  maxBatchBytes?: number;
  /**
   * How long one object may take to land, every retry included (WAL_BATCH_DEADLINE_MS). Set: retries are
   * bounded by it instead of by `maxAttempts`. Unset: `maxAttempts` alone (the sealer's tests).
   */
  batchDeadlineMs?: number;
  /** WAL objects in flight at once (WAL_MAX_IN_FLIGHT), 1 to WAL_IN_FLIGHT_CAP (default 8). */
  maxInFlight?: number;
  /** Milliseconds now, for the observed round trip (tests and the simulation pass their clock). */
  now?: () => number;
}

export interface WalWriterStats {
  objectsWritten: number;
  bytesWritten: number;
  recordsWritten: number;
  appendsAcknowledged: number;
  /** Retryable failures survived. */
  retries: number;
}

interface PendingAppend {
  records: readonly WalRecord[];
  bytes: number;
  queuedAtMs: number;
  resolve: (ack: { seq: number }) => void;
  reject: (error: unknown) => void;
}

export class WalWriter {
  readonly stats: WalWriterStats = { objectsWritten: 0, bytesWritten: 0, recordsWritten: 0, appendsAcknowledged: 0, retries: 0 };
  private readonly queue: PendingAppend[] = [];
  /** Objects issued and not yet acknowledged or rejected, by seq; `landed` once their PUT succeeded. */
  private readonly inFlight = new Map<number, { batch: PendingAppend[]; landed: boolean }>();
  private readonly retry: ResolvedRetry;
  private readonly maxBatchBytes: number;
  private readonly batchDeadlineMs: number | undefined;
  private readonly maxInFlight: number;
  private readonly now: () => number;
  private readonly overheadBytes: number;
  private pendingBytes = 0;
  /** Bytes of the appends in `queue` (not yet in an object): what the batching rule reads. */
  private waitingBytes = 0;
  private pumpQueued = false;
  private paceTimer: ReturnType<typeof setTimeout> | undefined;
  /** The seq the next object takes. */
  private issueSeq: number;
  /** Every seq below it is acknowledged. */
  private ackSeq: number;
  /** The lowest seq that failed: nothing at or above it is ever acknowledged. */
  private failedSeq = Number.POSITIVE_INFINITY;
  private roundTripMs = 0;
  private currentState: WalWriterState = "open";
  private stopError: Error | undefined;

  constructor(
    private readonly store: ObjectStore,
    readonly nodeId: string,
    readonly nodeEpoch: number,
    nextSeq: number,
    options: WalWriterOptions = {},
  ) {
    checkSafeU64(nodeEpoch, "nodeEpoch");
    walKey(nodeId, nextSeq); // validates the id and the seq
    this.issueSeq = nextSeq;
    this.ackSeq = nextSeq;
    this.batchDeadlineMs = options.batchDeadlineMs;
    // With a deadline, the deadline bounds the retries (docs/limits.md), not a count of attempts per layer.
    this.retry = resolveRetry(this.batchDeadlineMs === undefined ? options : { ...options, maxAttempts: Number.POSITIVE_INFINITY });
    this.maxBatchBytes = options.maxBatchBytes ?? 8 * 1024 * 1024;
    const maxInFlight = options.maxInFlight ?? 8;
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > WAL_IN_FLIGHT_CAP) {
      throw new RangeError(`maxInFlight must be an integer from 1 to ${WAL_IN_FLIGHT_CAP}, got ${maxInFlight}`);
    }
    this.maxInFlight = maxInFlight;
    this.now = options.now ?? (() => Date.now());
    this.overheadBytes = walObjectOverheadBytes(nodeId);
  }

  get state(): WalWriterState {
    return this.currentState;
  }

  /** Bytes of records appended and not yet acknowledged or rejected (queued and in flight). */
  get queuedBytes(): number {
    return this.pendingBytes;
  }

  /** The seq the next object takes (once stopped: the lowest seq this writer lost). */
  get nextSeq(): number {
    return this.currentState === "open" ? this.issueSeq : Math.min(this.issueSeq, this.failedSeq);
  }

  /** Objects issued and not yet acknowledged. */
  get objectsInFlight(): number {
    return this.inFlight.size;
  }

  /** The PUT round trip the batching follows (a moving average of the objects that landed), in ms. */
  get observedRoundTripMs(): number {
    return this.roundTripMs;
  }

  /**
   * Appends records atomically (they land in one object) and resolves with that object's seq once it and
   * every object below it landed. The caller must not mutate the records' bytes until the promise settles.
   */
  async append(records: readonly WalRecord[]): Promise<{ seq: number }> {
    if (this.stopError !== undefined) throw this.stopError;
    if (records.length === 0) throw new InvalidRecordError("an append needs at least one record");
    let bytes = 0;
    for (const record of records) bytes += walRecordBytes(record);
    this.pendingBytes += bytes;
    const acknowledged = new Promise<{ seq: number }>((resolve, reject) => {
      this.queue.push({ records, bytes, queuedAtMs: this.now(), resolve, reject });
      this.waitingBytes += bytes;
      this.schedulePump();
    });
    return acknowledged.finally(() => {
      this.pendingBytes -= bytes;
    });
  }

  /** One microtask lets appends issued in the same tick share an object; it adds no I/O wait. */
  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Issues objects while slots are free and the batching rule (the header) lets the next one go. */
  private pump(): void {
    while (this.queue.length > 0 && this.currentState === "open" && this.inFlight.size < this.maxInFlight) {
      const holdMs = this.holdMs();
      if (holdMs > 0) {
        this.paceTimer ??= setTimeout(() => {
          this.paceTimer = undefined;
          this.pump();
        }, holdMs);
        return;
      }
      this.issue(this.takeBatch());
    }
  }

  /** How much longer the queue should wait for more appends before the next object goes out (0: now): the header's rule. */
  private holdMs(): number {
    if (this.inFlight.size === 0) return 0;
    if (this.overheadBytes + this.waitingBytes >= this.maxBatchBytes) return 0;
    const waitedMs = this.now() - this.queue[0]!.queuedAtMs;
    return Math.ceil((this.roundTripMs * this.inFlight.size) / this.maxInFlight - waitedMs);
  }

  /** At least one append; more while the object stays within `maxBatchBytes`. */
  private takeBatch(): PendingAppend[] {
    let count = 1;
    let bytes = this.overheadBytes + this.queue[0]!.bytes;
    while (count < this.queue.length && bytes + this.queue[count]!.bytes <= this.maxBatchBytes) {
      bytes += this.queue[count]!.bytes;
      count++;
    }
    this.waitingBytes -= bytes - this.overheadBytes;
    return this.queue.splice(0, count);
  }

  private issue(batch: PendingAppend[]): void {
    const seq = this.issueSeq;
    const records = batch.flatMap((append) => append.records);
    let body: Uint8Array;
    try {
      body = encodeWalObject({ kind: "records", nodeId: this.nodeId, nodeEpoch: this.nodeEpoch, seq, records });
    } catch (error) {
      // Records validated at append time and changed since: only this batch fails, no seq is used.
      for (const append of batch) append.reject(error);
      return;
    }
    this.issueSeq = seq + 1;
    this.inFlight.set(seq, { batch, landed: false });
    this.write(seq, body, records.length).catch((error: unknown) => {
      // Not a store failure (those are handled in write): a bug. Stop rather than guess.
      this.stop("failed", new WalWriterFailedError(this.nodeId, seq, error), seq);
    });
  }

  private async write(seq: number, body: Uint8Array, recordCount: number): Promise<void> {
    const startedMs = this.now();
    let outcome: Awaited<ReturnType<typeof putCreateOnce>>;
    const deadline = this.batchDeadlineMs === undefined ? undefined : objectDeadline(seq, this.batchDeadlineMs);
    try {
      const put = putCreateOnce(this.store, walKey(this.nodeId, seq), body, this.retry, () => this.stats.retries++, deadline?.signal);
      outcome = await (deadline === undefined ? put : deadline.race(put));
    } catch (error) {
      this.stop("failed", new WalWriterFailedError(this.nodeId, seq, error), seq);
      return;
    } finally {
      deadline?.clear();
    }
    if (outcome.kind === "exists") {
      this.stop("fenced", new WalFencedError(this.nodeId, seq), seq);
      return;
    }
    const entry = this.inFlight.get(seq);
    if (entry === undefined) return; // rejected already: a failure below it
    entry.landed = true;
    const tookMs = Math.max(0, this.now() - startedMs);
    this.roundTripMs = this.stats.objectsWritten === 0 ? tookMs : 0.8 * this.roundTripMs + 0.2 * tookMs;
    this.stats.objectsWritten++;
    this.stats.bytesWritten += body.byteLength;
    this.stats.recordsWritten += recordCount;
    this.acknowledgeInOrder();
    this.pump();
  }

  /** Resolves the appends of every landed object whose objects below all landed, in seq order. */
  private acknowledgeInOrder(): void {
    for (let entry = this.inFlight.get(this.ackSeq); entry?.landed === true && this.ackSeq < this.failedSeq; entry = this.inFlight.get(this.ackSeq)) {
      this.inFlight.delete(this.ackSeq);
      this.stats.appendsAcknowledged += entry.batch.length;
      for (const append of entry.batch) append.resolve({ seq: this.ackSeq });
      this.ackSeq++;
    }
  }

  /**
   * Object `seq` failed: rejects every append at or above it (in flight, landed above it, and queued), and
   * every later append, with the first error; objects below it are still acknowledged when they land.
   */
  private stop(state: "fenced" | "failed", error: Error, seq: number): void {
    if (this.currentState === "open") {
      this.currentState = state;
      this.stopError = error;
      if (this.paceTimer !== undefined) clearTimeout(this.paceTimer);
      this.paceTimer = undefined;
    }
    this.failedSeq = Math.min(this.failedSeq, seq);
    const stopError = this.stopError ?? error;
    const rejected: PendingAppend[] = [];
    for (const [issued, entry] of this.inFlight) {
      if (issued < seq) continue;
      this.inFlight.delete(issued);
      rejected.push(...entry.batch);
    }
    this.waitingBytes = 0;
    for (const append of [...rejected, ...this.queue.splice(0)]) append.reject(stopError);
  }
}
