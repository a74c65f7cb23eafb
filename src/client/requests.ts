// Requests with their retry policy: table-level ones to the service origin, and bucket-addressed ones to
// the bucket's leader, following `not_leader` answers through the leader cache (never fetch's own redirect
// handling) and backing off on refusals that say "later" (429, 503, a lost answer).
import { bucketPath } from "../core/tables/bucket-paths.ts";
import type { BucketId } from "../core/tables/requests.ts";
import { invalidInput, TableClientError } from "./errors.ts";
import { exchange, type FetchLike, type HttpRequest } from "./http.ts";
import type { LeaderCache } from "./leader-cache.ts";
import { withRetries, type Attempt, type Timing } from "./retry.ts";
import { leaderFactsOf } from "./wire.ts";

export interface ClientContext {
  /** The service origin, without a trailing slash. */
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly fetch: FetchLike;
  readonly timing: Timing;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/**
 * Idempotent requests (reads, a create, a write carrying producer headers) are also retried after a lost
 * answer; the others only after a refusal that says nothing was done (429, 503).
 */
export type RetryPolicy = "idempotent" | "refusals-only";

const STATUS_TOO_MANY_REQUESTS = 429;
const STATUS_UNAVAILABLE = 503;

export function tableUrl(context: ClientContext, table: string, rest = ""): string {
  return `${context.baseUrl}/v1/table/${table}${rest}`;
}

/** A request to the service origin (the table API's table-level routes). */
export async function callTable(context: ClientContext, request: HttpRequest, policy: RetryPolicy): Promise<Answer> {
  return withRetries(context.timing, async (): Promise<Attempt<Answer>> => {
    const outcome = await exchange(context.fetch, context.token, request);
    if (outcome.ok) return { kind: "done", value: outcome };
    const { error, retryAfterMs } = outcome;
    return shouldRetry(error, policy) ? { kind: "again", error, retryAfterMs } : { kind: "fail", error };
  });
}

/** A bucket-addressed request (`...[/p/<partition>]/bucket/<i>/<action>`) at the bucket's leader, wherever it is now. */
export async function callLeader(
  context: ClientContext,
  cache: LeaderCache,
  target: { readonly table: string; readonly bucket: BucketId; readonly action: "write" | "lookup" | "prefix" },
  body: unknown,
  headers?: Readonly<Record<string, string>>,
): Promise<Answer> {
  const { table, bucket, action } = target;
  return withRetries(context.timing, async (): Promise<Attempt<Answer>> => {
    const { leaderAddr } = await cache.leaderOf(bucket);
    if (leaderAddr === null) {
      await cache.reload();
      return { kind: "again", error: leaderless(table, bucket) };
    }
    const url = `${leaderAddr.replace(/\/+$/, "")}${bucketPath(table, bucket)}/${action}`;
    const outcome = await exchange(context.fetch, context.token, { method: "POST", url, body, ...(headers === undefined ? {} : { headers }) });
    if (outcome.ok) return { kind: "done", value: outcome };
    const { error, retryAfterMs } = outcome;
    if (error.code === "not_leader") {
      // The answer's details name the leader; when they are missing (a fetch that hides a manual
      // redirect's body) or no newer than what the cache holds, the table's description is asked again.
      const facts = leaderFactsOf(error.details);
      const moved = (facts !== null && cache.learn(bucket, facts)) || (await cache.reloadChanged(bucket));
      return { kind: "again", error, now: moved, retryAfterMs };
    }
    if (!shouldRetry(error, "idempotent")) return { kind: "fail", error };
    // No answer, or "later", from the node the cache names: it may be down and its bucket re-led elsewhere
    // (a down node answers no not_leader). Ask the table again; a moved bucket is tried at once.
    return { kind: "again", error, now: await movedSince(cache, bucket), retryAfterMs };
  });
}

/** Whether describing the table again moves `bucket` to another leader; false when the describe fails too. */
async function movedSince(cache: LeaderCache, bucket: BucketId): Promise<boolean> {
  try {
    return await cache.reloadChanged(bucket);
  } catch {
    return false;
  }
}

function shouldRetry(error: TableClientError, policy: RetryPolicy): boolean {
  if (error.status === STATUS_TOO_MANY_REQUESTS || error.status === STATUS_UNAVAILABLE) return true;
  if (policy === "refusals-only") return false;
  return error.code === "network_error" || (error.status !== null && error.status >= 500) || error.retryable;
}

function leaderless(table: string, bucket: BucketId): TableClientError {
  return new TableClientError({
    code: "unavailable",
    message: `bucket ${bucket.bucket} of table ${table} has no leader with an address yet`,
    status: null,
    retryable: true,
    details: { table, ...bucket },
  });
}

/** A bucket number as the caller gave it, checked. */
export function checkBucket(bucket: number): number {
  if (!Number.isSafeInteger(bucket) || bucket < 0) throw invalidInput("a bucket is a non-negative integer", { field: "bucket" });
  return bucket;
}
