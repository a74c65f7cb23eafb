// The one table from domain error codes (src/core/errors.ts) to HTTP: status, whether a client may retry,
// and the headers a rejection carries (built from the error's details). Exhaustive by type: a new code
// does not compile until it has a row here.
import type { DomainError, DomainErrorCode } from "../core/errors.ts";
import { HEADER } from "../core/protocol/headers.ts";

interface ErrorRow {
  readonly status: number;
  readonly retryable: boolean;
  /** Response headers from the error's details. */
  readonly headers?: (details: NonNullable<DomainError["details"]>) => Record<string, string>;
}

const retryAfter = (): Record<string, string> => ({ "retry-after": "1" });

const ERROR_TABLE: { readonly [C in DomainErrorCode]: ErrorRow } = {
  invalid: { status: 400, retryable: false },
  too_large: { status: 413, retryable: false },
  not_found: { status: 404, retryable: false },
  gone: { status: 410, retryable: false },
  conflict: { status: 409, retryable: false },
  stream_closed: {
    status: 409,
    retryable: false,
    headers: (d) => ({
      [HEADER.streamClosed]: "true",
      ...(typeof d["tailOffset"] === "string" ? { [HEADER.streamNextOffset]: d["tailOffset"] } : {}),
    }),
  },
  producer_stale_epoch: {
    status: 403,
    retryable: false,
    headers: (d): Record<string, string> =>
      d["currentEpoch"] === undefined ? {} : { [HEADER.producerEpoch]: String(d["currentEpoch"]) },
  },
  producer_seq_gap: {
    status: 409,
    retryable: false,
    headers: (d) => ({
      ...(d["expectedSeq"] === undefined ? {} : { [HEADER.producerExpectedSeq]: String(d["expectedSeq"]) }),
      ...(d["receivedSeq"] === undefined ? {} : { [HEADER.producerReceivedSeq]: String(d["receivedSeq"]) }),
    }),
  },
  unauthorized: { status: 401, retryable: false, headers: () => ({ "www-authenticate": 'Bearer realm="mink"' }) },
  forbidden: { status: 403, retryable: false },
  limit_reached: { status: 429, retryable: true, headers: retryAfter },
  // Not protocol errors: the node cannot serve this right now; the client retries (after the router's
  // view catches up, the transfer settles, or the node restarts with a new epoch).
  stale_epoch: { status: 503, retryable: true, headers: retryAfter },
  held_by: { status: 503, retryable: true, headers: retryAfter },
  transfer_pending: { status: 503, retryable: true, headers: retryAfter },
  fenced: { status: 503, retryable: true, headers: retryAfter },
  unavailable: { status: 503, retryable: true, headers: retryAfter },
  // A redirect is what lets a plain HTTP client follow; the body carries the same facts for a client that
  // keeps a leader cache (docs/tables.md). 409 would claim the request conflicts with state, which it does not.
  not_leader: {
    status: 307,
    retryable: true,
    headers: (d): Record<string, string> => (typeof d["location"] === "string" ? { location: d["location"] } : {}),
  },
};

/** Status, headers and a short JSON body for a domain error: `{error: {code, message, retryable, details?}}`. */
export function errorResponseParts(error: DomainError): { status: number; headers: Record<string, string>; body: string } {
  const row = ERROR_TABLE[error.code];
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "cache-control": "no-store",
    ...(row.headers?.(error.details ?? {}) ?? {}),
  };
  const body = JSON.stringify({
    error: {
      code: error.code,
      message: error.message,
      retryable: row.retryable,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
  });
  return { status: row.status, headers, body };
}
