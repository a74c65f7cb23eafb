// GET /admin/series and the latency histograms of /metrics through the Worker (docs/observability.md): the
// series answers every node of NODE_IDS with its recent intervals (a node that has not started is up false
// with no samples), and a few appends show up in the interval counts and in the histograms' counts.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { metaLogClient, type Env } from "../../src/env.ts";
import type { SeriesSample } from "../../src/core/series.ts";
import type { StreamNode } from "../../durable-objects/stream-node.ts";

const NODES = ["obs-0", "obs-1"];
const DOWN = "obs-down";
const TOKEN = "mink-test-admin"; // vitest.config.ts binds it
const BEARER = { authorization: `Bearer ${TOKEN}` };
const TEXT = { "content-type": "text/plain" };
const seriesEnv = (ids: readonly string[]): Env => ({
  ...(env as unknown as Env),
  NODE_IDS: ids.join(","),
  PUBLIC_ORIGIN: "http://127.0.0.1:8787",
  ROUTER_MODE: "forward",
});
const meta = metaLogClient(seriesEnv(NODES).META_LOG);

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string; ids?: readonly string[] } = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`http://mink.test${path}`, { method, headers: init.headers, body: init.body ?? null });
  const response = await worker.fetch(request, seriesEnv(init.ids ?? NODES), ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

interface SeriesBody {
  intervalMs: number;
  nodes: { id: string; up: boolean; nodeEpoch: number | null; samples: SeriesSample[] }[];
}

async function series(ids: readonly string[] = NODES): Promise<SeriesBody> {
  const response = await call("GET", "/admin/series", { headers: BEARER, ids });
  expect(response.status).toBe(200);
  return response.json<SeriesBody>();
}

async function metricsText(): Promise<string> {
  const response = await call("GET", "/metrics", { headers: BEARER });
  expect(response.status).toBe(200);
  return response.text();
}

function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

async function ownerOf(name: string): Promise<string> {
  return (await meta.lookupStream({ name })).stream?.owner ?? "";
}

describe("GET /admin/series", () => {
  it("needs the admin token", async () => {
    expect((await call("GET", "/admin/series")).status).toBe(401);
  });

  it("counts a few appends in the owner's recent intervals, the current partial interval last", async () => {
    expect((await call("PUT", "/v1/stream/obs/series", { headers: TEXT })).status).toBe(201);
    for (const body of ["a", "bb", "ccc"]) expect((await call("POST", "/v1/stream/obs/series", { headers: TEXT, body })).status).toBe(204);
    const owner = await ownerOf("obs/series");
    const answer = await series();
    expect(answer.intervalMs).toBe(5_000);
    expect(answer.nodes.map((n) => n.id)).toEqual(NODES);
    const node = answer.nodes.find((n) => n.id === owner)!;
    expect(node.up).toBe(true);
    expect(node.nodeEpoch).toBeGreaterThan(0);
    expect(node.samples.length).toBeGreaterThanOrEqual(1);
    expect(node.samples.length).toBeLessThanOrEqual(60);
    const starts = node.samples.map((s) => s.startMs);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    const last = node.samples.at(-1)!;
    expect(last.durationMs).toBeLessThanOrEqual(5_000);
    expect(node.samples.reduce((n, s) => n + s.appends, 0)).toBe(3);
    expect(node.samples.reduce((n, s) => n + s.bytes, 0)).toBe(6);
    expect(node.samples.some((s) => s.appends > 0 && s.ackP50Ms !== null && s.ackP99Ms !== null)).toBe(true);
  });

  it("answers a node that has not started as up false with no samples", async () => {
    const stub = (env as unknown as Env).STREAM_NODE.getByName(DOWN) as DurableObjectStub<StreamNode>;
    await stub.setFault({ mode: "crash" });
    const answer = await series([...NODES, DOWN]);
    expect(answer.nodes.find((n) => n.id === DOWN)).toMatchObject({ up: false, samples: [] });
    expect(answer.nodes.filter((n) => n.id !== DOWN).every((n) => n.up)).toBe(true);
  });
});

describe("latency histograms in /metrics", () => {
  it("count each acknowledged append once in mink_append_ack_seconds, cumulative up to +Inf", async () => {
    expect((await call("PUT", "/v1/stream/obs/hist", { headers: TEXT, body: "x" })).status).toBe(201);
    const node = `node="${await ownerOf("obs/hist")}"`;
    const before = await metricsText();
    expect(before).toContain("# TYPE mink_append_ack_seconds histogram");
    expect(before).toContain("# TYPE mink_object_store_request_seconds histogram");
    const countBefore = sample(before, `mink_append_ack_seconds_count{${node}}`) ?? -1;
    for (const body of ["1", "2"]) expect((await call("POST", "/v1/stream/obs/hist", { headers: TEXT, body })).status).toBe(204);
    const after = await metricsText();
    const count = sample(after, `mink_append_ack_seconds_count{${node}}`);
    expect(count).toBe(countBefore + 2);
    expect(sample(after, `mink_append_ack_seconds_bucket{${node},le="+Inf"}`)).toBe(count);
    const buckets = after
      .split("\n")
      .filter((l) => l.startsWith(`mink_append_ack_seconds_bucket{${node},`))
      .map((l) => Number(l.slice(l.lastIndexOf(" ") + 1)));
    expect(buckets.length).toBe(14); // 13 bounds, 1 ms to 10 s, and +Inf
    expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
    expect(sample(after, `mink_append_ack_seconds_bucket{${node},le="0.001"}`)).toBeDefined();
    expect(sample(after, `mink_append_ack_seconds_bucket{${node},le="10"}`)).toBeDefined();
    // Every store request is timed once it settles: the WAL puts are in the put histogram, and it never
    // holds more than the put counter (a request still in flight is counted, not yet timed).
    const puts = sample(after, `mink_object_store_requests_total{${node},kind="put"}`) ?? -1;
    const timedPuts = sample(after, `mink_object_store_request_seconds_count{${node},kind="put"}`) ?? -1;
    expect(timedPuts).toBeGreaterThanOrEqual(3); // the create's and the two appends' WAL objects
    expect(timedPuts).toBeLessThanOrEqual(puts);
  });
});
