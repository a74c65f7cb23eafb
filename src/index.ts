// The mink Worker: the router in front of the metadata log and the stream nodes.
import { workerLog } from "./log/logger.ts";
import { Hono, type Context } from "hono";
import { domainError } from "./core/errors.ts";
import type { Env } from "./env.ts";
import { nodeIdsOf, routeRequest, routerSettings, toNodeAddress } from "./router/router.ts";
import { metricsResponse } from "./admin/metrics.ts";
import { adminRoutes } from "./admin/routes.ts";
import { requireAdmin } from "./http/admin-token.ts";
import { errorResponse, readBeforeRedirect } from "./http/responses.ts";
import { subscriptionRoutes } from "./http/subscription-routes.ts";
import { streamAccess, subscriptionAccess, tableAccess } from "./http/access.ts";
import { tableRoutes } from "./router/table-router.ts";
import { activeContentGuard } from "./http/active-content.ts";
import { checkDeployment, type DeploymentCheck } from "./core/auth/deployment.ts";
import { healthRoutes } from "./http/health.ts";
import { statusPageRoutes } from "./http/status-page.ts";
import { enterRequest, targetOf } from "./http/request-target.ts";

export { MetaLog } from "../durable-objects/meta-log.ts";
export { StreamNode } from "../durable-objects/stream-node.ts";

const app = new Hono<{ Bindings: Env }>();

/** Table DP's answer per env object: an isolate's vars do not change, and every request asked. */
const deploymentChecks = new WeakMap<Env, DeploymentCheck>();

function deploymentCheckOf(env: Env): DeploymentCheck {
  let check = deploymentChecks.get(env);
  if (check === undefined) {
    check = checkDeployment({
      authMode: env.AUTH_MODE,
      tokenSecret: env.TOKEN_SECRET,
      nodeCount: nodeIdsOf(env).length,
      publicOrigin: env.PUBLIC_ORIGIN,
      vars: { ...env },
    });
    deploymentChecks.set(env, check);
  }
  return check;
}

/**
 * A deployment whose settings would be unsafe (table DP: no TOKEN_SECRET in token mode, several nodes
 * and no PUBLIC_ORIGIN, an unknown AUTH_MODE, a var left holding a template's `<...>`) answers every request but `/health` with a 503 that says
 * what to set, instead of serving open or redirecting clients to 127.0.0.1.
 */
app.use("*", async (c, next) => {
  const check = deploymentCheckOf(c.env);
  if (check.ok || targetOf(c.req.raw).kind === "health") return next();
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
  // Access control first (src/http/access.ts): nothing is looked up or woken for a refused request.
  protocol.use("/v1/stream/__ds/*", subscriptionAccess);
  protocol.route("/v1/stream/__ds", subscriptionRoutes);
  protocol.use("/v1/stream/*", streamAccess);
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
  if (!nodeIdsOf(c.env).includes(nodeOf(c))) return errorResponse(domainError("not_found", "no such node"));
  return next();
});
app.route("/n/:node", protocolApp((c) => toNodeAddress(c.env, nodeOf(c), c.req.raw)));

/** The node address a request came through (`/n/<node>/...`), from its target. */
function nodeOf(c: { req: { raw: Request } }): string {
  const target = targetOf(c.req.raw);
  return "node" in target && target.node !== null ? target.node : "";
}

/**
 * Tables (docs/tables.md): at the router the table API (split by bucket, sent to the leaders); at a node's
 * address the bucket-addressed requests go to that node, which answers not_leader for a bucket it does not lead.
 */
app.use("/v1/table", tableAccess);
app.use("/v1/table/*", tableAccess);
app.route("/v1/table", tableRoutes());
app.use("/n/:node/v1/table/*", tableAccess);
app.all("/n/:node/v1/table/*", (c) => toNodeAddress(c.env, nodeOf(c), c.req.raw));

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

/**
 * The Worker's entry: every request is parsed once into what it acts on and re-spelled canonically before
 * anything else sees it (src/http/request-target.ts); an ambiguous or malformed path is a 400 here.
 */
const worker = {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const entered = enterRequest(request);
    if (!entered.ok) {
      // Read and dropped first (bounded), so a client still sending sees the 400, not a reset.
      await readBeforeRedirect(request, routerSettings(env).maxBodyBytes);
      return errorResponse(entered.error);
    }
    return app.fetch(entered.value, env, ctx);
  },
};

export default worker satisfies ExportedHandler<Env>;
