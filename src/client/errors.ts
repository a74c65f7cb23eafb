// The one error type the table client rejects with: the server's code (src/core/errors.ts, plus
// `not_leader`) or one of the client's own, the HTTP status (null when no answer came), whether a retry
// may succeed, the server's details, and whether the request may have been applied anyway.
import type { DomainError, DomainErrorCode } from "../core/errors.ts";

/** `network_error`: no answer at all; `bad_response`: an answer that is not mink's JSON. */
type ClientOnlyCode = "network_error" | "bad_response";
/** The codes the client knows; a newer server may send another one, kept as it came. */
export type TableErrorCode = DomainErrorCode | "not_leader" | ClientOnlyCode;

export type ErrorDetails = Readonly<Record<string, unknown>>;

interface TableClientErrorInit {
  readonly code: TableErrorCode | (string & Record<never, never>);
  readonly message: string;
  readonly status: number | null;
  readonly retryable: boolean;
  readonly details?: ErrorDetails | undefined;
  /** True when the request may have been applied although no success came back (a lost answer, a 5xx). */
  readonly outcomeUnknown?: boolean;
}

export class TableClientError extends Error {
  readonly code: TableErrorCode | (string & Record<never, never>);
  readonly status: number | null;
  readonly retryable: boolean;
  readonly details: ErrorDetails | undefined;
  readonly outcomeUnknown: boolean;

  constructor(init: TableClientErrorInit) {
    super(init.message);
    this.name = "TableClientError";
    this.code = init.code;
    this.status = init.status;
    this.retryable = init.retryable;
    this.details = init.details;
    this.outcomeUnknown = init.outcomeUnknown ?? false;
  }

  /** The same error, saying whether an earlier attempt of the same request may have been applied. */
  withOutcomeUnknown(outcomeUnknown: boolean): TableClientError {
    if (outcomeUnknown === this.outcomeUnknown) return this;
    return new TableClientError({ ...this.init(), outcomeUnknown });
  }

  private init(): TableClientErrorInit {
    return { code: this.code, message: this.message, status: this.status, retryable: this.retryable, details: this.details };
  }
}

/** One bucket's part of a write, as the bucket's leader acknowledged it. */
export interface BucketWriteResult {
  /** The partition's value in a partitioned table (as the table's rows hold it); null otherwise. */
  readonly partition: string | number | null;
  readonly bucket: number;
  readonly leaderEpoch: number;
  /** The bucket's stream offset after this part; null when a repeat (204) did not say it. */
  readonly nextOffset: string | null;
  readonly count: number;
  /** The leader had this part already (a retry of a lost answer): it was written once, earlier. */
  readonly duplicate: boolean;
}

/**
 * A write some of whose buckets failed: writes are atomic per bucket, not across buckets, so `written`
 * holds the parts that are in and `failed` the others. Code, status and details are the first failure's.
 */
export class TableWriteError extends TableClientError {
  readonly written: readonly BucketWriteResult[];
  /** The parts that failed, each partition by its value (null without partitions). */
  readonly failed: readonly { readonly partition: string | number | null; readonly bucket: number; readonly error: TableClientError }[];

  constructor(written: readonly BucketWriteResult[], failed: readonly { partition: string | number | null; bucket: number; error: TableClientError }[]) {
    const first = failed[0]!.error;
    super({
      code: first.code,
      message: `${failed.length} of ${failed.length + written.length} buckets failed: ${first.message}`,
      status: first.status,
      retryable: first.retryable,
      details: first.details,
      outcomeUnknown: failed.some((part) => part.error.outcomeUnknown),
    });
    this.name = "TableWriteError";
    this.written = written;
    this.failed = failed;
  }
}

/** A refusal before anything was sent: the core's check of a definition, a row or a key. */
export function localRefusal(error: DomainError): TableClientError {
  return new TableClientError({ code: error.code, message: error.message, status: null, retryable: false, details: error.details });
}

export function invalidInput(message: string, details?: ErrorDetails): TableClientError {
  return new TableClientError({ code: "invalid", message, status: null, retryable: false, details });
}

export function badResponse(message: string, status: number | null): TableClientError {
  return new TableClientError({ code: "bad_response", message, status, retryable: false });
}
