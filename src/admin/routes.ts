// Operations endpoints (docs/operations.md), served by the Worker and guarded by the admin
// bearer token (ADMIN_TOKEN): `GET /admin/nodes` and `GET /admin/streams/<path>` as JSON from the metadata
// log; `GET /metrics` (metrics.ts) and `GET /admin/series` (series.ts) gather every node's meters over
// RPC. Slots, transfers and drain are in transfers.ts, mounted here behind the same token (the check is
// src/http/admin-token.ts, which /admin/health shares). Errors use the one error table (src/http/error-table.ts).
import { Hono } from "hono";
import { domainError } from "../core/errors.ts";
import { NO_OWNED } from "../core/meta/node-counts.ts";
import { wakeNodes } from "../router/router.ts";
import { json, metaOf, type AdminEnv } from "./common.ts";
import { adminFaultRoutes } from "./faults.ts";
import { adminSeriesRoutes } from "./series.ts";
import { adminStreamRoutes } from "./streams.ts";
import { adminTableRoutes } from "./tables.ts";
import { workerLog } from "../log/logger.ts";
import { adminTokenRoutes } from "./tokens.ts";
import { adminTransferRoutes } from "./transfers.ts";
import { errorResponse } from "../http/responses.ts";
import { requireAdmin } from "../http/admin-token.ts";


export const adminRoutes = new Hono<AdminEnv>();
adminRoutes.use("*", requireAdmin);

/** Registered nodes with liveness and how many streams and table buckets each owns (table NC, counted over the whole view: admin only). */
adminRoutes.get("/nodes", async (c) => {
  // A node registers when it first starts, and the router starts them on its first stream request: an
  // operator's first look at a fresh deployment (`mink nodes`) starts them too, instead of listing none.
  await wakeNodes(c.env);
  const meta = metaOf(c.env);
  const [view, liveness] = await Promise.all([meta.nodesView(), meta.liveness()]);
  const byId = new Map(liveness.map((entry) => [entry.nodeId, entry]));
  const owned = new Map(view.owned);
  const lease = view.lease;
  const nowMs = Date.now();
  return json({
    version: view.version,
    coordinator:
      lease === null ? null : { holder: lease.holder, coordinatorEpoch: lease.coordinatorEpoch, expired: nowMs >= lease.expiresAtMs, expiresInMs: lease.expiresAtMs - nowMs },
    nodes: view.nodes.map((node) => ({
      id: node.id,
      epoch: node.epoch,
      address: node.addr,
      slots: node.slots,
      draining: node.draining,
      live: byId.get(node.id)?.live ?? false,
      lastHeartbeatAgoMs: byId.get(node.id)?.lastHeartbeatAgoMs ?? null,
      coordinator: lease !== null && lease.holder === node.id && nowMs < lease.expiresAtMs,
      declaredDead: node.dead === undefined ? null : { epoch: node.dead.epoch, takeoverBy: node.dead.claim?.by ?? null },
      takenOverThrough: node.takenOver ?? null,
      // Table NC: streams of the stream API apart from table buckets (no stream listing shows those).
      ...(owned.get(node.id) ?? NO_OWNED),
    })),
  });
});

/** The stream listing and one stream's record (streams.ts). */
adminRoutes.route("/", adminStreamRoutes);
/** Slots, transfers and drain (transfers.ts), behind the same token. */
adminRoutes.route("/", adminTransferRoutes);
/** Fault injection for tests (faults.ts): present only with FAULTS_ENABLED=1. */
adminRoutes.route("/", adminFaultRoutes);
/** Access tokens (tokens.ts): mint, revoke, list. */
adminRoutes.route("/", adminTokenRoutes);
/** The recent series per node for the status page's charts (series.ts). */
adminRoutes.route("/", adminSeriesRoutes);
/** Tables: the list, one table's buckets, a snapshot now (tables.ts). */
adminRoutes.route("/", adminTableRoutes);

/** One answer for anything unexpected: logged here, never an internal message or stack to the caller. */
adminRoutes.onError((error) => {
  workerLog.log("worker.error", { during: "admin_request" }, error);
  return errorResponse(domainError("unavailable", "the admin request failed; retry"));
});
