// Operations endpoints (docs/operations.md), served by the Worker and guarded by the admin
// bearer token (ADMIN_TOKEN): `GET /admin/nodes` and `GET /admin/streams/<path>` as JSON from the metadata
// log, and `GET /metrics` in the Prometheus text format, gathered from every node of NODE_IDS over RPC plus
// the metadata log's stats. Slots, transfers and drain are in admin-transfers.ts, mounted here
// behind the same token. Errors use the one error table (src/http/error-table.ts).
import { Hono, type MiddlewareHandler } from "hono";
import { domainError } from "../core/errors.ts";
import { formatMetrics, METRICS_CONTENT_TYPE, type MetricFamily, type MetricSample } from "../core/metrics-text.ts";
import { parseBearer } from "../core/subscriptions/index.ts";
import { type Env, streamNodeClient } from "../env.ts";
import { STORE_REQUEST_KINDS, type NodeMetrics } from "../ports/stream-node-client.ts";
import { nodeIdsOf } from "../router/router.ts";
import type { MetaLogStats } from "../ports/meta-log-client.ts";
import { json, metaOf, type AdminEnv } from "./admin-common.ts";
import { adminFaultRoutes } from "./admin-faults.ts";
import { adminStreamRoutes } from "./admin-streams.ts";
import { adminTokenRoutes } from "./admin-tokens.ts";
import { adminTransferRoutes } from "./admin-transfers.ts";
import { withSecurityHeaders } from "./security-headers.ts";
import { errorResponse } from "./stream-routes.ts";

const encoder = new TextEncoder();

/**
 * Compares digests, not the tokens: equal lengths for timingSafeEqual, and neither the token's content
 * nor its length leaks through timing.
 */
async function sameToken(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(presented)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/**
 * The admin bearer token check. No ADMIN_TOKEN configured: 503 (the endpoints are disabled, never open);
 * missing or wrong token: 401 with `WWW-Authenticate: Bearer`.
 */
export const requireAdmin: MiddlewareHandler<AdminEnv> = async (c, next) => {
  const expected = c.env.ADMIN_TOKEN ?? "";
  if (expected === "") {
    return errorResponse(domainError("unavailable", "the admin endpoints are disabled: ADMIN_TOKEN is not configured"));
  }
  const presented = parseBearer(c.req.header("authorization") ?? null);
  if (presented === null || !(await sameToken(presented, expected))) {
    const response = errorResponse(domainError("unauthorized", "a valid admin bearer token is required"));
    response.headers.set("www-authenticate", 'Bearer realm="mink-admin"');
    return response;
  }
  return next();
};

export const adminRoutes = new Hono<AdminEnv>();
adminRoutes.use("*", requireAdmin);

/** Registered nodes with liveness and how many streams each owns (counted over the whole view: admin only). */
adminRoutes.get("/nodes", async (c) => {
  const meta = metaOf(c.env);
  const [view, liveness] = await Promise.all([meta.view(), meta.liveness()]);
  const byId = new Map(liveness.map((entry) => [entry.nodeId, entry]));
  const owned = new Map<string, { streams: number; opened: number }>();
  for (const stream of view.streams) {
    if (stream.owner === null) continue;
    const count = owned.get(stream.owner) ?? { streams: 0, opened: 0 };
    count.streams++;
    if (stream.ownership === "opened") count.opened++;
    owned.set(stream.owner, count);
  }
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
      streams: owned.get(node.id)?.streams ?? 0,
      openedStreams: owned.get(node.id)?.opened ?? 0,
    })),
  });
});

/** The stream listing and one stream's record (admin-streams.ts). */
adminRoutes.route("/", adminStreamRoutes);
/** Slots, transfers and drain (admin-transfers.ts), behind the same token. */
adminRoutes.route("/", adminTransferRoutes);
/** Fault injection for tests (admin-faults.ts): present only with FAULTS_ENABLED=1. */
adminRoutes.route("/", adminFaultRoutes);
/** Access tokens (admin-tokens.ts): mint, revoke, list. */
adminRoutes.route("/", adminTokenRoutes);

/** One answer for anything unexpected: logged here, never an internal message or stack to the caller. */
adminRoutes.onError((error) => {
  console.error("admin request failed", error);
  return errorResponse(domainError("unavailable", "the admin request failed; retry"));
});

type Settled<T> = { ok: true; value: T } | { ok: false };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => {
      console.error("a metrics source did not answer", error);
      return { ok: false as const };
    },
  );
}

/** GET /metrics (behind requireAdmin): every node's counters and the metadata log's size, as text. */
export async function metricsResponse(env: Env): Promise<Response> {
  const ids = nodeIdsOf(env);
  const [stats, ...nodes] = await Promise.all([
    settle(metaOf(env).stats()),
    ...ids.map((id) => settle<NodeMetrics>(streamNodeClient(env.STREAM_NODE, id).metrics())),
  ]);
  const answered = new Map<string, NodeMetrics>();
  ids.forEach((id, i) => {
    const node = nodes[i];
    if (node?.ok === true) answered.set(id, node.value);
  });
  const body = formatMetrics(metricFamilies(ids, answered, stats?.ok === true ? stats.value : null));
  const headers = withSecurityHeaders(new Headers({ "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" }));
  return new Response(body, { status: 200, headers });
}

/** The samples: per-node families (nodes that did not answer only show `mink_node_up 0`), then the log's. */
function metricFamilies(ids: readonly string[], nodes: ReadonlyMap<string, NodeMetrics>, meta: MetaLogStats | null): MetricFamily[] {
  const perNode = (pick: (m: NodeMetrics) => number): MetricSample[] =>
    ids.flatMap((id) => {
      const m = nodes.get(id);
      return m === undefined ? [] : [{ labels: { node: id }, value: pick(m) }];
    });
  const families: MetricFamily[] = [
    {
      name: "mink_node_up",
      help: "1 when the node answered and has started, else 0.",
      type: "gauge",
      samples: ids.map((id) => ({ labels: { node: id }, value: nodes.get(id)?.started === true ? 1 : 0 })),
    },
    { name: "mink_node_epoch", help: "The node's epoch (ms at its start); counters reset when it changes.", type: "gauge", samples: perNode((m) => m.nodeEpoch) },
    { name: "mink_appends_total", help: "Appends acknowledged (data and/or close).", type: "counter", samples: perNode((m) => m.appendsAcknowledged) },
    { name: "mink_appended_bytes_total", help: "Stream data bytes acknowledged (appends and create bodies).", type: "counter", samples: perNode((m) => m.bytesAppended) },
    {
      name: "mink_object_store_requests_total",
      help: "Object-store requests made by the node, by kind.",
      type: "counter",
      samples: ids.flatMap((id) => {
        const m = nodes.get(id);
        return m === undefined ? [] : STORE_REQUEST_KINDS.map((kind) => ({ labels: { node: id, kind }, value: m.storeRequests[kind] }));
      }),
    },
    { name: "mink_wal_flushes_total", help: "WAL objects written (one per flushed batch).", type: "counter", samples: perNode((m) => m.walFlushes) },
    { name: "mink_wal_written_bytes_total", help: "Bytes of WAL objects written.", type: "counter", samples: perNode((m) => m.walBytesWritten) },
    { name: "mink_open_streams", help: "Streams the node holds in memory.", type: "gauge", samples: perNode((m) => m.openStreams) },
    { name: "mink_live_readers", help: "Long-poll and SSE readers waiting at a tail.", type: "gauge", samples: perNode((m) => m.liveReaders) },
    {
      name: "mink_transfer_steps_total",
      help: "Transfer steps the node's watcher took: hand_off (source), complete, open (target), failed (retried).",
      type: "counter",
      samples: ids.flatMap((id) => {
        const steps = nodes.get(id)?.transferSteps;
        if (steps === undefined) return [];
        return [
          { labels: { node: id, step: "hand_off" }, value: steps.handOffs },
          { labels: { node: id, step: "complete" }, value: steps.completions },
          { labels: { node: id, step: "open" }, value: steps.adoptions },
          { labels: { node: id, step: "failed" }, value: steps.failures },
        ];
      }),
    },
    {
      name: "mink_node_coordinator",
      help: "1 on the node that holds the coordinator lease (as the node believes), else 0.",
      type: "gauge",
      samples: perNode((m) => (m.coordinator.coordinatorEpoch === null ? 0 : 1)),
    },
    { name: "mink_node_takeovers_total", help: "Takeovers of dead incarnations this node completed.", type: "counter", samples: perNode((m) => m.takeovers.completed) },
    {
      name: "mink_node_takeover_duration_ms_total",
      help: "Milliseconds this node spent in completed takeovers (seal, replay, manifests).",
      type: "counter",
      samples: perNode((m) => m.takeovers.totalDurationMs),
    },
    { name: "mink_node_takeover_duration_ms_max", help: "The longest takeover this node completed, in ms.", type: "gauge", samples: perNode((m) => m.takeovers.maxDurationMs) },
    {
      name: "mink_node_takeover_wal_objects_total",
      help: "WAL objects of dead incarnations this node replayed in takeovers.",
      type: "counter",
      samples: perNode((m) => m.takeovers.walObjectsReplayed),
    },
    { name: "mink_meta_log_up", help: "1 when the metadata log answered.", type: "gauge", samples: [{ value: meta === null ? 0 : 1 }] },
  ];
  if (meta !== null) {
    families.push(
      { name: "mink_meta_log_version", help: "The metadata log's version (last applied entry).", type: "gauge", samples: [{ value: meta.version }] },
      { name: "mink_meta_log_nodes", help: "Nodes registered in the metadata log.", type: "gauge", samples: [{ value: meta.nodes }] },
      { name: "mink_meta_log_streams", help: "Streams registered in the metadata log.", type: "gauge", samples: [{ value: meta.streams }] },
      { name: "mink_meta_log_pending_transfers", help: "Stream transfers pending.", type: "gauge", samples: [{ value: meta.pendingTransfers }] },
      { name: "mink_coordinator_epoch", help: "The coordinator epoch of the last lease granted.", type: "gauge", samples: [{ value: meta.coordinatorEpoch }] },
      { name: "mink_failovers_total", help: "Node incarnations declared dead since the metadata log started.", type: "counter", samples: [{ value: meta.failovers }] },
      { name: "mink_takeovers_total", help: "Takeovers of dead incarnations completed since the metadata log started.", type: "counter", samples: [{ value: meta.takeovers }] },
      { name: "mink_takeovers_pending", help: "Nodes declared dead whose takeover has not completed.", type: "gauge", samples: [{ value: meta.takeoversPending }] },
    );
  }
  return families;
}
