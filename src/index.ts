// The mink Worker: the router in front of the metadata log and the stream nodes.
import { Hono } from "hono";
import type { Env } from "./env.ts";
import { objectStoreFromSettings } from "./storage/store-from-env.ts";

export { MetaLog } from "../durable-objects/meta-log.ts";
export { StreamNode } from "../durable-objects/stream-node.ts";

const app = new Hono<{ Bindings: Env }>();

/** Liveness plus a round trip to the object store, so a misconfigured bucket shows up at once. */
app.get("/health", async (c) => {
  const started = performance.now();
  try {
    await objectStoreFromSettings(c.env).list("nodes/", { maxKeys: 1 });
    return c.json({ ok: true, objectStore: { ok: true, latencyMs: Math.round(performance.now() - started) } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return c.json({ ok: false, objectStore: { ok: false, error: message } }, 503);
  }
});

app.notFound((c) => c.json({ error: { code: "not_found", message: "no such route" } }, 404));

export default app satisfies ExportedHandler<Env>;
