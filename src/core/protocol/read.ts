// Reads (PROTOCOL "Read Stream" catch-up, long-poll, SSE): the live mode, the long-poll wait decision, and
// the cursor that keeps CDN cache keys moving. Response flags (up-to-date, closed) are in closure.ts,
// caching and ETags in caching.ts, SSE framing in sse.ts.
import { fail, ok, type Parsed } from "./parsed.ts";
import type { ReadStart } from "./offsets.ts";

export type ReadMode = "catch-up" | "long-poll" | "sse";

/**
 * The `live` query parameter (all its values). Absent: catch-up. `long-poll` and `sse` select the live
 * modes, which require an explicit `offset`. `false` is accepted as catch-up for older clients; any other
 * value, or a repeated parameter, is refused.
 */
export function parseReadMode(liveValues: readonly string[], offsetGiven: boolean): Parsed<ReadMode> {
  if (liveValues.length > 1) return fail("invalid", "the live parameter must appear at most once");
  const [live] = liveValues;
  if (live === undefined || live === "false") return ok("catch-up");
  if (live !== "long-poll" && live !== "sse") {
    return fail("invalid", "live must be long-poll or sse", { live: live.slice(0, 40) });
  }
  if (!offsetGiven) return fail("invalid", `live=${live} requires an offset parameter`);
  return ok(live);
}

/** A catch-up read at `offset=now`: no data, no ETag, `Cache-Control: no-store`, body `[]` for JSON. */
export function isTailProbe(mode: ReadMode, start: ReadStart): boolean {
  return mode === "catch-up" && start.kind === "now";
}

export type LiveStart =
  /** Data exists at the start position (including a fork's inherited range): answer now. */
  | { readonly kind: "respond" }
  /** At the tail of a closed stream: answer EOF now (long-poll 204 / SSE final control event). */
  | { readonly kind: "eof" }
  /** At the tail of an open stream: wait for the next acknowledged append, close, or the timeout. */
  | { readonly kind: "wait" };

/**
 * What a live read does on arrival, and again each time it wakes. A fork's tail is its own: appends to
 * its source after the fork point never wake it.
 */
export function decideLiveStart(startPositionBytes: number, tailPositionBytes: number, eof: boolean): LiveStart {
  if (startPositionBytes < tailPositionBytes) return { kind: "respond" };
  return eof ? { kind: "eof" } : { kind: "wait" };
}

/** The cursor interval clock (PROTOCOL "Caching and Collapsing"): 20 s intervals from 2024-10-09T00:00Z. */
export const CURSOR_EPOCH_MS = Date.UTC(2024, 9, 9);
const CURSOR_INTERVAL_SECONDS = 20;
const MAX_CURSOR_JITTER_SECONDS = 3600;

/** The `cursor` query parameter: a decimal interval number, or null when absent or not one. */
export function parseCursorParam(values: readonly string[]): number | null {
  const [raw] = values;
  if (raw === undefined || !/^[0-9]{1,15}$/.test(raw)) return null;
  return Number(raw);
}

/**
 * The cursor of a live response: the current interval number, or, when the client's cursor is already
 * at or past it, the client's cursor plus a jitter of 1-3600 s worth of intervals, so a cursor never
 * repeats and cached responses cannot loop. `jitterSeconds` is the caller's random draw in [1, 3600].
 */
export function responseCursor(clientCursor: number | null, nowMs: number, jitterSeconds: number): string {
  const interval = Math.floor((nowMs - CURSOR_EPOCH_MS) / (CURSOR_INTERVAL_SECONDS * 1000));
  if (clientCursor === null || clientCursor < interval) return String(interval);
  const jitter = Math.min(Math.max(Math.floor(jitterSeconds), 1), MAX_CURSOR_JITTER_SECONDS);
  return String(clientCursor + Math.max(1, Math.ceil(jitter / CURSOR_INTERVAL_SECONDS)));
}
