// The table admin endpoints (docs/tables.md, docs/operations.md), under /admin behind requireAdmin:
// `GET /admin/tables` (every table), `GET /admin/tables/<name>` (its buckets: leader, leader epoch, next
// offset, rows, snapshot offset, tiered offset; and its tiered copy's snapshot and lag: what `mink table`
// and the status page show), and
// `POST /admin/tables/<name>/snapshot` (snapshot every primary-key bucket now, at its leader), and
// `POST /admin/tables/<name>/tier` (a tiering round now, at the coordinator: docs/tiering.md).
import { workerLog } from "../log/logger.ts";
import { Hono } from "hono";
import { domainError } from "../core/errors.ts";
import { parseTableName } from "../core/tables/definition.ts";
import { snapshotTable, tableDescriptionWithStreams, tableList } from "../router/table-describe.ts";
import { nodeObjectStore } from "../node/runtime/store-factory.ts";
import { tieredStatus } from "../tiering/tiered-status.ts";
import { json, type AdminEnv } from "./common.ts";
import { errorResponse } from "../http/responses.ts";
import { atCoordinator } from "../router/table-coordinator.ts";

export const adminTableRoutes = new Hono<AdminEnv>();

adminTableRoutes.onError((error) => {
  workerLog.log("worker.error", { during: "admin_tables" }, error);
  return errorResponse(domainError("unavailable", "the metadata log or a leader did not answer; retry"));
});

adminTableRoutes.get("/tables", async (c) => json(await tableList(c.env)));

adminTableRoutes.get("/tables/:name", async (c) => {
  const name = parseTableName(c.req.param("name"));
  if (!name.ok) return errorResponse(name.error);
  const found = await tableDescriptionWithStreams(c.env, name.value);
  if (found === null) return errorResponse(domainError("not_found", "no such table", { table: name.value }));
  // The tiered copy (docs/tiering.md, "Lag"), read from the object store: null when never tiered, left out
  // when the store did not answer (the rest of the description does not depend on it).
  let tiered: Awaited<ReturnType<typeof tieredStatus>>;
  try {
    tiered = await tieredStatus(nodeObjectStore(c.env), name.value, found.streams, Date.now());
  } catch (error) {
    workerLog.log("worker.error", { during: "tiered_status", table: name.value }, error);
    return json(found.description);
  }
  return json({
    ...found.description,
    tiered: tiered === null ? null : { ...tiered, offsets: undefined },
    buckets: found.description.buckets.map((bucket, i) => ({ ...bucket, tieredOffset: tiered === null ? null : (tiered.offsets[found.streams[i]!.streamId]?.offset ?? 0) })),
  });
});

adminTableRoutes.post("/tables/:name/snapshot", async (c) => {
  const name = parseTableName(c.req.param("name"));
  if (!name.ok) return errorResponse(name.error);
  const buckets = await snapshotTable(c.env, name.value);
  return buckets === null ? errorResponse(domainError("not_found", "no such table", { table: name.value })) : json({ table: name.value, buckets });
});

adminTableRoutes.post("/tables/:name/tier", async (c) => {
  const name = parseTableName(c.req.param("name"));
  if (!name.ok) return errorResponse(name.error);
  const answer = await atCoordinator(c.env, (node) => node.tierTable(name.value));
  return answer.ok ? json(answer.report) : errorResponse(answer.error);
});
