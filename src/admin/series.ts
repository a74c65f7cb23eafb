// GET /admin/series (docs/observability.md): the recent series of every node of NODE_IDS for the status
// page's charts, behind the admin token (mounted in routes.ts). Each node keeps the last
// SERIES_SAMPLES intervals of SERIES_INTERVAL_MS (src/core/series.ts); a node that did not answer, or has
// not started, is `up: false` with no samples.
import { Hono } from "hono";
import { SERIES_INTERVAL_MS } from "../core/series.ts";
import { nodeIdsOf } from "../router/router.ts";
import { json, type AdminEnv } from "./common.ts";
import { nodeMetricsOf } from "./metrics.ts";

export const adminSeriesRoutes = new Hono<AdminEnv>();

adminSeriesRoutes.get("/series", async (c) => {
  const ids = nodeIdsOf(c.env);
  const answered = await nodeMetricsOf(c.env, ids);
  return json({
    intervalMs: SERIES_INTERVAL_MS,
    nodes: ids.map((id) => {
      const m = answered.get(id);
      const up = m?.started === true;
      return { id, up, nodeEpoch: m?.nodeEpoch ?? null, samples: up ? m.series : [] };
    }),
  });
});
