// How a WAL writer stops: the errors its appends reject with, and the deadline each of its objects has.

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

/** A WAL object that did not land within its deadline: its outcome is unknown (a seal settles it). */
export class WalDeadlineError extends Error {
  override readonly name = "WalDeadlineError";
  constructor(readonly seq: number, readonly deadlineMs: number) {
    super(`WAL object seq ${seq} did not land within ${deadlineMs} ms (WAL_BATCH_DEADLINE_MS)`);
  }
}

export interface ObjectDeadline {
  readonly signal: AbortSignal;
  readonly clear: () => void;
  readonly race: <T>(work: Promise<T>) => Promise<T>;
}

/**
 * The object's deadline: a signal that aborts (with a WalDeadlineError) once `deadlineMs` (WAL_BATCH_DEADLINE_MS) passed,
 * telling the store calls to stop, and `race`, which gives up waiting at that moment even if a call does
 * not heed the signal (a PUT that hangs). What the abandoned call does later is the seal's to settle.
 */
export function objectDeadline(seq: number, deadlineMs: number): ObjectDeadline {
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
