// The mink Worker: the router in front of the metadata log and the stream nodes.
import { Hono, type Context } from "hono";
import { domainError } from "./core/errors.ts";
import type { Env } from "./env.ts";
import { nodeIdsOf, routeRequest, toNodeAddress } from "./router/router.ts";
import { adminRoutes, metricsResponse, requireAdmin } from "./http/admin-routes.ts";
import { errorResponse } from "./http/stream-routes.ts";
import { subscriptionRoutes } from "./http/subscription-routes.ts";
import { healthRoutes } from "./http/health.ts";

export { MetaLog } from "../durable-objects/meta-log.ts";
export { StreamNode } from "../durable-objects/stream-node.ts";

const app = new Hono<{ Bindings: Env }>();

app.route("/", healthRoutes);

/**
 * The Durable Streams protocol as one app, served the same way at every entry: the router (`/v1/stream/...`)
 * and each node's advertised address (`/n/<node-id>/v1/stream/...`), which a client may use as its base URL
 * (DESIGN section 4). The reserved `__ds` API (NAME-3: matched before stream names) is the Worker's at every
 * entry, since subscriptions live in the metadata log, not in a node; only where stream requests go differs.
 */
function protocolApp(streams: (c: Context<{ Bindings: Env }>) => Promise<Response>): Hono<{ Bindings: Env }> {
  const protocol = new Hono<{ Bindings: Env }>();
  protocol.route("/v1/stream/__ds", subscriptionRoutes);
  protocol.all("/v1/stream/*", streams);
  return protocol;
}

/**
 * At the router (DESIGN section 5, docs/router.md) each name is resolved in the cached view and served
 * through the local node, redirected (307) to its owner, or forwarded to it (ROUTER_MODE=forward). At a
 * node's address stream requests go straight to that node, which answers from its own view.
 */
app.route("/", protocolApp((c) => routeRequest(c.env, c.req.raw)));
app.use("/n/:node/*", async (c, next) => {
  if (!nodeIdsOf(c.env).includes(c.req.param("node"))) return errorResponse(domainError("not_found", "no such node"));
  return next();
});
app.route("/n/:node", protocolApp((c) => toNodeAddress(c.env, c.req.param("node"), c.req.raw)));

/** Operations (docs/operations.md): JSON views of the metadata log and Prometheus metrics, admin token only. */
app.route("/admin", adminRoutes);
app.get("/metrics", requireAdmin, (c) => metricsResponse(c.env));

app.notFound((c) => c.json({ error: { code: "not_found", message: "no such route" } }, 404));

export default app satisfies ExportedHandler<Env>;
