// Content types (PROTOCOL "Content Types"). A stream keeps the content type it was created with, verbatim
// (reads and HEAD return it as given); two content types are "the same" when their media types
// (type/subtype, case-insensitive, parameters ignored) are equal: `TEXT/PLAIN` appends to a `text/plain`
// stream, `application/json; charset=utf-8` is JSON mode.
//
// A Content-Type is exactly one RFC 9110 media type (`type "/" subtype *( OWS ";" OWS [ name "=" value ] )`,
// a value a token or a quoted string). Anything else is refused, because browsers read a header value as a
// comma-separated list and take the last type in it: `text/plain;a=b,text/html` renders as HTML while a
// looser parse would call it `text/plain` and leave it unsandboxed (src/core/protocol/active-content.ts).
//
// | #   | header value                                                   | outcome                   |
// |-----|----------------------------------------------------------------|---------------------------|
// | CT1 | absent or blank                                                | null (the caller's default) |
// | CT2 | `type/subtype`, optional parameters `;name=token` or `;name="quoted"`, empty `;` allowed | the trimmed value |
// | CT3 | not `type/subtype` (`text/`, `text plain`, `text/plain/x`)     | 400 invalid               |
// | CT4 | a parameter without `=value`, or a value that is neither token nor quoted string | 400 invalid |
// | CT5 | anything after the media type that is not a parameter: a comma, a second type | 400 invalid |
import { fail, ok, type Parsed } from "./parsed.ts";

export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
const JSON_CONTENT_TYPE = "application/json";

// RFC 9110 token characters; parameters are checked for form but not interpreted.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
// qdtext (HTAB, SP, VCHAR but `"` and backslash, obs-text) or a quoted-pair.
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*"';
const PARAMETER = `${TOKEN}=(?:${TOKEN}|${QUOTED})`;
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*(?:${PARAMETER})?)*$`);

/** Table CT: a Content-Type request header, null when absent or blank, else exactly one media type. */
export function parseContentTypeHeader(raw: string | null): Parsed<string | null> {
  if (raw === null || raw.trim() === "") return ok(null);
  const value = raw.trim();
  if (!MEDIA_TYPE.test(value)) {
    return fail("invalid", "Content-Type is not exactly one media type (RFC 9110)", { contentType: value.slice(0, 80) });
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
