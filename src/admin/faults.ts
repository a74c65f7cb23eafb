// Fault injection for the end-to-end tests (docs/failover.md): `POST /admin/faults` with
// `{"node": "<id>", "mode": "crash" | "zombie" | "pause" | "heal", "ms": <n>}` and `GET /admin/faults`,
// behind the admin token, and only when FAULTS_ENABLED=1 (otherwise both answer 404 as if absent;
// wrangler.toml leaves it off). The node carries the fault out (StreamNode.setFault).
import { workerLog } from "../log/logger.ts";
import { Hono } from "hono";
import { z } from "zod";
import { domainError } from "../core/errors.ts";
import { streamNodeClient } from "../env.ts";
import { nodeIdsOf } from "../router/router.ts";
import { json, readBody, type AdminEnv } from "./common.ts";
import { errorResponse } from "../http/responses.ts";

/** The longest pause one request may ask for. */
const MAX_PAUSE_MS = 600_000;

const faultBody = z
  .object({
    node: z.string().min(1).max(256),
    mode: z.enum(["crash", "zombie", "pause", "heal"]),
    ms: z.number().int().min(1).max(MAX_PAUSE_MS).optional(),
  })
  .strict()
  .refine((body) => body.mode !== "pause" || body.ms !== undefined, { message: "pause needs ms" });

export const adminFaultRoutes = new Hono<AdminEnv>();

adminFaultRoutes.use("/faults", async (c, next) => {
  if (c.env.FAULTS_ENABLED !== "1") return errorResponse(domainError("not_found", "fault injection is off (FAULTS_ENABLED=1 enables it)"));
  return next();
});

adminFaultRoutes.get("/faults", async (c) => {
  const faults = await Promise.all(nodeIdsOf(c.env).map((id) => streamNodeClient(c.env.STREAM_NODE, id).fault()));
  return json({ faults });
});

adminFaultRoutes.post("/faults", async (c) => {
  const body = await readBody(c, faultBody);
  if (!body.ok) return errorResponse(body.error);
  const { node, mode, ms } = body.value;
  if (!nodeIdsOf(c.env).includes(node)) return errorResponse(domainError("not_found", "no such node in NODE_IDS", { nodeId: node }));
  const state = await streamNodeClient(c.env.STREAM_NODE, node).setFault(ms === undefined ? { mode } : { mode, ms });
  workerLog.log("fault.injected", { target: node, mode, ms: ms ?? null });
  return json(state);
});
