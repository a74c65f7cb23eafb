// The MetaLog's RPC arguments that the service does not check itself: they cross an isolate boundary
// untyped, so a page size is clamped and a query's strings are made strings before they reach a rule.
import { MAX_LIST_LIMIT, type StreamListQuery } from "../core/meta/index.ts";

/** GET /admin/streams checks the query; the limit is bounded here too. */
export function checkedListQuery(query: StreamListQuery): StreamListQuery {
  const limit = Number.isSafeInteger(query.limit) ? Math.min(Math.max(1, query.limit), MAX_LIST_LIMIT) : MAX_LIST_LIMIT;
  return { prefix: String(query.prefix), after: query.after === null ? null : String(query.after), limit };
}

/** A page of the token register: 1 to 1000 tokens. */
export function tokenPageLimit(limit: number): number {
  return Math.min(Math.max(1, limit), 1000);
}

/** A positive integer var (MAX_TOKENS), or the default. */
export function positiveIntOr(raw: string | undefined, fallback: number): number {
  const value = Number(raw ?? "");
  return raw !== undefined && raw !== "" && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}
