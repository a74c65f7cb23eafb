// Content types (PROTOCOL "Content Types"). A stream keeps the content type it was created with, verbatim
// (reads and HEAD return it as given); two content types are "the same" when their media types
// (type/subtype, case-insensitive, parameters ignored) are equal: `TEXT/PLAIN` appends to a `text/plain`
// stream, `application/json; charset=utf-8` is JSON mode.
import { fail, ok, type Parsed } from "./parsed.ts";

export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
const JSON_CONTENT_TYPE = "application/json";

// RFC 9110 token characters for type and subtype; parameters are kept but not interpreted.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^(${TOKEN})/(${TOKEN})[ \\t]*(;.*)?$`);

/**
 * A Content-Type request header: null when absent or blank (the caller picks the default), the trimmed
 * value when well-formed, and a refusal when it is not a media type at all.
 */
export function parseContentTypeHeader(raw: string | null): Parsed<string | null> {
  if (raw === null || raw.trim() === "") return ok(null);
  const value = raw.trim();
  if (!MEDIA_TYPE.test(value)) {
    return fail("invalid", "Content-Type is not a media type", { contentType: value.slice(0, 80) });
  }
  return ok(value);
}

/** `type/subtype` in lower case. */
function mediaType(contentType: string): string {
  const semicolon = contentType.indexOf(";");
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

export function sameMediaType(a: string, b: string): boolean {
  return mediaType(a) === mediaType(b);
}

export function isJsonContentType(contentType: string): boolean {
  return mediaType(contentType) === JSON_CONTENT_TYPE;
}

/**
 * How SSE carries the stream's bytes: as UTF-8 text for text/* and application/json, base64 for every
 * other type (and then the response says so with `stream-sse-data-encoding: base64`).
 */
export function sseDataEncoding(contentType: string): "text" | "base64" {
  const type = mediaType(contentType);
  return type.startsWith("text/") || type === JSON_CONTENT_TYPE ? "text" : "base64";
}
