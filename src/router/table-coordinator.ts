// Table changes only the coordinator makes (docs/tables.md, "Metadata and leaders"): CreateTable,
// AddPartition, and tiering rounds (docs/tiering.md). The router asks its local node, and the lease holder
// when that node is not it (once: a lease moving meanwhile is a 503 to retry).
import { domainError, type DomainError } from "../core/errors.ts";
import type { Result } from "../core/result.ts";
import { type Env, streamNodeClient } from "../env.ts";
import type { CreateTableAnswer, StreamNodeClient } from "../ports/stream-node-client.ts";
import { routerSettings } from "./router.ts";

type CoordinatorAnswer = { readonly ok: true } | { readonly ok: false; readonly error: DomainError };

/** The coordinator's answer to `call`: created or not, or the error (`fenced` turned into a retryable 503). */
export async function askCoordinator(env: Env, call: (node: StreamNodeClient) => Promise<CreateTableAnswer>): Promise<Result<{ created: boolean }>> {
  const answer = await atCoordinator(env, call);
  return answer.ok ? { ok: true, value: { created: answer.created } } : answer;
}

/** `call` at the local node, then at the lease holder its `fenced` names; a `fenced` left is a retryable 503. */
export async function atCoordinator<A extends CoordinatorAnswer>(env: Env, call: (node: StreamNodeClient) => Promise<A>): Promise<A | { ok: false; error: DomainError }> {
  const settings = routerSettings(env);
  let nodeId = settings.localNodeId;
  for (let hop = 0; ; hop++) {
    const answer = await call(streamNodeClient(env.STREAM_NODE, nodeId));
    if (answer.ok) return answer;
    const holder = answer.error.details?.["holder"];
    if (answer.error.code === "fenced" && typeof holder === "string" && holder !== nodeId && hop === 0 && settings.nodeIds.includes(holder)) {
      nodeId = holder;
      continue;
    }
    return answer.error.code === "fenced" ? { ok: false, error: domainError("unavailable", "no coordinator right now; retry", answer.error.details) } : answer;
  }
}
