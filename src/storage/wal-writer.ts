// The WAL writer of one node incarnation: group commit with exactly one WAL PUT in flight.
//
// Appends queue up while a PUT is in flight and go out together in the next object, so PUTs stay far
// below one per append under load, while a lone append on an idle writer costs one PUT. Each object takes
// the next dense seq and is written with `If-None-Match: *`; appends are acknowledged only after their
// object landed, strictly in seq order. Why only one in flight: with pipelining, seq n+1 could land after
// seq n failed, leaving a hole with data above it, and a sealer (who claims the lowest free seq) could then
// seal below live data. One in flight keeps the chain dense, so its end is exactly the lowest free seq.
//
// A `precondition_failed` means someone sealed the chain: the writer is fenced and never acknowledges
// again. A retryable failure is retried, but first the key is read back, because a conditional PUT whose
// answer was lost would collide with itself: our bytes there → it landed; other bytes → fenced.
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
import { encodeWalObject, walObjectOverheadBytes, walRecordBytes } from "./wal-format.ts";

/** The chain was sealed by someone else: this writer must never acknowledge again. */
export class WalFencedError extends Error {
  override readonly name = "WalFencedError";
  readonly code = "fenced";
  constructor(
    readonly nodeId: string,
    /** The seq this writer lost. */
    readonly seq: number,
  ) {
    super(`WAL chain of ${nodeId} was sealed at or below seq ${seq}: writer fenced`);
  }
}

/** The store kept failing (or failed fatally); the node must restart with a new epoch and seal. */
export class WalWriterFailedError extends Error {
  override readonly name = "WalWriterFailedError";
  readonly code = "unavailable";
  constructor(
    readonly nodeId: string,
    /** The seq whose outcome is unknown: the object may or may not have landed (a seal settles it). */
    readonly inDoubtSeq: number,
    cause: unknown,
  ) {
    super(`WAL write of ${nodeId} seq ${inDoubtSeq} failed; writer stopped`, { cause });
  }
}

export type WalWriterState = "open" | "fenced" | "failed";

export interface WalWriterOptions extends RetryOptions {
  /** Soft bound on one WAL object's size; a backlog above it goes into several objects (default 8 MiB). */
  maxBatchBytes?: number;
  /**
   * How long one object may take to land, every retry included (WAL_BATCH_DEADLINE_MS). Set: retries are
   * bounded by it instead of by `maxAttempts`. Unset: `maxAttempts` alone (the sealer's tests).
   */
  batchDeadlineMs?: number;
}

/** A WAL object that did not land within its deadline: its outcome is unknown (a seal settles it). */
export class WalDeadlineError extends Error {
  override readonly name = "WalDeadlineError";
  constructor(readonly seq: number, readonly deadlineMs: number) {
    super(`WAL object seq ${seq} did not land within ${deadlineMs} ms (WAL_BATCH_DEADLINE_MS)`);
  }
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
  resolve: (ack: { seq: number }) => void;
  reject: (error: unknown) => void;
}

export class WalWriter {
  readonly stats: WalWriterStats = { objectsWritten: 0, bytesWritten: 0, recordsWritten: 0, appendsAcknowledged: 0, retries: 0 };
  private readonly queue: PendingAppend[] = [];
  private readonly retry: ResolvedRetry;
  private readonly maxBatchBytes: number;
  private readonly batchDeadlineMs: number | undefined;
  private readonly overheadBytes: number;
  private pendingBytes = 0;
  private flushing = false;
  private seq: number;
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
    this.seq = nextSeq;
    this.batchDeadlineMs = options.batchDeadlineMs;
    // With a deadline, the deadline bounds the retries (docs/limits.md), not a count of attempts per layer.
    this.retry = resolveRetry(this.batchDeadlineMs === undefined ? options : { ...options, maxAttempts: Number.POSITIVE_INFINITY });
    this.maxBatchBytes = options.maxBatchBytes ?? 8 * 1024 * 1024;
    this.overheadBytes = walObjectOverheadBytes(nodeId);
  }

  get state(): WalWriterState {
    return this.currentState;
  }

  /** Bytes of records appended and not yet acknowledged or rejected (queued and in flight). */
  get queuedBytes(): number {
    return this.pendingBytes;
  }

  /** The seq the next object takes (after fencing: the seq this writer lost). */
  get nextSeq(): number {
    return this.seq;
  }

  /**
   * Appends records atomically (they land in one object) and resolves with that object's seq once it
   * landed. The caller must not mutate the records' bytes until the promise settles.
   */
  async append(records: readonly WalRecord[]): Promise<{ seq: number }> {
    if (this.stopError !== undefined) throw this.stopError;
    if (records.length === 0) throw new InvalidRecordError("an append needs at least one record");
    let bytes = 0;
    for (const record of records) bytes += walRecordBytes(record);
    this.pendingBytes += bytes;
    const acknowledged = new Promise<{ seq: number }>((resolve, reject) => {
      this.queue.push({ records, bytes, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        void this.flushLoop();
      }
    });
    return acknowledged.finally(() => {
      this.pendingBytes -= bytes;
    });
  }

  private async flushLoop(): Promise<void> {
    // One microtask lets appends issued in the same tick share the first object; it adds no I/O wait.
    await Promise.resolve();
    try {
      while (this.queue.length > 0 && this.currentState === "open") {
        const batch = this.takeBatch();
        try {
          await this.writeNext(batch);
        } catch (error) {
          // Not a store failure (those are handled in writeNext): a bug. Stop rather than guess.
          this.stop("failed", new WalWriterFailedError(this.nodeId, this.seq, error), batch);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** At least one append; more while the object stays within `maxBatchBytes`. */
  private takeBatch(): PendingAppend[] {
    let count = 1;
    let bytes = this.overheadBytes + this.queue[0]!.bytes;
    while (count < this.queue.length && bytes + this.queue[count]!.bytes <= this.maxBatchBytes) {
      bytes += this.queue[count]!.bytes;
      count++;
    }
    return this.queue.splice(0, count);
  }

  private async writeNext(batch: PendingAppend[]): Promise<void> {
    const seq = this.seq;
    const records = batch.flatMap((append) => append.records);
    let body: Uint8Array;
    try {
      body = encodeWalObject({ kind: "records", nodeId: this.nodeId, nodeEpoch: this.nodeEpoch, seq, records });
    } catch (error) {
      // Records validated at append time and changed since: only this batch fails, no seq is used.
      for (const append of batch) append.reject(error);
      return;
    }
    let outcome: Awaited<ReturnType<typeof putCreateOnce>>;
    const deadline = this.deadline(seq);
    try {
      const put = putCreateOnce(this.store, walKey(this.nodeId, seq), body, this.retry, () => this.stats.retries++, deadline?.signal);
      outcome = await (deadline === undefined ? put : deadline.race(put));
    } catch (error) {
      this.stop("failed", new WalWriterFailedError(this.nodeId, seq, error), batch);
      return;
    } finally {
      deadline?.clear();
    }
    if (outcome.kind === "exists") {
      this.stop("fenced", new WalFencedError(this.nodeId, seq), batch);
      return;
    }
    this.seq = seq + 1;
    this.stats.objectsWritten++;
    this.stats.bytesWritten += body.byteLength;
    this.stats.recordsWritten += records.length;
    this.stats.appendsAcknowledged += batch.length;
    for (const append of batch) append.resolve({ seq });
  }

  /**
   * The object's deadline: a signal that aborts (with a WalDeadlineError) once `batchDeadlineMs` passed,
   * telling the store calls to stop, and `race`, which gives up waiting at that moment even if a call does
   * not heed the signal (a PUT that hangs). What the abandoned call does later is the seal's to settle.
   */
  private deadline(seq: number): { signal: AbortSignal; clear: () => void; race: <T>(work: Promise<T>) => Promise<T> } | undefined {
    const deadlineMs = this.batchDeadlineMs;
    if (deadlineMs === undefined) return undefined;
    const controller = new AbortController();
    let expire: ((error: WalDeadlineError) => void) | undefined;
    const expired = new Promise<never>((_, reject) => (expire = reject));
    expired.catch(() => undefined);
    // The error is made when the deadline passes, not per object: capturing a stack costs more than the rest.
    const timer = setTimeout(() => {
      const error = new WalDeadlineError(seq, deadlineMs);
      controller.abort(error);
      expire?.(error);
    }, deadlineMs);
    return {
      signal: controller.signal,
      clear: () => clearTimeout(timer),
      race: (work) => {
        work.catch(() => undefined); // abandoned at the deadline: its failure is no longer anyone's
        return Promise.race([work, expired]);
      },
    };
  }

  /** Rejects the batch in flight and everything queued; every later append rejects with the same error. */
  private stop(state: "fenced" | "failed", error: Error, batch: PendingAppend[]): void {
    if (this.currentState === "open") {
      this.currentState = state;
      this.stopError = error;
    }
    const stopError = this.stopError ?? error;
    for (const append of [...batch, ...this.queue.splice(0)]) append.reject(stopError);
  }
}
