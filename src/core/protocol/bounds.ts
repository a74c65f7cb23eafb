// The bounds a client can reach inside one stream node (docs/limits.md, "Stream nodes"), as
// pure decisions: the node's paths pass in what they count and the setting, and answer with the error
// returned here. Producer admission and the epoch step are in producer.ts, next to the producer table.
import { domainError, type DomainError } from "../errors.ts";

const NEWLINE = 0x0a;

/**
 * B-1: a long-poll or SSE request is admitted while fewer than `maxLiveReaders` are being served; past
 * that it is answered at once with `limit_reached` (429, Retry-After) and never waits or loops.
 */
export function admitLiveReader(activeReaders: number, maxLiveReaders: number): DomainError | null {
  if (activeReaders < maxLiveReaders) return null;
  return domainError("limit_reached", `this node serves ${maxLiveReaders} live readers already (MAX_LIVE_READERS); retry later`, {
    limit: "MAX_LIVE_READERS",
    max: maxLiveReaders,
  });
}

/**
 * B-2: where a JSON page that began at a message boundary ends, given the bytes read so far from its
 * start: after the last whole message in them, or null when they hold no message end yet (one message
 * larger than a page: the caller reads on until its end, and returns that message alone). At the tail
 * the page ends with the bytes (the stream's data ends at a message boundary).
 */
export function jsonPageCut(bytes: Uint8Array, atTail: boolean): number | null {
  if (atTail) return bytes.byteLength;
  const cut = bytes.lastIndexOf(NEWLINE) + 1;
  return cut === 0 ? null : cut;
}

/** B-2: the end of the first message in `bytes` (read on past a page), or null if it ends further on. */
export function firstMessageEnd(bytes: Uint8Array): number | null {
  const at = bytes.indexOf(NEWLINE);
  return at < 0 ? null : at + 1;
}

/**
 * B-4: every protocol header a request carries is at most `maxBytes` long (header values are byte
 * strings: one character per byte on the wire). The first one over it is named in the `invalid` error.
 * Applies to Content-Type, Producer-Id, Stream-Seq (a Stream-Seq longer than that can never poison a
 * stream: every later writer needs a greater one, and values are compared byte-wise), TTL, expiry and
 * the fork headers.
 */
export function checkHeaderLengths(
  headers: Readonly<Record<string, string | null>>,
  maxBytes: number,
): DomainError | null {
  for (const [name, value] of Object.entries(headers)) {
    if (value !== null && value.length > maxBytes) {
      return domainError("invalid", `the ${name} header is ${value.length} bytes long, at most ${maxBytes} (MAX_HEADER_VALUE_BYTES)`, {
        header: name,
        lengthBytes: value.length,
        maxBytes,
        limit: "MAX_HEADER_VALUE_BYTES",
      });
    }
  }
  return null;
}

/**
 * B-5: a fork of a stream whose fork chain is `sourceDepth` deep (a stream that is no fork: 0) is
 * `sourceDepth + 1` deep, and refused when that is over `maxForkDepth`: each level is one more hop for
 * every read of the inherited range.
 */
export function checkForkDepth(sourceDepth: number, maxForkDepth: number): DomainError | null {
  if (sourceDepth < maxForkDepth) return null;
  return domainError("invalid", `the fork source is ${sourceDepth} forks deep; forks may be at most ${maxForkDepth} deep (MAX_FORK_DEPTH)`, {
    reason: "fork_depth",
    depth: sourceDepth,
    max: maxForkDepth,
    limit: "MAX_FORK_DEPTH",
  });
}

/**
 * B-6: an append of `incomingBytes` joins the WAL queue only while the bytes waiting for their WAL object
 * stay within `maxQueueBytes` (a lone append larger than the bound on an empty queue is still taken, so
 * every append the body limit allows can be written); otherwise `unavailable` (503, Retry-After): the
 * store is behind, the client backs off.
 */
export function admitWalBytes(queuedBytes: number, incomingBytes: number, maxQueueBytes: number): DomainError | null {
  if (queuedBytes === 0 || queuedBytes + incomingBytes <= maxQueueBytes) return null;
  return domainError("unavailable", `the node's WAL queue holds ${queuedBytes} bytes, at most ${maxQueueBytes} (MAX_WAL_QUEUE_BYTES); retry`, {
    limit: "MAX_WAL_QUEUE_BYTES",
    max: maxQueueBytes,
  });
}

/**
 * B-8: a create, append or table-write body of `incomingBytes` (its declared length, or what was read of it
 * so far) is held only while it and the other bodies the node holds (`othersBytes`: read, decided or
 * waiting for the WAL, until they are answered) stay within `maxBytes`; a lone body is always taken, so
 * every body the body limit allows can be written. Otherwise `unavailable` (503, Retry-After): each held
 * byte costs several copies in memory (docs/limits.md, "Memory budgets").
 */
export function admitBodyBytes(othersBytes: number, incomingBytes: number, maxBytes: number): DomainError | null {
  if (othersBytes === 0 || incomingBytes === 0 || othersBytes + incomingBytes <= maxBytes) return null;
  return domainError("unavailable", `the node holds ${othersBytes} bytes of request bodies, at most ${maxBytes} (MAX_BODY_BYTES_IN_FLIGHT); retry`, {
    limit: "MAX_BODY_BYTES_IN_FLIGHT",
    max: maxBytes,
  });
}
