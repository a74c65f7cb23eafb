// GET /health (src/http/health.ts): cheap and free of store details, whatever the store does; the deeper
// store round trip is /admin/health, behind the admin token.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { Env } from "../../src/env.ts";

const baseEnv = env as unknown as Env;
/** An object store nothing listens on: any round trip to it fails. */
const brokenStore: Partial<Env> = { S3_ENDPOINT: "http://127.0.0.1:1", S3_BUCKET: "secret-bucket-name" };

async function get(path: string, vars: Partial<Env> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`http://mink.test${path}`, { headers }), { ...baseEnv, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("health", () => {
  it("GET /health answers {ok: true} from the Worker alone: no store round trip, no store detail, even with the store down", async () => {
    const response = await get("/health", brokenStore);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{"ok":true}');
  });

  it("GET /admin/health needs the admin token, and then reports the store's round trip or its error", async () => {
    expect((await get("/admin/health", brokenStore)).status).toBe(401);
    const auth = { authorization: `Bearer ${baseEnv.ADMIN_TOKEN ?? ""}` };
    const down = await get("/admin/health", brokenStore, auth);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ ok: false, objectStore: { ok: false, error: expect.any(String) as string } });
    const up = await get("/admin/health", {}, auth);
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ ok: true, objectStore: { ok: true, latencyMs: expect.any(Number) as number } });
  });
});

describe("the root", () => {
  it("GET / says where the API, the status page and the docs are, in open and token mode (issue 22: it was a bare 404)", async () => {
    for (const vars of [{}, { AUTH_MODE: "token" }] as Partial<Env>[]) {
      const response = await get("/", vars);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ streams: "/v1/stream/<name>", tables: "/v1/table", statusPage: "/admin/", health: "/health" });
    }
    expect((await get("/nowhere")).status).toBe(404);
  });
});
