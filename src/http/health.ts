// Health checks. `GET /health` is unauthenticated, so it says nothing but that the Worker answers: no
// object-store round trip per call (a load balancer polling it would multiply store requests, and anyone
// could make the Worker list the bucket), no store error text (it can name the endpoint, the bucket or the
// credentials' owner). The deeper check, a round trip to the object store with its latency or its error,
// is `GET /admin/health`, behind the admin token like the other operations endpoints.
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { nodeObjectStore } from "../node/runtime/store-factory.ts";
import { requireAdmin } from "./admin-token.ts";

export const healthRoutes = new Hono<{ Bindings: Env }>();

healthRoutes.get("/health", (c) => c.json({ ok: true }, 200, { "cache-control": "no-store" }));

/** `GET /`: where things are, for someone who opened the Worker's address in a browser or with curl (no data). */
healthRoutes.get("/", (c) =>
  c.json(
    {
      service: "mink: durable streams over the Durable Streams protocol",
      streams: "/v1/stream/<name>",
      tables: "/v1/table",
      statusPage: "/admin/",
      health: "/health",
      docs: "README.md and docs/ in mink's repository",
    },
    200,
    { "cache-control": "no-store" },
  ),
);

healthRoutes.get("/admin/health", requireAdmin, async (c) => {
  const started = performance.now();
  try {
    // The store the nodes write to (an in-memory one under `memory://` in tests), not just the S3 settings.
    await nodeObjectStore(c.env).list("nodes/", { maxKeys: 1 });
    return c.json({ ok: true, objectStore: { ok: true, latencyMs: Math.round(performance.now() - started) } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return c.json({ ok: false, objectStore: { ok: false, error: message } }, 503);
  }
});
