// GET /metrics (docs/operations.md): every node's counters, gauges and latency histograms, and the
// metadata log's size, in the Prometheus text format, gathered over RPC behind the admin token. A node that
// does not answer shows only `mink_node_up 0`. Histograms are kept in ms by the nodes and exposed in
// seconds, the Prometheus base unit.
import type { HistogramSnapshot } from "../core/histogram.ts";
import { formatMetrics, METRICS_CONTENT_TYPE, type HistogramSample, type MetricFamily, type MetricSample } from "../core/metrics-text.ts";
import { type Env, streamNodeClient } from "../env.ts";
import type { MetaLogStats } from "../ports/meta-log-client.ts";
import { STORE_REQUEST_KINDS, type NodeMetrics } from "../ports/stream-node-client.ts";
import { nodeIdsOf } from "../router/router.ts";
import { workerLog } from "../log/logger.ts";
import { metaOf } from "./common.ts";
import { withSecurityHeaders } from "../http/security-headers.ts";

type Settled<T> = { ok: true; value: T } | { ok: false };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => {
      workerLog.log("worker.error", { during: "metrics_source" }, error);
      return { ok: false as const };
    },
  );
}

/** Every node of NODE_IDS asked for its meters at once: the ones that answered, by id. */
export async function nodeMetricsOf(env: Env, ids: readonly string[]): Promise<Map<string, NodeMetrics>> {
  const nodes = await Promise.all(ids.map((id) => settle<NodeMetrics>(streamNodeClient(env.STREAM_NODE, id).metrics())));
  const answered = new Map<string, NodeMetrics>();
  ids.forEach((id, i) => {
    const node = nodes[i];
    if (node?.ok === true) answered.set(id, node.value);
  });
  return answered;
}

/** GET /metrics (behind requireAdmin): every node's counters and the metadata log's size, as text. */
export async function metricsResponse(env: Env): Promise<Response> {
  const ids = nodeIdsOf(env);
  const [stats, answered] = await Promise.all([settle(metaOf(env).stats()), nodeMetricsOf(env, ids)]);
  const body = formatMetrics(metricFamilies(ids, answered, stats.ok ? stats.value : null));
  const headers = withSecurityHeaders(new Headers({ "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" }));
  return new Response(body, { status: 200, headers });
}

/** A histogram kept in ms, as a sample in seconds. */
function inSeconds(labels: Record<string, string>, histogram: HistogramSnapshot): HistogramSample {
  return {
    labels,
    buckets: histogram.boundsMs.map((boundMs, i) => ({ le: boundMs / 1_000, count: histogram.cumulative[i] ?? 0 })),
    sum: histogram.sumMs / 1_000,
    count: histogram.count,
  };
}

/** The samples: per-node families (nodes that did not answer only show `mink_node_up 0`), then the log's. */
function metricFamilies(ids: readonly string[], nodes: ReadonlyMap<string, NodeMetrics>, meta: MetaLogStats | null): MetricFamily[] {
  return [...nodeDataFamilies(ids, nodes), ...nodeClusterFamilies(ids, nodes), ...metaLogFamilies(meta)];
}

/** One sample per node that answered, labelled with its id. */
function perNode(ids: readonly string[], nodes: ReadonlyMap<string, NodeMetrics>, pick: (m: NodeMetrics) => number): MetricSample[] {
  return ids.flatMap((id) => {
    const m = nodes.get(id);
    return m === undefined ? [] : [{ labels: { node: id }, value: pick(m) }];
  });
}

/** Each node's liveness and data path: appends, object-store requests and latencies, WAL, readers. */
function nodeDataFamilies(ids: readonly string[], nodes: ReadonlyMap<string, NodeMetrics>): MetricFamily[] {
  const byNode = (pick: (m: NodeMetrics) => number): MetricSample[] => perNode(ids, nodes, pick);
  return [
    {
      name: "mink_node_up",
      help: "1 when the node answered and has started, else 0.",
      type: "gauge",
      samples: ids.map((id) => ({ labels: { node: id }, value: nodes.get(id)?.started === true ? 1 : 0 })),
    },
    { name: "mink_node_epoch", help: "The node's epoch (ms at its start); counters reset when it changes.", type: "gauge", samples: byNode((m) => m.nodeEpoch) },
    { name: "mink_appends_total", help: "Appends acknowledged (data and/or close).", type: "counter", samples: byNode((m) => m.appendsAcknowledged) },
    { name: "mink_appended_bytes_total", help: "Stream data bytes acknowledged (appends and create bodies).", type: "counter", samples: byNode((m) => m.bytesAppended) },
    {
      name: "mink_object_store_requests_total",
      help: "Object-store requests made by the node, by kind.",
      type: "counter",
      samples: ids.flatMap((id) => {
        const m = nodes.get(id);
        return m === undefined ? [] : STORE_REQUEST_KINDS.map((kind) => ({ labels: { node: id, kind }, value: m.storeRequests[kind] }));
      }),
    },
    {
      name: "mink_append_ack_seconds",
      help: "Append latency at the node: from the request's arrival to its acknowledgement (WAL object durable).",
      type: "histogram",
      samples: ids.flatMap((id) => {
        const m = nodes.get(id);
        return m === undefined ? [] : [inSeconds({ node: id }, m.ackLatency)];
      }),
    },
    {
      name: "mink_object_store_request_seconds",
      help: "Object-store request latency at the node, by kind, until the request settled (failures included).",
      type: "histogram",
      samples: ids.flatMap((id) => {
        const m = nodes.get(id);
        return m === undefined ? [] : STORE_REQUEST_KINDS.map((kind) => inSeconds({ node: id, kind }, m.storeLatency[kind]));
      }),
    },
    { name: "mink_wal_flushes_total", help: "WAL objects written (one per flushed batch).", type: "counter", samples: byNode((m) => m.walFlushes) },
    { name: "mink_wal_written_bytes_total", help: "Bytes of WAL objects written.", type: "counter", samples: byNode((m) => m.walBytesWritten) },
    { name: "mink_wal_objects_in_flight", help: "WAL objects sent and not yet acknowledged (at most WAL_MAX_IN_FLIGHT).", type: "gauge", samples: byNode((m) => m.walInFlight) },
    {
      name: "mink_wal_round_trip_seconds",
      help: "The WAL PUT round trip the batching follows (a moving average of the objects that landed).",
      type: "gauge",
      samples: byNode((m) => m.walRoundTripMs / 1000),
    },
    { name: "mink_open_streams", help: "Streams the node holds in memory.", type: "gauge", samples: byNode((m) => m.openStreams) },
    { name: "mink_streams_evicted_total", help: "Idle streams evicted from memory (still owned by the node).", type: "counter", samples: byNode((m) => m.streamsEvicted) },
    { name: "mink_streams_reloaded_total", help: "Evicted streams reloaded from their manifests by a request.", type: "counter", samples: byNode((m) => m.streamsReloaded) },
    { name: "mink_live_readers", help: "Long-poll and SSE readers waiting at a tail.", type: "gauge", samples: byNode((m) => m.liveReaders) },
  ];
}

/** Each node's part in the cluster: transfer steps, the coordinator lease, takeovers of dead incarnations. */
function nodeClusterFamilies(ids: readonly string[], nodes: ReadonlyMap<string, NodeMetrics>): MetricFamily[] {
  const byNode = (pick: (m: NodeMetrics) => number): MetricSample[] => perNode(ids, nodes, pick);
  return [
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
      samples: byNode((m) => (m.coordinator.coordinatorEpoch === null ? 0 : 1)),
    },
    { name: "mink_node_takeovers_total", help: "Takeovers of dead incarnations this node completed.", type: "counter", samples: byNode((m) => m.takeovers.completed) },
    {
      name: "mink_node_takeover_duration_ms_total",
      help: "Milliseconds this node spent in completed takeovers (seal, replay, manifests).",
      type: "counter",
      samples: byNode((m) => m.takeovers.totalDurationMs),
    },
    { name: "mink_node_takeover_duration_ms_max", help: "The longest takeover this node completed, in ms.", type: "gauge", samples: byNode((m) => m.takeovers.maxDurationMs) },
    {
      name: "mink_node_takeover_wal_objects_total",
      help: "WAL objects of dead incarnations this node replayed in takeovers.",
      type: "counter",
      samples: byNode((m) => m.takeovers.walObjectsReplayed),
    },
  ];
}

/** The metadata log's size and history; only whether it answered when it did not. */
function metaLogFamilies(meta: MetaLogStats | null): MetricFamily[] {
  const up: MetricFamily[] = [
    { name: "mink_meta_log_up", help: "1 when the metadata log answered.", type: "gauge", samples: [{ value: meta === null ? 0 : 1 }] },
  ];
  if (meta === null) return up;
  return [
    ...up,
    { name: "mink_meta_log_version", help: "The metadata log's version (last applied entry).", type: "gauge", samples: [{ value: meta.version }] },
    { name: "mink_meta_log_nodes", help: "Nodes registered in the metadata log.", type: "gauge", samples: [{ value: meta.nodes }] },
    { name: "mink_meta_log_streams", help: "Streams registered in the metadata log.", type: "gauge", samples: [{ value: meta.streams }] },
    { name: "mink_meta_log_pending_transfers", help: "Stream transfers pending.", type: "gauge", samples: [{ value: meta.pendingTransfers }] },
    { name: "mink_coordinator_epoch", help: "The coordinator epoch of the last lease granted.", type: "gauge", samples: [{ value: meta.coordinatorEpoch }] },
    { name: "mink_failovers_total", help: "Node incarnations declared dead since the metadata log started.", type: "counter", samples: [{ value: meta.failovers }] },
    { name: "mink_takeovers_total", help: "Takeovers of dead incarnations completed since the metadata log started.", type: "counter", samples: [{ value: meta.takeovers }] },
    {
      name: "mink_meta_proposals_total",
      help: "Proposals the metadata log applied at once, applied grouped at a window's end, or refused because too many waited.",
      type: "counter",
      samples: (["immediate", "grouped", "refused"] as const).map((path) => ({ labels: { path }, value: meta.proposals[path] })),
    },
    { name: "mink_meta_proposal_groups_total", help: "Groups of waiting proposals the metadata log applied together (one commit each).", type: "counter", samples: [{ value: meta.proposals.groups }] },
    { name: "mink_takeovers_pending", help: "Nodes declared dead whose takeover has not completed.", type: "gauge", samples: [{ value: meta.takeoversPending }] },
  ];
}
