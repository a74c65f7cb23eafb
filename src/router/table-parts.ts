// Table requests split by bucket at the router (docs/tables.md, "HTTP API"): each part goes to its
// bucket's leader as a bucket-addressed request, in parallel (at most MAX_PARTS_IN_FLIGHT at once); a part
// answered `not_leader` (a stale cached view) is sent once more, to the leader the answer names. No part
// is ever redirected to the client: a table-addressed request gets one answer.
import { workerLog } from "../log/logger.ts";
import { domainError, type DomainError } from "../core/errors.ts";
import type { TableLookup } from "../core/meta/view.ts";
import { encodePartition } from "../core/tables/bucketing.ts";
import { bucketPath } from "../core/tables/bucket-paths.ts";
import { bucketIdText, type BucketId } from "../core/tables/requests.ts";
import { type Env } from "../env.ts";
import { toNode } from "./router.ts";
import { AUTHORIZED_HEADER } from "../http/request-target.ts";

/** Parts sent at once: a write to a 1,024-bucket table goes out in rounds. */
const MAX_PARTS_IN_FLIGHT = 32;
/** A part answered not_leader is re-sent this many times at most (each to the leader the answer names). */
const MAX_LEADER_HOPS = 2;

export interface Part extends BucketId {
  /** The JSON body of the bucket-addressed request. */
  readonly body: unknown;
}

export type PartAnswer =
  | (BucketId & { readonly ok: true; readonly status: number; readonly body: unknown })
  | (BucketId & { readonly ok: false; readonly status: number; readonly error: unknown; readonly retryAfter: string | null });

type BucketView = TableLookup["buckets"][number];

/** The buckets of a table lookup by bucketIdText (partition key and number). */
export function bucketsById(table: TableLookup): Map<string, BucketView> {
  return new Map(table.buckets.map((b) => [bucketIdText({ partition: b.partition === null ? null : encodePartition(b.partition), bucket: b.bucket }), b] as const));
}

/** Sends every part to its bucket's leader (`op`: write, lookup or prefix); answers in the parts' order. */
export async function sendParts(env: Env, origin: string, table: TableLookup, name: string, op: string, parts: readonly Part[], headers: Headers): Promise<PartAnswer[]> {
  const buckets = bucketsById(table);
  const answers: PartAnswer[] = [];
  for (let i = 0; i < parts.length; i += MAX_PARTS_IN_FLIGHT) {
    const round = parts.slice(i, i + MAX_PARTS_IN_FLIGHT);
    answers.push(...(await Promise.all(round.map((part) => sendPart(env, origin, buckets.get(bucketIdText(part)), name, op, part, headers)))));
  }
  return answers;
}

async function sendPart(env: Env, origin: string, bucket: BucketView | undefined, name: string, op: string, part: Part, headers: Headers): Promise<PartAnswer> {
  const id: BucketId = { partition: part.partition, bucket: part.bucket };
  let leader = bucket?.leaderNode?.id ?? null;
  const text = JSON.stringify(part.body);
  for (let hop = 0; leader !== null; hop++) {
    const url = `${origin}/n/${encodeURIComponent(leader)}${bucketPath(name, id)}/${op}`;
    const response = await toNode(env, leader, new Request(url, { method: "POST", headers: partHeaders(headers), body: text }));
    const body = await jsonOf(response);
    if (response.ok || response.status === 204) return { ...id, ok: true, status: response.status, body };
    const error = (body as { error?: unknown } | null)?.error ?? null;
    const next = notLeaderTarget(error);
    if (response.status === 307 && next !== null && hop < MAX_LEADER_HOPS) {
      leader = next;
      continue;
    }
    return { ...id, ok: false, status: response.status, error, retryAfter: response.headers.get("retry-after") };
  }
  return failed(id, domainError("unavailable", "the bucket has no leader right now; retry", { ...id }));
}

function failed(id: BucketId, error: DomainError): PartAnswer {
  return { ...id, ok: false, status: 503, error: { ...error, retryable: true }, retryAfter: "1" };
}

/** The headers a part carries: the caller's authorization (checked again at the node) and JSON. */
function partHeaders(headers: Headers): Headers {
  const out = new Headers({ "content-type": "application/json" });
  for (const name of ["authorization", AUTHORIZED_HEADER]) {
    const value = headers.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
}

function notLeaderTarget(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, details } = error as { code?: unknown; details?: { leader?: unknown } };
  return code === "not_leader" && typeof details?.leader === "string" ? details.leader : null;
}

async function jsonOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    workerLog.log("worker.error", { during: "table_part", status: response.status }, error);
    return null;
  }
}
