// Append (POST) as one decision table: `parseAppendRequest` holds everything that needs no stream (400s
// and 413), `decideAppend` everything that needs the stream as its owner sees it, in the spec's order of
// precedence: closed stream, content type, body (JSON), producer, Stream-Seq. The owner then assigns
// offsets, makes the append durable, and commits the returned producer state and Stream-Seq with it.
import { domainError, type DomainError } from "../errors.ts";
import { parseStreamClosedHeader } from "./closure.ts";
import { isJsonContentType, parseContentTypeHeader, sameMediaType } from "./content-type.ts";
import { splitJsonBody } from "./json-mode.ts";
import { formatOffset } from "./offsets.ts";
import { fail, ok, type Parsed } from "./parsed.ts";
import {
  admitProducer,
  checkProducer,
  UNBOUNDED_PRODUCERS,
  type ProducerLimits,
  parseProducerHeaders,
  type ProducerRequest,
  type ProducerState,
  type ProducerTable,
} from "./producer.ts";
import { checkStreamSeq, parseStreamSeqHeader } from "./stream-seq.ts";

/** The POST headers the protocol reads (null: absent). */
export interface AppendHeaders {
  readonly contentType: string | null;
  readonly closed: string | null;
  readonly streamSeq: string | null;
  readonly producerId: string | null;
  readonly producerEpoch: string | null;
  readonly producerSeq: string | null;
}

export interface AppendRequest {
  readonly bodyLengthBytes: number;
  /** Null only for a close-only request (empty body), where it is ignored. */
  readonly contentType: string | null;
  readonly close: boolean;
  readonly producer: ProducerRequest | null;
  readonly streamSeq: string | null;
}

/** Stateless checks of a POST, in order: size, empty body, producer headers, Content-Type, Stream-Seq. */
export function parseAppendRequest(
  headers: AppendHeaders,
  bodyLengthBytes: number,
  maxBodyBytes: number,
): Parsed<AppendRequest> {
  if (bodyLengthBytes > maxBodyBytes) {
    return fail("too_large", "the request body is over the size limit", { maxBytes: maxBodyBytes });
  }
  const close = parseStreamClosedHeader(headers.closed);
  if (bodyLengthBytes === 0 && !close) {
    return fail("invalid", "an append needs a body (an empty body is allowed only with Stream-Closed: true)");
  }
  const producer = parseProducerHeaders(headers.producerId, headers.producerEpoch, headers.producerSeq);
  if (!producer.ok) return producer;
  let contentType: string | null = null;
  if (bodyLengthBytes > 0) {
    const parsed = parseContentTypeHeader(headers.contentType);
    if (!parsed.ok) return parsed;
    if (parsed.value === null) return fail("invalid", "an append with a body needs a Content-Type");
    contentType = parsed.value;
  }
  const streamSeq = parseStreamSeqHeader(headers.streamSeq);
  if (!streamSeq.ok) return streamSeq;
  return ok({ bodyLengthBytes, contentType, close, producer: producer.value, streamSeq: streamSeq.value });
}

/** The stream as its owner sees it when the append is decided (serialized per stream). */
export interface AppendTarget {
  readonly contentType: string;
  readonly eof: boolean;
  readonly tailPositionBytes: number;
  readonly producers: ProducerTable;
  readonly lastStreamSeq: string | null;
  /** The bounds on the stream's producers (default: none). */
  readonly producerLimits?: ProducerLimits;
  /** MAX_JSON_MESSAGES: messages one JSON append may hold (default: no bound). */
  readonly maxJsonMessages?: number;
}

/** For the owner to record with the append, atomically with it. */
interface ProducerCommit {
  readonly producerId: string;
  readonly state: ProducerState;
  /** Idle producers to drop first (PRD-12), recorded with the append so a replay drops them too. */
  readonly pruned: readonly string[];
}

export type AppendDecision =
  /**
   * Append the body (JSON: `messages`, each stored with its terminator) and, if `close`, close the
   * stream in the same step. Success is 200 when the request had producer headers, else 204.
   */
  | {
      readonly kind: "append";
      readonly close: boolean;
      readonly messages: string[] | null;
      readonly producer: ProducerCommit | null;
      readonly lastStreamSeq: string | null;
    }
  /** Close-only on an open stream: close without data (204), recording the producer if any. */
  | { readonly kind: "close"; readonly producer: ProducerCommit | null }
  /** Close-only on an already closed stream without producer headers: idempotent success (204). */
  | { readonly kind: "already-closed" }
  /** A producer retry of data already appended: success without appending (204). */
  | { readonly kind: "duplicate"; readonly epoch: number; readonly lastSeq: number; readonly eof: boolean }
  | { readonly kind: "reject"; readonly error: DomainError };

/**
 * The append table (docs/protocol-rules.md, APP/CLS/PRD/SEQ rows). `bodyText` is the body decoded as
 * UTF-8; it is read only when the stream is JSON and the body is not empty (null there is refused).
 */
export function decideAppend(
  target: AppendTarget,
  request: AppendRequest,
  bodyText: string | null,
  nowMs: number,
): AppendDecision {
  const hasBody = request.bodyLengthBytes > 0;

  if (target.eof) {
    if (request.producer !== null) {
      const check = checkProducer(target.producers, request.producer, nowMs);
      if (check.kind === "duplicate") {
        return { kind: "duplicate", epoch: check.epoch, lastSeq: check.lastSeq, eof: true };
      }
      if (check.kind === "reject" && check.error.code === "producer_stale_epoch") return rejectWith(check.error);
    } else if (!hasBody) {
      return { kind: "already-closed" };
    }
    return rejectWith(
      domainError("stream_closed", "the stream is closed", { tailOffset: formatOffset(target.tailPositionBytes) }),
    );
  }

  let messages: string[] | null = null;
  if (hasBody) {
    if (request.contentType === null || !sameMediaType(request.contentType, target.contentType)) {
      return rejectWith(
        domainError("conflict", "Content-Type does not match the stream's", {
          reason: "content_type",
          streamContentType: target.contentType,
        }),
      );
    }
    if (isJsonContentType(target.contentType)) {
      if (bodyText === null) return rejectWith(domainError("invalid", "a JSON body must be UTF-8 text"));
      const split = splitJsonBody(bodyText, "append", target.maxJsonMessages);
      if (!split.ok) return rejectWith(split.error);
      messages = split.value;
    }
  }

  let producer: ProducerCommit | null = null;
  if (request.producer !== null) {
    const limits = target.producerLimits ?? UNBOUNDED_PRODUCERS;
    const check = checkProducer(target.producers, request.producer, nowMs, limits);
    if (check.kind === "reject") return rejectWith(check.error);
    if (check.kind === "duplicate") {
      return { kind: "duplicate", epoch: check.epoch, lastSeq: check.lastSeq, eof: false };
    }
    const admission = admitProducer(target.producers, request.producer.producerId, nowMs, limits);
    if (admission.kind === "reject") return rejectWith(admission.error);
    producer = { producerId: request.producer.producerId, state: check.state, pruned: admission.prune };
  }

  if (!hasBody) return { kind: "close", producer };

  const streamSeq = checkStreamSeq(target.lastStreamSeq, request.streamSeq);
  if (!streamSeq.ok) return rejectWith(streamSeq.error);
  return { kind: "append", close: request.close, messages, producer, lastStreamSeq: streamSeq.value };
}

function rejectWith(error: DomainError): AppendDecision {
  return { kind: "reject", error };
}
