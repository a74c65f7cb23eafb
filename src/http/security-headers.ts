// Headers on every response of the stream API, errors, 304s, SSE and preflights included (SEC-1, SEC-2),
// and the preflight answer (SEC-3).
import { CORS_HEADERS, PREFLIGHT_HEADERS, SECURITY_HEADERS } from "../core/protocol/headers.ts";

export function withSecurityHeaders(headers: Headers): Headers {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) headers.set(name, value);
  for (const [name, value] of Object.entries(CORS_HEADERS)) headers.set(name, value);
  return headers;
}

export function preflightResponse(): Response {
  const headers = withSecurityHeaders(new Headers(PREFLIGHT_HEADERS));
  headers.set("cache-control", "no-store");
  return new Response(null, { status: 204, headers });
}
