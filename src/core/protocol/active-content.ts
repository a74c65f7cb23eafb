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

export function isActiveContentType(contentType: string): boolean {
  const semicolon = contentType.indexOf(";");
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return ACTIVE_TYPES.has(type) || type.endsWith("+xml");
}
