// Stream closure (PROTOCOL "Stream Closure"): a writer closes a stream with `Stream-Closed: true`, on create
// or on append (with or without a final body). Closure is durable and final: data stays readable, appends
// are refused, and readers see EOF once they reach the final offset. In code this is `eof`, kept apart
// from a node's ownership states (opened/closed), as in docs/metadata-log.md, "State".

/** `Stream-Closed` counts only when its value is `true` (any case); any other value is as if absent. */
export function parseStreamClosedHeader(raw: string | null): boolean {
  return raw !== null && raw.trim().toLowerCase() === "true";
}

/** What a read response says about where it ended (catch-up, long-poll and SSE control events alike). */
export interface ReadEndFlags {
  /** `Stream-Up-To-Date: true` / `upToDate`: the response reaches the tail as of its generation. */
  readonly upToDate: boolean;
  /** `Stream-Closed: true` / `streamClosed`: EOF; only at the final offset of a closed stream. */
  readonly closed: boolean;
}

/**
 * Flags for a response that ends at `endPositionBytes`. A partial page of a closed stream is not EOF:
 * the client learns of closure from the read that reaches the final offset.
 */
export function readEndFlags(endPositionBytes: number, tailPositionBytes: number, eof: boolean): ReadEndFlags {
  const atTail = endPositionBytes >= tailPositionBytes;
  return { upToDate: atTail, closed: eof && atTail };
}
