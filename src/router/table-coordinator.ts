// Table changes only the coordinator makes (docs/tables.md, "Metadata and leaders"): CreateTable and
// AddPartition. The router asks its local node, and the lease holder when that node is not it (once: a
// lease moving meanwhile is a 503 to retry).
import { domainError } from "../core/errors.ts";
import type { Result } from "../core/result.ts";
import { type Env, streamNodeClient } from "../env.ts";
import type { CreateTableAnswer, StreamNodeClient } from "../ports/stream-node-client.ts";
import { routerSettings } from "./router.ts";

/** The coordinator's answer to `call`: created or not, or the error (`fenced` turned into a retryable 503). */
export async function askCoordinator(env: Env, call: (node: StreamNodeClient) => Promise<CreateTableAnswer>): Promise<Result<{ created: boolean }>> {
  const settings = routerSettings(env);
  let nodeId = settings.localNodeId;
  for (let hop = 0; ; hop++) {
    const answer = await call(streamNodeClient(env.STREAM_NODE, nodeId));
    if (answer.ok) return { ok: true, value: { created: answer.created } };
    const holder = answer.error.details?.["holder"];
    if (answer.error.code === "fenced" && typeof holder === "string" && holder !== nodeId && hop === 0 && settings.nodeIds.includes(holder)) {
      nodeId = holder;
      continue;
    }
    return { ok: false, error: answer.error.code === "fenced" ? domainError("unavailable", "no coordinator right now; retry", answer.error.details) : answer.error };
  }
}
