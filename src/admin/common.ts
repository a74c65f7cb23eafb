// Helpers shared by the admin endpoints (docs/operations.md): the metadata log client, JSON answers, and
// request bodies checked with zod, whose first failing issues become a 400 `invalid` through the error table.
import type { Context } from "hono";
import { z } from "zod";
import { domainError } from "../core/errors.ts";
import { type Env, metaLogClient } from "../env.ts";
import { type MetaLogClient } from "../ports/meta-log-client.ts";
import { withSecurityHeaders } from "../http/security-headers.ts";
import type { Result } from "../core/result.ts";

export type AdminEnv = { Bindings: Env };

/** Admin bodies are a few fields; anything larger is refused before parsing. */
const MAX_ADMIN_BODY_BYTES = 16 * 1024;

export function metaOf(env: Env): MetaLogClient {
  return metaLogClient(env.META_LOG);
}

export function json(body: unknown, status = 200): Response {
  const headers = withSecurityHeaders(new Headers({ "content-type": "application/json", "cache-control": "no-store" }));
  return new Response(JSON.stringify(body), { status, headers });
}

/** "slots: Too big: expected number to be <=1000000" (every issue, `;`-separated; the root path is `body`). */
function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .map((issue) => `${issue.path.length === 0 ? root : `${root}.${issue.path.map(String).join(".")}`}: ${issue.message}`)
    .join("; ");
}

/** A checked admin request body (src/core/result.ts). */
export type Checked<T> = Result<T>;

/** A JSON body checked against `schema`: invalid JSON or a schema mismatch is `invalid` with the reason. */
export async function readBody<T>(c: Context<AdminEnv>, schema: z.ZodType<T>): Promise<Checked<T>> {
  const text = await c.req.text();
  if (new TextEncoder().encode(text).byteLength > MAX_ADMIN_BODY_BYTES) {
    return { ok: false, error: domainError("invalid", `the body must be at most ${MAX_ADMIN_BODY_BYTES} bytes of JSON`) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's message is an exception's text: the answer says what is wrong, not how it was found.
    return { ok: false, error: domainError("invalid", "the body is not JSON") };
  }
  const checked = schema.safeParse(parsed);
  if (!checked.success) return { ok: false, error: domainError("invalid", `invalid body: ${describeIssues(checked.error, "body")}`) };
  return { ok: true, value: checked.data };
}

/** A path parameter checked against `schema`. */
export function checkParam<T>(value: string | undefined, name: string, schema: z.ZodType<T>): Checked<T> {
  const checked = schema.safeParse(value);
  if (!checked.success) return { ok: false, error: domainError("invalid", `invalid path: ${describeIssues(checked.error, name)}`) };
  return { ok: true, value: checked.data };
}
