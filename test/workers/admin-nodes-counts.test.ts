// GET /admin/nodes counts table buckets apart from streams (table NC, src/core/meta/node-counts.ts): a table's
// buckets are streams inside, named under `__ds/table/`, and no stream listing shows them, so counting them
// as streams made the nodes' streams add up to more than `mink streams --all` lists. Its own file: the
// table's buckets would take placements in the other admin tests' metadata log.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { Env } from "../../src/env.ts";

const NODES = ["counts-0", "counts-1", "counts-2"];
const BEARER = { authorization: "Bearer mink-test-admin" }; // vitest.config.ts binds it
const vars: Env = { ...(env as unknown as Env), NODE_IDS: NODES.join(","), PUBLIC_ORIGIN: "http://127.0.0.1:8787", ROUTER_MODE: "forward" };

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`http://mink.test${path}`, { method, headers: init.headers, body: init.body ?? null }), vars, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

interface NodeCounts {
  id: string;
  streams: number;
  openedStreams: number;
  tableBuckets: number;
}

describe("GET /admin/nodes counts streams and table buckets apart", () => {
  it("NC2, NC3: a table with 4 buckets and 2 streams are 2 streams and 4 table buckets, and the streams add up to the stream list", async () => {
    const table = await call("PUT", "/v1/table/counts", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ columns: [{ name: "id", type: "string" }], primaryKey: ["id"], buckets: 4 }),
    });
    expect(table.status, await table.clone().text()).toBe(201);
    for (const name of ["counts/a", "counts/b"]) {
      const created = await call("PUT", `/v1/stream/${name}`, { headers: { "content-type": "text/plain" } });
      expect(created.status, await created.clone().text()).toBe(201);
    }

    const answer = await call("GET", "/admin/nodes", { headers: BEARER });
    expect(answer.status).toBe(200);
    const { nodes } = await answer.json<{ nodes: NodeCounts[] }>();
    expect(nodes.map((node) => node.id)).toEqual(NODES);
    const sum = (field: "streams" | "tableBuckets"): number => nodes.reduce((total, node) => total + node[field], 0);
    expect({ streams: sum("streams"), tableBuckets: sum("tableBuckets") }).toEqual({ streams: 2, tableBuckets: 4 });

    const listed = await (await call("GET", "/admin/streams?limit=1000", { headers: BEARER })).json<{ streams: { name: string }[] }>();
    expect(listed.streams.map((stream) => stream.name)).toEqual(["counts/a", "counts/b"]);
  });
});
