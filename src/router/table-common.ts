// What the router's table modules share (docs/tables.md, "HTTP API"): the per-isolate table cache, JSON
// answers with the security headers, and the Retry-After of a failed part.
import { metaLogClient, type Env } from "../env.ts";
import type { TableLookup } from "../core/meta/view.ts";
import { withSecurityHeaders } from "../http/security-headers.ts";
import { routerSettings } from "./router.ts";
import { TableCache } from "./table-cache.ts";
import type { PartAnswer } from "./table-parts.ts";

let cache: TableCache | null = null;

export function tables(env: Env): TableCache {
  cache ??= new TableCache(routerSettings(env).viewCacheTtlMs, () => Date.now());
  return cache;
}

/** The table from the isolate's cache (`fresh`: from the metadata log, refreshing the cache). */
export function cachedTable(env: Env, name: string, fresh = false): Promise<TableLookup> {
  return tables(env).lookup(name, (n) => metaLogClient(env.META_LOG).lookupTable(n), fresh);
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const all = withSecurityHeaders(new Headers({ "content-type": "application/json", "cache-control": "no-store", ...headers }));
  return new Response(status === 204 ? null : JSON.stringify(body), { status, headers: all });
}

export function retryHeaders(answer: PartAnswer): Record<string, string> {
  return !answer.ok && answer.retryAfter !== null ? { "retry-after": answer.retryAfter } : {};
}
