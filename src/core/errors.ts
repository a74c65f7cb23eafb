// The closed set of domain error codes. Core functions reject with one of these and the values a caller
// needs to recover; the edge (src/http/error-table.ts) maps each code to an HTTP status and says whether it
// is retryable. Nothing here knows about HTTP.

/** @public The closed set, as a value (the type below is derived from it). */
export const DOMAIN_ERROR_CODES = [
  /** The command or write carries an epoch older than the recorded one. Carries `currentEpoch`. */
  "stale_epoch",
  /** Another node holds the stream. Carries `owner` (node id) and, where known, its address. */
  "held_by",
  /** The stream is being transferred; retry against the target. Carries `target`. */
  "transfer_pending",
  /** No such stream, node or object. */
  "not_found",
  /** A create whose configuration differs from the existing one, or another state conflict (content type,
   * Stream-Seq regression, fork source deleted). Carries `reason`. */
  "conflict",
  /** The stream was deleted (or expired) but forks still read it: every direct operation is refused. */
  "gone",
  /** An append to a stream its writer closed (eof). Carries `tailOffset`, the stream's final offset. */
  "stream_closed",
  /** An idempotent producer writing with an epoch older than the recorded one. Carries `currentEpoch`. */
  "producer_stale_epoch",
  /** An idempotent producer skipped a sequence number. Carries `expectedSeq` and `receivedSeq`. */
  "producer_seq_gap",
  /** The request is malformed or violates a protocol rule. */
  "invalid",
  /** A body over the configured size limit. */
  "too_large",
  /** The node lost its WAL chain or lease and must not acknowledge; retry (the stream moves or reopens). */
  "fenced",
  /** A dependency (object store, metadata log) is unavailable; retry with backoff. */
  "unavailable",
  /** Missing or wrong credentials. */
  "unauthorized",
  /** Valid credentials that do not allow this operation on this stream (prefix or operation not granted). */
  "forbidden",
  /** A bound a client can reach (live readers, producers, subscriptions, streams per deployment) is full.
   * Carries `limit` (the setting's name) and `max`; the client retries later or frees something. */
  "limit_reached",
  /** A table bucket's request at a node that does not lead it. Carries `table`, `bucket`, `leader`, its
   * address `leaderAddr`, `leaderEpoch`, and `location` (the same request at the leader). */
  "not_leader",
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

export interface DomainError {
  code: DomainErrorCode;
  message: string;
  /** What the caller needs to recover: current epoch, owner, expected sequence, tail offset... */
  details?: Readonly<Record<string, string | number | boolean | null>>;
}

export function domainError(
  code: DomainErrorCode,
  message: string,
  details?: DomainError["details"],
): DomainError {
  return details === undefined ? { code, message } : { code, message, details };
}
