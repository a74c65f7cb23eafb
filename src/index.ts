// The mink Worker: the router in front of the metadata log and the stream nodes.
import { Hono } from "hono";
import type { Env } from "./env.ts";
import { routeRequest, toNodeAddress } from "./router/router.ts";
import { adminRoutes, metricsResponse, requireAdmin } from "./http/admin-routes.ts";
import { subscriptionRoutes } from "./http/subscription-routes.ts";
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
 * The stream API (DESIGN section 5, docs/router.md): the router resolves each name in its cached view and
 * serves it through the local node, redirects (307) to its owner, or forwards to it (ROUTER_MODE=forward).
 * `/n/<node-id>/v1/stream/...` is a node's advertised address and goes straight to that node.
 */
app.route("/v1/stream/__ds", subscriptionRoutes); // NAME-3: the reserved subscription API, before streams
app.all("/v1/stream/*", (c) => routeRequest(c.env, c.req.raw));
app.all("/n/:node/v1/stream/*", (c) => toNodeAddress(c.env, c.req.param("node"), c.req.raw));

/** Operations (docs/operations.md): JSON views of the metadata log and Prometheus metrics, admin token only. */
app.route("/admin", adminRoutes);
app.get("/metrics", requireAdmin, (c) => metricsResponse(c.env));

app.notFound((c) => c.json({ error: { code: "not_found", message: "no such route" } }, 404));

export default app satisfies ExportedHandler<Env>;
