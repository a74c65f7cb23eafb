// The operations endpoints through the Worker (docs/operations.md): the admin bearer token (401 without or
// with a wrong one, 503 when none is configured), /admin/nodes and /admin/streams/<path> from the metadata
// log, and /metrics in the Prometheus text format with counters that move when streams are written.
// Two nodes of their own, in forwarding mode so every stream request gets one answer from the Worker.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { Env } from "../../src/env.ts";
import { META_LOG_NAME, metaLogClient } from "../../durable-objects/meta-log.ts";

const NODES = ["adm-0", "adm-1"];
const TOKEN = "mink-test-admin"; // vitest.config.ts binds it
const adminEnv = (vars: Partial<Env> = {}): Env => ({ ...(env as unknown as Env), NODE_IDS: NODES.join(","), ROUTER_MODE: "forward", ...vars });
const meta = metaLogClient(adminEnv().META_LOG.getByName(META_LOG_NAME));
const ORIGIN = "http://mink.test";
const BEARER = { authorization: `Bearer ${TOKEN}` };
const TEXT = { "content-type": "text/plain" };

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string; vars?: Partial<Env> } = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`${ORIGIN}${path}`, { method, headers: init.headers, body: init.body ?? null });
  const response = await worker.fetch(request, adminEnv(init.vars), ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  return (await response.json<{ error: { code: string; message: string } }>()).error;
}

/** One sample's value from the exposition text (undefined when absent). */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function metrics(): Promise<string> {
  const response = await call("GET", "/metrics", { headers: BEARER });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  return response.text();
}

interface NodesBody {
  nodes: { id: string; epoch: number; address: string; slots: number; live: boolean; streams: number; openedStreams: number }[];
}

describe("admin endpoints", () => {
  it("answers 401 with WWW-Authenticate without a token or with a wrong one, on every admin path", async () => {
    for (const path of ["/admin/nodes", "/admin/streams/anything", "/metrics"]) {
      const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong-token" }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN}x` }];
      for (const headers of attempts) {
        const response = await call("GET", path, { headers });
        expect(response.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect((await errorOf(response)).code).toBe("unauthorized");
      }
    }
  });

  it("answers 503 when no ADMIN_TOKEN is configured: disabled, never open", async () => {
    for (const token of [undefined, ""]) {
      const response = await call("GET", "/admin/nodes", { headers: BEARER, vars: { ADMIN_TOKEN: token } });
      expect(response.status).toBe(503);
      const error = await errorOf(response);
      expect(error.code).toBe("unavailable");
      expect(error.message).toContain("ADMIN_TOKEN is not configured");
    }
  });

  it("lists the nodes with their live flags and stream counts, and shows a stream's ownership", async () => {
    const names = ["adm/one", "adm/two", "adm/three words"];
    for (const name of names) {
      const created = await call("PUT", `/v1/stream/${encodeURIComponent(name).replace(/%2F/g, "/")}`, { headers: TEXT, body: `body of ${name}` });
      expect(created.status, await created.clone().text()).toBe(201);
    }
    const response = await call("GET", "/admin/nodes", { headers: BEARER });
    expect(response.status).toBe(200);
    const { nodes } = await response.json<NodesBody>();
    expect(nodes.map((node) => node.id)).toEqual(NODES);
    for (const node of nodes) {
      expect(node.live).toBe(true);
      expect(node.address).toBe(`http://127.0.0.1:8787/n/${node.id}`);
      expect(node.epoch).toBeGreaterThan(0);
      expect(node.slots).toBeGreaterThan(0);
    }
    const owners = await Promise.all(names.map(async (name) => (await meta.lookupStream({ name })).stream?.owner));
    for (const node of nodes) expect(node.streams).toBe(owners.filter((owner) => owner === node.id).length);
    expect(nodes.reduce((sum, node) => sum + node.streams, 0)).toBe(3);

    const shown = await call("GET", "/admin/streams/adm/three%20words", { headers: BEARER });
    expect(shown.status).toBe(200);
    const record = await shown.json<Record<string, unknown>>();
    const { stream } = await meta.lookupStream({ name: "adm/three words" });
    expect(record).toMatchObject({
      id: stream?.id,
      name: "adm/three words",
      owner: stream?.owner,
      ownerAddress: `http://127.0.0.1:8787/n/${stream?.owner}`,
      epoch: stream?.epoch,
      ownership: "opened",
      pendingTransfer: null,
    });

    const unknown = await call("GET", "/admin/streams/adm/nope", { headers: BEARER });
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe("not_found");
    const invalid = await call("GET", "/admin/streams/adm%00x", { headers: BEARER });
    expect(invalid.status).toBe(400);
    expect((await errorOf(invalid)).code).toBe("invalid");
  });

  it("exposes Prometheus metrics whose append, byte and object-store counters move with an append", async () => {
    const created = await call("PUT", "/v1/stream/adm-metrics", { headers: TEXT, body: "seed" });
    expect(created.status).toBe(201);
    const owner = (await meta.lookupStream({ name: "adm-metrics" })).stream?.owner ?? "";
    const node = `node="${owner}"`;
    const before = await metrics();
    // HELP and TYPE once per metric, counters typed as such.
    expect(before.match(/^# HELP mink_appends_total /gm)).toHaveLength(1);
    expect(before).toContain("# TYPE mink_appends_total counter");
    expect(before).toContain("# TYPE mink_open_streams gauge");
    for (const id of NODES) expect(sample(before, `mink_node_up{node="${id}"}`)).toBe(1);
    expect(sample(before, "mink_meta_log_up")).toBe(1);
    expect(sample(before, "mink_meta_log_streams")).toBeGreaterThanOrEqual(1);
    expect(sample(before, `mink_open_streams{${node}}`)).toBeGreaterThanOrEqual(1);
    const putsBefore = sample(before, `mink_object_store_requests_total{${node},kind="put"}`) ?? -1;
    expect(putsBefore).toBeGreaterThan(0); // the create's WAL object, at least
    const appendsBefore = sample(before, `mink_appends_total{${node}}`) ?? -1;
    const bytesBefore = sample(before, `mink_appended_bytes_total{${node}}`) ?? -1;
    const flushesBefore = sample(before, `mink_wal_flushes_total{${node}}`) ?? -1;

    const appended = await call("POST", "/v1/stream/adm-metrics", { headers: TEXT, body: "12345" });
    expect(appended.status).toBe(204);
    const after = await metrics();
    expect(sample(after, `mink_appends_total{${node}}`)).toBe(appendsBefore + 1);
    expect(sample(after, `mink_appended_bytes_total{${node}}`)).toBe(bytesBefore + 5);
    expect(sample(after, `mink_wal_flushes_total{${node}}`)).toBe(flushesBefore + 1);
    expect(sample(after, `mink_object_store_requests_total{${node},kind="put"}`)).toBe(putsBefore + 1);
  });

  it("counts a waiting long-poll reader as a live reader until an append releases it", async () => {
    const created = await call("PUT", "/v1/stream/adm-live", { headers: TEXT, body: "x" });
    expect(created.status).toBe(201);
    const tail = created.headers.get("stream-next-offset") ?? "";
    const owner = (await meta.lookupStream({ name: "adm-live" })).stream?.owner ?? "";
    const series = `mink_live_readers{node="${owner}"}`;
    expect(sample(await metrics(), series)).toBe(0);
    const reading = call("GET", `/v1/stream/adm-live?offset=${encodeURIComponent(tail)}&live=long-poll`);
    let waiting = 0;
    for (let i = 0; i < 50 && waiting === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      waiting = sample(await metrics(), series) ?? 0;
    }
    expect(waiting).toBe(1);
    expect((await call("POST", "/v1/stream/adm-live", { headers: TEXT, body: "y" })).status).toBe(204);
    const read = await reading;
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("y");
    expect(sample(await metrics(), series)).toBe(0);
  });
});
