// The mink Worker: the router in front of the metadata log and the stream nodes.
import { Hono } from "hono";
import type { Env } from "./env.ts";
import { domainError } from "./core/errors.ts";
import { preflightResponse } from "./http/security-headers.ts";
import { errorResponse } from "./http/stream-routes.ts";
import { objectStoreFromSettings } from "./storage/store-from-env.ts";

export { MetaLog } from "../durable-objects/meta-log.ts";
export { StreamNode } from "../durable-objects/stream-node.ts";

const app = new Hono<{ Bindings: Env }>();

/** Liveness plus a round trip to the object store, so a misconfigured bucket shows up at once. */
app.get("/health", async (c) => {
  const started = performance.now();
  try {
    await objectStoreFromSettings(c.env).list("nodes/", { maxKeys: 1 });
    return c.json({ ok: true, objectStore: { ok: true, latencyMs: Math.round(performance.now() - started) } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return c.json({ ok: false, objectStore: { ok: false, error: message } }, 503);
  }
});

/**
 * The stream API. For this slice every stream lives on the first node of NODE_IDS; the router (issue 4,
 * DESIGN section 5) will resolve each name in the metadata view and redirect or forward to its owner.
 * `/n/<node-id>/v1/stream/...` is a node's advertised address and goes straight to that node.
 */
app.all("/v1/stream/*", (c) => toNode(c.env, firstNode(c.env), c.req.raw));
app.all("/n/:node/v1/stream/*", (c) => {
  const nodeId = c.req.param("node");
  if (!nodeIds(c.env).includes(nodeId)) return errorResponse(domainError("not_found", "no such node"));
  return toNode(c.env, nodeId, c.req.raw);
});

function nodeIds(env: Env): string[] {
  const ids = (env.NODE_IDS ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "");
  return ids.length > 0 ? ids : ["node-0"];
}

function firstNode(env: Env): string {
  return nodeIds(env)[0] ?? "node-0";
}

/** A node that cannot start (object store or metadata log unreachable) answers 503, never a bare 500. */
async function toNode(env: Env, nodeId: string, request: Request): Promise<Response> {
  if (request.method === "OPTIONS") return preflightResponse();
  try {
    return await env.STREAM_NODE.getByName(nodeId).fetch(request);
  } catch (error) {
    console.error(`node ${nodeId} did not answer`, error);
    return errorResponse(domainError("unavailable", `node ${nodeId} is unavailable; retry`));
  }
}

app.notFound((c) => c.json({ error: { code: "not_found", message: "no such route" } }, 404));

export default app satisfies ExportedHandler<Env>;
