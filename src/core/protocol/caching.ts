// Caching (PROTOCOL "Caching and Collapsing", "Browser Security Headers"): ETags on reads, conditional GET,
// and the Cache-Control of every kind of response.

/**
 * The ETag of a read response: `"<streamId>:<startOffset>:<endOffset>"`, with `:c` when the response says
 * Stream-Closed, so a close without new data still changes it. The stream id differs per incarnation of
 * a name, so a deleted and re-created stream never matches an old ETag. Stream ids never hold `"`.
 */
export function readEtag(streamId: string, startOffset: string, endOffset: string, closed: boolean): string {
  return `"${streamId}:${startOffset}:${endOffset}${closed ? ":c" : ""}"`;
}

/**
 * `If-None-Match` against the response's ETag: `*`, or any listed tag equal to it (weak comparison, as
 * RFC 9110 asks for If-None-Match). A match turns the 200 into a 304 without a body.
 */
export function ifNoneMatchMatches(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const opaque = stripWeak(etag);
  return header.split(",").some((candidate) => {
    const tag = candidate.trim();
    return tag === "*" || stripWeak(tag) === opaque;
  });
}

function stripWeak(tag: string): string {
  return tag.startsWith("W/") ? tag.slice(2) : tag;
}

export const NO_STORE = "no-store";
/** Shared-cache policy for reads that return data (PROTOCOL "Catch-up and Long-poll Reads"). */
const MAX_READ_CACHE_SECONDS = 60;
const STALE_WHILE_REVALIDATE_SECONDS = 300;

export type CachedResponseKind =
  /** A catch-up or long-poll 200 (or its 304). */
  | "read"
  /** `offset=now` catch-up, HEAD, long-poll 204, writes, deletes, errors. */
  | "uncacheable"
  /** The SSE response. */
  | "sse";

export interface ReadCacheInput {
  /** The response carries bytes or messages (an empty page at the tail of an open stream does not). */
  readonly hasData: boolean;
  /** The response says Stream-Closed (EOF never changes while the stream exists). */
  readonly closed: boolean;
  /** Seconds until the stream's deadline (Expires-At) or its TTL window, null when it has neither. */
  readonly lifetimeSeconds: number | null;
}

/**
 * Cache-Control for a response. A read that returns data, or EOF, is immutable by position and may be
 * cached for up to 60 s, never past the stream's own lifetime; an empty page at the tail of an open
 * stream is a poll and must not be cached, or pollers would miss appends.
 */
export function cacheControl(kind: CachedResponseKind, read?: ReadCacheInput): string {
  if (kind === "sse") return "no-cache";
  if (kind === "uncacheable" || read === undefined) return NO_STORE;
  if (!read.hasData && !read.closed) return NO_STORE;
  const maxAge = Math.max(
    0,
    Math.min(
      MAX_READ_CACHE_SECONDS,
      read.lifetimeSeconds === null ? MAX_READ_CACHE_SECONDS : Math.floor(read.lifetimeSeconds),
    ),
  );
  if (maxAge === 0) return NO_STORE;
  return `public, max-age=${maxAge}, stale-while-revalidate=${STALE_WHILE_REVALIDATE_SECONDS}`;
}
