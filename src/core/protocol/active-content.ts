// Streams whose content a browser would run (table ACT). A stream created as `text/html` and read from the
// service's own origin would execute its script there, with the origin's cookies and storage: those
// responses get `Content-Security-Policy: sandbox` (no script, no same-origin access, even if rendered)
// and `Content-Disposition: attachment` (a browser saves them rather than rendering). The bytes are
// unchanged; clients of the protocol read them as before.
//
// | #    | media type                                              | active |
// |------|---------------------------------------------------------|--------|
// | ACT1 | text/html, application/xhtml+xml                        | yes    |
// | ACT2 | image/svg+xml, text/xml, application/xml, any `+xml`, text/xsl | yes |
// | ACT3 | JavaScript and ECMAScript, every spelling (text/, application/, x-) | yes |
// | ACT4 | everything else (text/plain, application/json, octet-stream, ...) | no |
// | ACT5 | an active type anywhere in the value (`text/plain;a=b,text/html`, in a parameter too) | yes |
//
// ACT5 is the second guard: a value listing several types is refused at create (table CT,
// content-type.ts), but a browser takes the last type of a comma-separated list, so a stream stored before
// that rule must not escape the sandbox. Every `type/subtype` in the value is judged: a false match only
// sandboxes one more stream, a missed one lets a page run.

const ACTIVE_TYPES = new Set([
  "text/html",
  "application/xhtml+xml",
  "image/svg+xml",
  "text/xml",
  "application/xml",
  "text/xsl",
  "text/javascript",
  "application/javascript",
  "application/x-javascript",
  "text/ecmascript",
  "application/ecmascript",
  "text/jscript",
]);

/** The headers an active stream's responses carry. */
export const ACTIVE_CONTENT_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "sandbox",
  "content-disposition": "attachment",
};

const TYPE_SUBTYPE = /[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+/gi;

export function isActiveContentType(contentType: string): boolean {
  return (contentType.match(TYPE_SUBTYPE) ?? []).some((found) => {
    const type = found.toLowerCase();
    return ACTIVE_TYPES.has(type) || type.endsWith("+xml");
  });
}
