// GET /admin/nodes on a deployment no stream request has reached yet: the nodes register when they first
// start, so the endpoint starts them before reading the metadata log, and an operator's first look
// (`mink nodes` right after `npm run dev`) lists every node instead of none. Its own file: the nodes it
// registers would take placements in the other admin tests' metadata log.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { Env } from "../../src/env.ts";

const NODES = ["first-look-0", "first-look-1"];
const TOKEN = "mink-test-admin"; // vitest.config.ts binds it

describe("GET /admin/nodes", () => {
  it("lists every node of a fresh deployment before any stream request has started them", async () => {
    const vars: Env = { ...(env as unknown as Env), NODE_IDS: NODES.join(","), PUBLIC_ORIGIN: "http://127.0.0.1:8787" };
    const ctx = createExecutionContext();
    const response = await worker.fetch(new Request("http://mink.test/admin/nodes", { headers: { authorization: `Bearer ${TOKEN}` } }), vars, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    const body = await response.json<{ nodes: { id: string }[] }>();
    expect(body.nodes.map((node) => node.id).sort()).toEqual(NODES);
  });
});
