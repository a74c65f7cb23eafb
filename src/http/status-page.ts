// The status page (docs/status-page.md): an HTML shell, one stylesheet and one script, served at /admin/
// without the admin token. They hold no data and no secret: the script asks for the token, keeps it in the
// tab's sessionStorage and reads the admin API with `Authorization: Bearer`. Mounted before the admin routes,
// whose token check covers every other /admin path.
import { Hono } from "hono";
import { STATUS_PAGE_CSS } from "../status-page/page-css.ts";
import { STATUS_PAGE_HTML } from "../status-page/page-html.ts";
import { STATUS_PAGE_SCRIPT } from "../status-page/page-script.ts";
import { withSecurityHeaders } from "./security-headers.ts";

/**
 * Only this origin's own files and API; no inline script or style, no framing, no plugins. `connect-src`
 * is the admin API on the same origin.
 */
const STATUS_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** The files change only with a deploy; a short lifetime lets a new deploy show within a minute. */
const CACHE_CONTROL = "public, max-age=60";

function asset(body: string, contentType: string): Response {
  const headers = withSecurityHeaders(
    new Headers({
      "content-type": contentType,
      "cache-control": CACHE_CONTROL,
      "content-security-policy": STATUS_PAGE_CSP,
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
    }),
  );
  // The page is for this origin only (the stream API's cross-origin headers do not apply to it).
  headers.set("cross-origin-resource-policy", "same-origin");
  headers.delete("access-control-allow-origin");
  headers.delete("access-control-expose-headers");
  return new Response(body, { status: 200, headers });
}

export const statusPageRoutes = new Hono();

statusPageRoutes.get("/admin", () => {
  const headers = withSecurityHeaders(new Headers({ location: "/admin/", "cache-control": CACHE_CONTROL }));
  return new Response(null, { status: 308, headers });
});
statusPageRoutes.get("/admin/", () => asset(STATUS_PAGE_HTML, "text/html; charset=utf-8"));
statusPageRoutes.get("/admin/ui/app.css", () => asset(STATUS_PAGE_CSS, "text/css; charset=utf-8"));
statusPageRoutes.get("/admin/ui/app.js", () => asset(STATUS_PAGE_SCRIPT, "text/javascript; charset=utf-8"));
