// Forks (PROTOCOL "Stream forking"): a PUT with `Stream-Forked-From` creates a stream that reads its
// source's bytes up to the fork point, then its own. Offsets are shared (no translation): the fork point
// is a position in the source's view, and the fork's own appends continue from it. The fork point is
// `Stream-Fork-Offset` (default: the source's tail), optionally moved forward by `Stream-Fork-Sub-Offset`
// inside the one record (append) that starts at that offset: bytes for byte streams, messages for JSON.
// Also here: the stream lifecycle forks create (soft delete while forks still read a stream).
import { fail, ok, parseCanonicalUint, type Parsed } from "./parsed.ts";
import { formatOffset, parseOffset } from "./offsets.ts";
import { sameMediaType } from "./content-type.ts";
import { isExpired, type Expiry } from "./ttl.ts";
import { parseForkSourcePath } from "./stream-name.ts";

export interface ForkRequest {
  readonly sourceName: string;
  /** From `Stream-Fork-Offset`; null: the source's tail when the fork is created. */
  readonly anchorPositionBytes: number | null;
  /** From `Stream-Fork-Sub-Offset`; 0 when absent (0 and absent are the same request). */
  readonly subOffset: number;
}

/** The three fork headers of a PUT (null: absent). */
export function parseForkHeaders(
  forkedFrom: string | null,
  forkOffset: string | null,
  forkSubOffset: string | null,
): Parsed<ForkRequest | null> {
  if (forkedFrom === null) {
    if (forkOffset !== null) return fail("invalid", "Stream-Fork-Offset requires Stream-Forked-From");
    if (forkSubOffset !== null) return fail("invalid", "Stream-Fork-Sub-Offset requires Stream-Forked-From");
    return ok(null);
  }
  const source = parseForkSourcePath(forkedFrom);
  if (!source.ok) return source;
  let anchor: number | null = null;
  if (forkOffset !== null) {
    anchor = parseOffset(forkOffset);
    if (anchor === null) return fail("invalid", "Stream-Fork-Offset is not an offset");
  }
  let subOffset = 0;
  if (forkSubOffset !== null) {
    const parsed = parseCanonicalUint(forkSubOffset);
    if (parsed === null) return fail("invalid", "Stream-Fork-Sub-Offset must be a non-negative decimal integer");
    subOffset = parsed;
  }
  if (subOffset > 0 && anchor === null) {
    return fail("invalid", "Stream-Fork-Sub-Offset above 0 requires Stream-Fork-Offset");
  }
  return ok({ sourceName: source.value, anchorPositionBytes: anchor, subOffset });
}

export type Lifecycle = "live" | "soft-deleted";

/** What a fork needs to know about its source at creation. */
export interface ForkSourceView {
  readonly streamId: string;
  readonly lifecycle: Lifecycle;
  readonly contentType: string;
  readonly expiry: Expiry;
  readonly tailPositionBytes: number;
}

/**
 * The fork's anchor, checked against its source (null: no such stream, or expired). The request's
 * Content-Type, when present, must be the source's; when absent the fork inherits it.
 */
export function checkForkSource(
  request: ForkRequest,
  requestContentType: string | null,
  source: ForkSourceView | null,
): Parsed<number> {
  if (source === null) return fail("not_found", "the Stream-Forked-From stream does not exist");
  if (source.lifecycle === "soft-deleted") {
    return fail("conflict", "the Stream-Forked-From stream was deleted", { reason: "source_deleted" });
  }
  if (requestContentType !== null && !sameMediaType(requestContentType, source.contentType)) {
    return fail("conflict", "a fork's Content-Type must be its source's", {
      reason: "content_type",
      sourceContentType: source.contentType,
    });
  }
  const anchor = request.anchorPositionBytes ?? source.tailPositionBytes;
  if (anchor > source.tailPositionBytes) {
    return fail("invalid", "Stream-Fork-Offset is beyond the source's tail", {
      tailOffset: formatOffset(source.tailPositionBytes),
    });
  }
  return ok(anchor);
}

/**
 * The record that starts at (or contains) the anchor, in the source's view (an inherited record is cut
 * at the source's own fork point): its remaining byte length for byte streams, the stored length of
 * each of its messages (terminator included) for JSON streams; null when the anchor is the tail.
 */
export type RecordAtAnchor =
  | { readonly kind: "bytes"; readonly lengthBytes: number }
  | { readonly kind: "json"; readonly messageLengthsBytes: readonly number[] }
  | null;

/** The fork point: the anchor moved by the sub-offset, which must not pass the record's end. */
export function resolveForkPoint(
  anchorPositionBytes: number,
  subOffset: number,
  record: RecordAtAnchor,
): Parsed<number> {
  if (subOffset === 0) return ok(anchorPositionBytes);
  if (record === null) return fail("invalid", "Stream-Fork-Sub-Offset: no data past Stream-Fork-Offset");
  if (record.kind === "bytes") {
    if (subOffset > record.lengthBytes) {
      return fail("invalid", "Stream-Fork-Sub-Offset passes the end of the record", {
        recordBytes: record.lengthBytes,
      });
    }
    return ok(anchorPositionBytes + subOffset);
  }
  if (subOffset > record.messageLengthsBytes.length) {
    return fail("invalid", "Stream-Fork-Sub-Offset passes the end of the batch", {
      recordMessages: record.messageLengthsBytes.length,
    });
  }
  let position = anchorPositionBytes;
  for (const length of record.messageLengthsBytes.slice(0, subOffset)) position += length;
  return ok(position);
}

/** A stream as the lifecycle rules see it. */
export interface LifecycleView {
  readonly lifecycle: Lifecycle;
  readonly expiry: Expiry;
  readonly lastAccessMs: number;
  /** Live or soft-deleted forks whose source this stream is. */
  readonly forkCount: number;
}

export type Access =
  | { readonly kind: "ok" }
  /** 404; `remove` asks the owner to delete an expired stream now. */
  | { readonly kind: "not-found"; readonly remove: boolean }
  /** 410; `softDelete` asks the owner to record the soft delete of an expired stream that forks still read. */
  | { readonly kind: "gone"; readonly softDelete: boolean };

/** Whether a direct operation (GET, HEAD, POST, DELETE) may touch the stream, expiry included. */
export function checkAccess(stream: LifecycleView | null, nowMs: number): Access {
  if (stream === null) return { kind: "not-found", remove: false };
  if (stream.lifecycle === "soft-deleted") return { kind: "gone", softDelete: false };
  if (isExpired(stream.expiry, stream.lastAccessMs, nowMs)) {
    return stream.forkCount > 0 ? { kind: "gone", softDelete: true } : { kind: "not-found", remove: true };
  }
  return { kind: "ok" };
}

/** DELETE of a live stream: removed, or kept for its forks and refused from then on. */
export function deleteOutcome(forkCount: number): "remove" | "soft-delete" {
  return forkCount > 0 ? "soft-delete" : "remove";
}

/**
 * After a fork is removed (and its source's fork count lowered): a soft-deleted source nobody reads any
 * more is removed too, which may cascade up the chain.
 */
export function sourceAfterForkRemoved(source: {
  readonly lifecycle: Lifecycle;
  readonly forkCount: number;
}): "remove" | "keep" {
  return source.lifecycle === "soft-deleted" && source.forkCount === 0 ? "remove" : "keep";
}
