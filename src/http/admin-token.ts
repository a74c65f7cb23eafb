// The admin bearer token check (ADMIN_TOKEN), for the admin API (src/admin) and the Worker's own
// /admin/health: one middleware, compared in constant time.
import type { MiddlewareHandler } from "hono";
import { domainError } from "../core/errors.ts";
import { parseBearer } from "../core/subscriptions/index.ts";
import { sameSecret } from "../auth/same-secret.ts";
import { errorResponse } from "./responses.ts";

/**
 * The admin bearer token check. No ADMIN_TOKEN configured: 503 (the endpoints are disabled, never open);
 * missing or wrong token: 401 with `WWW-Authenticate: Bearer`.
 */
export const requireAdmin: MiddlewareHandler<{ Bindings: { ADMIN_TOKEN?: string } }> = async (c, next) => {
  const expected = c.env.ADMIN_TOKEN ?? "";
  if (expected === "") {
    return errorResponse(domainError("unavailable", "the admin endpoints are disabled: ADMIN_TOKEN is not configured"));
  }
  const presented = parseBearer(c.req.header("authorization") ?? null);
  if (presented === null || !(await sameSecret(presented, expected))) {
    const response = errorResponse(domainError("unauthorized", "a valid admin bearer token is required"));
    response.headers.set("www-authenticate", 'Bearer realm="mink-admin"');
    return response;
  }
  return next();
};
