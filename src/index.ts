// The mink Worker: the router in front of the metadata log and the stream nodes.
import { workerLog } from ".//log/logger.ts";
import { Hono, type Context } from "hono";
import { domainError } from "./core/errors.ts";
import type { Env } from "./env.ts";
import { nodeIdsOf, routeRequest, toNodeAddress } from "./router/router.ts";
import { metricsResponse } from "./http/admin-metrics.ts";
import { adminRoutes, requireAdmin } from "./http/admin-routes.ts";
import { errorResponse } from "./http/responses.ts";
import { subscriptionRoutes } from "./http/subscription-routes.ts";
import { streamAccess, subscriptionAccess, tableAccess } from "./http/access.ts";
import { forwardedIdentity, stripForwardedIdentity } from "./http/forwarded-identity.ts";
import { tableRoutes } from "./router/table-router.ts";
import { activeContentGuard } from "./http/active-content.ts";
import { checkDeployment } from "./core/auth/deployment.ts";
import { healthRoutes } from "./http/health.ts";
import { statusPageRoutes } from "./http/status-page.ts";

export { MetaLog } from "../durable-objects/meta-log.ts";
export { StreamNode } from "../durable-objects/stream-node.ts";

const app = new Hono<{ Bindings: Env }>();

/**
 * A deployment whose settings would be unsafe (table DP: no TOKEN_SECRET in token mode, several nodes
 * and no PUBLIC_ORIGIN, an unknown AUTH_MODE) answers every request but `/health` with a 503 that says
 * what to set, instead of serving open or redirecting clients to 127.0.0.1.
 */
app.use("*", async (c, next) => {
  const check = checkDeployment({
    authMode: c.env.AUTH_MODE,
    tokenSecret: c.env.TOKEN_SECRET,
    nodeCount: nodeIdsOf(c.env).length,
    publicOrigin: c.env.PUBLIC_ORIGIN,
  });
  if (check.ok || c.req.path === "/health") return next();
  workerLog.log("worker.config_refused", { problems: check.problems });
  return errorResponse(domainError("unavailable", `this deployment is not configured safely: ${check.problems.join("; ")}`));
});

app.route("/", healthRoutes);

/**
 * The Durable Streams protocol as one app, served the same way at every entry: the router (`/v1/stream/...`)
 * and each node's advertised address (`/n/<node-id>/v1/stream/...`), which a client may use as its base URL
 * (docs/architecture.md). The reserved `__ds` API (NAME-3: matched before stream names) is the Worker's at every
 * entry, since subscriptions live in the metadata log, not in a node; only where stream requests go differs.
 */
function protocolApp(streams: (c: Context<{ Bindings: Env }>) => Promise<Response>): Hono<{ Bindings: Env }> {
  const protocol = new Hono<{ Bindings: Env }>();
  // A client never speaks for the Worker: its copy of the internal identity header goes first.
  protocol.use("*", stripForwardedIdentity);
  // Access control first (src/http/access.ts): nothing is looked up or woken for a refused request.
  protocol.use("/v1/stream/__ds/*", subscriptionAccess);
  protocol.route("/v1/stream/__ds", subscriptionRoutes);
  protocol.use("/v1/stream/*", streamAccess);
  protocol.use("/v1/stream/*", forwardedIdentity);
  protocol.use("/v1/stream/*", activeContentGuard);
  protocol.all("/v1/stream/*", streams);
  return protocol;
}

/**
 * At the router (docs/router.md) each name is resolved in the cached view and served
 * through the local node, redirected (307) to its owner, or forwarded to it (ROUTER_MODE=forward). At a
 * node's address stream requests go straight to that node, which answers from its own view.
 */
app.route("/", protocolApp((c) => routeRequest(c.env, c.req.raw)));
app.use("/n/:node/*", async (c, next) => {
  if (!nodeIdsOf(c.env).includes(c.req.param("node"))) return errorResponse(domainError("not_found", "no such node"));
  return next();
});
app.route("/n/:node", protocolApp((c) => toNodeAddress(c.env, c.req.param("node"), c.req.raw)));

/**
 * Tables (docs/tables.md): at the router the table API (split by bucket, sent to the leaders); at a node's
 * address the bucket-addressed requests go to that node, which answers not_leader for a bucket it does not lead.
 */
app.use("/v1/table", tableAccess);
app.use("/v1/table/*", tableAccess);
app.route("/v1/table", tableRoutes());
app.use("/n/:node/v1/table/*", tableAccess);
app.all("/n/:node/v1/table/*", (c) => toNodeAddress(c.env, c.req.param("node"), c.req.raw));

/** The status page (docs/status-page.md): its files carry no data, so they are served before the token check. */
app.route("/", statusPageRoutes);
/** Operations (docs/operations.md): JSON views of the metadata log and Prometheus metrics, admin token only. */
app.route("/admin", adminRoutes);
app.get("/metrics", requireAdmin, (c) => metricsResponse(c.env));

app.notFound(() => errorResponse(domainError("not_found", "no such route")));

/** One answer for anything unexpected: logged here, never an internal message or stack to the caller. */
app.onError((error) => {
  workerLog.log("worker.error", { during: "request" }, error);
  return errorResponse(domainError("unavailable", "the request failed; retry"));
});

export default app satisfies ExportedHandler<Env>;
