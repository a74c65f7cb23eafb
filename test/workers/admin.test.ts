// The operations endpoints through the Worker (docs/operations.md): the admin bearer token (401 without or
// with a wrong one, 503 when none is configured), /admin/nodes and /admin/streams/<path> from the metadata
// log, and /metrics in the Prometheus text format with counters that move when streams are written.
// Three nodes of their own, in forwarding mode so every stream request gets one answer from the Worker.
// Then slots, transfers and drain (docs/operations.md): each endpoint's success and error rows. Served nodes
// may complete transfers on their own at any time, so tests on them assert on what the MetaLog shows in the
// answer of the call (or what holds however far the handoff got); the exact BeginTransfer and drain rows use
// "ghost" nodes registered straight in the MetaLog, which no Durable Object runs, so their transfers stay
// pending. Last, POST /admin/rebalance: a dry run, a real round capped by maxConcurrent, and its bad bodies.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { Env } from "../../src/env.ts";
import { diagnosticMetaLog } from "./diagnostic-meta-log.ts";
import { eventually } from "../support/eventually.ts";

const NODES = ["adm-0", "adm-1", "adm-2"];
const TOKEN = "mink-test-admin"; // vitest.config.ts binds it
const adminEnv = (vars: Partial<Env> = {}): Env => ({ ...(env as unknown as Env), NODE_IDS: NODES.join(","), PUBLIC_ORIGIN: "http://127.0.0.1:8787", ROUTER_MODE: "forward", ...vars });
const meta = diagnosticMetaLog(adminEnv().META_LOG);
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
    // The append was answered once its object landed: nothing of it is in flight; its round trip was seen.
    expect(sample(after, `mink_wal_objects_in_flight{${node}}`)).toBe(0);
    expect(sample(after, `mink_wal_round_trip_seconds{${node}}`)).toBeGreaterThanOrEqual(0);
  });

  it("counts a waiting long-poll reader as a live reader until an append releases it", async () => {
    const created = await call("PUT", "/v1/stream/adm-live", { headers: TEXT, body: "x" });
    expect(created.status).toBe(201);
    const tail = created.headers.get("stream-next-offset") ?? "";
    const owner = (await meta.lookupStream({ name: "adm-live" })).stream?.owner ?? "";
    const series = `mink_live_readers{node="${owner}"}`;
    expect(sample(await metrics(), series)).toBe(0);
    const reading = call("GET", `/v1/stream/adm-live?offset=${encodeURIComponent(tail)}&live=long-poll`);
    // Counted once the node holds the request waiting at the tail (no other reader waits on that node).
    const waiting = await eventually(
      async () => {
        const count = sample(await metrics(), series) ?? 0;
        return count !== 0 && count;
      },
      { what: `${series} above 0`, errors: "fail" },
    );
    expect(waiting).toBe(1);
    expect((await call("POST", "/v1/stream/adm-live", { headers: TEXT, body: "y" })).status).toBe(204);
    const read = await reading;
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("y");
    expect(sample(await metrics(), series)).toBe(0);
  });
});

interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  details?: Record<string, unknown>;
}

async function fullErrorOf(response: Response): Promise<ErrorBody> {
  return (await response.json<{ error: ErrorBody }>()).error;
}

/** An admin call with the token; `body` is sent as JSON unless it is already a string. */
async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  if (body === undefined) return call(method, path, { headers: BEARER });
  return call(method, path, {
    headers: { ...BEARER, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function expectError(response: Response, status: number, code: string, message?: RegExp): Promise<ErrorBody> {
  expect(response.status).toBe(status);
  const error = await fullErrorOf(response);
  expect(error.code).toBe(code);
  if (message !== undefined) expect(error.message).toMatch(message);
  return error;
}

interface TransferRow {
  streamId: string;
  name: string;
  source: string;
  target: string;
  epoch: number;
  ownership: string;
}

async function transfers(): Promise<TransferRow[]> {
  const response = await admin("GET", "/admin/transfers");
  expect(response.status).toBe(200);
  const body = await response.json<{ version: number; transfers: TransferRow[] }>();
  expect(body.version).toBeGreaterThan(0);
  return body.transfers;
}

async function setSlots(nodeId: string, slots: number): Promise<void> {
  const result = await meta.propose({ type: "SetSlots", nodeId, slots });
  if (!result.ok) throw new Error(result.error.message);
}

const GHOSTS = ["ghost-a", "ghost-b", "ghost-c"];

/**
 * Streams placed on `nodeId` through the MetaLog alone (never through a node): every other node gets 0 slots
 * while they are placed, then its slots back.
 */
async function placeOn(nodeId: string, names: readonly string[]): Promise<string[]> {
  const others = (await meta.view()).nodes.filter((node) => node.id !== nodeId && node.slots > 0);
  for (const node of others) await setSlots(node.id, 0);
  const ids: string[] = [];
  for (const name of names) {
    const created = await meta.propose({ type: "CreateStream", name, config: { contentType: "text/plain" } });
    if (!created.ok) throw new Error(created.error.message);
    const placed = await meta.propose({ type: "PlaceStream", streamId: created.value.stream.id });
    if (!placed.ok) throw new Error(placed.error.message);
    expect(placed.value.stream.owner).toBe(nodeId);
    ids.push(placed.value.stream.id);
  }
  for (const node of others) await setSlots(node.id, node.slots);
  return ids;
}

describe("admin endpoints: slots, transfers and drain", () => {
  it("answers 401 without a token or with a wrong one on every slots, transfer and drain endpoint", async () => {
    const endpoints: [string, string, string | undefined][] = [
      ["PUT", "/admin/nodes/adm-0/slots", '{"slots":2}'],
      ["POST", "/admin/transfers", '{"stream":"x","target":"adm-1"}'],
      ["GET", "/admin/transfers", undefined],
      ["POST", "/admin/nodes/adm-0/drain", undefined],
      ["GET", "/admin/nodes/adm-0/drain", undefined],
      ["DELETE", "/admin/nodes/adm-0/drain", undefined],
      ["POST", "/admin/rebalance", '{"dryRun":true}'],
    ];
    for (const [method, path, body] of endpoints) {
      const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${TOKEN}x` }];
      for (const headers of attempts) {
        const response = await call(method, path, { headers, body });
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      }
    }
    // Nothing was changed by the refused calls.
    expect((await meta.view()).nodes.every((node) => !node.draining && node.slots === 1)).toBe(true);
  });

  it("SS4 PUT slots answers the node record and the new weight shows in GET /admin/nodes", async () => {
    const response = await admin("PUT", "/admin/nodes/adm-2/slots", { slots: 3 });
    expect(response.status).toBe(200);
    const { node } = await response.json<{ node: Record<string, unknown> }>();
    const record = (await meta.view()).nodes.find((n) => n.id === "adm-2");
    expect(node).toEqual({ id: "adm-2", epoch: record?.epoch, address: "http://127.0.0.1:8787/n/adm-2", slots: 3, draining: false });
    const listed = await (await admin("GET", "/admin/nodes")).json<NodesBody>();
    expect(listed.nodes.find((n) => n.id === "adm-2")?.slots).toBe(3);
    // SS3: the same count again is the same answer.
    expect((await admin("PUT", "/admin/nodes/adm-2/slots", { slots: 3 })).status).toBe(200);
    expect((await admin("PUT", "/admin/nodes/adm-2/slots", { slots: 1 })).status).toBe(200);
    expect((await meta.view()).nodes.find((n) => n.id === "adm-2")?.slots).toBe(1);
  });

  it("PUT slots refuses a body that is not JSON or not {slots: integer 0..1000000} with 400 invalid, and an unknown node with 404", async () => {
    await expectError(await admin("PUT", "/admin/nodes/adm-2/slots", "{slots: 2"), 400, "invalid", /not JSON/);
    await expectError(await admin("PUT", "/admin/nodes/adm-2/slots", ""), 400, "invalid", /not JSON/);
    for (const body of [{}, { slots: -1 }, { slots: 1_000_001 }, { slots: 1.5 }, { slots: "2" }, { slots: null }, [2]]) {
      await expectError(await admin("PUT", "/admin/nodes/adm-2/slots", body), 400, "invalid", /^invalid body: body(\.slots)?: /);
    }
    expect((await admin("PUT", "/admin/nodes/adm-2/slots", { slots: 1_000_000 })).status).toBe(200);
    expect((await admin("PUT", "/admin/nodes/adm-2/slots", { slots: 1 })).status).toBe(200);
    const unknown = await expectError(await admin("PUT", "/admin/nodes/adm-9/slots", { slots: 1 }), 404, "not_found");
    expect(unknown.details).toEqual({ nodeId: "adm-9" });
    await expectError(await admin("PUT", `/admin/nodes/${"n".repeat(257)}/slots`, { slots: 1 }), 400, "invalid", /^invalid path: id: /);
  });

  it("BT9 POST /admin/transfers of a served stream answers 202 with the stream and the pending transfer", async () => {
    const created = await call("PUT", "/v1/stream/adm/move%20me", { headers: TEXT, body: "moving" });
    expect(created.status).toBe(201);
    const before = (await meta.lookupStream({ name: "adm/move me" })).stream;
    const source = before?.owner ?? "";
    // Never adm-0: the drain test below counts what adm-0 holds.
    const target = NODES.find((id) => id !== source && id !== "adm-0") ?? "";
    const response = await admin("POST", "/admin/transfers", { stream: "adm/move%20me", target });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({
      stream: { id: before?.id, name: "adm/move me", owner: source, epoch: before?.epoch, ownership: "opened" },
      transfer: { source, target },
      alreadyPending: false,
    });
    // However far the handoff got since: pending to the target, or done.
    const after = (await meta.lookupStream({ name: "adm/move me" })).stream;
    expect(after?.transfer === undefined ? after?.owner : after.transfer.target).toBe(target);
  });

  it("drain of a served node marks it draining and begins a transfer of each of its streams to the other nodes", async () => {
    const drained = "adm-0";
    const names = Array.from({ length: 6 }, (_, i) => `adm/drain-${i}`);
    for (const name of names) expect((await call("PUT", `/v1/stream/${name}`, { headers: TEXT, body: name })).status).toBe(201);
    const mine = (await meta.view()).streams.filter((s) => s.owner === drained && (s.ownership === "placed" || s.ownership === "opened"));
    expect(mine.length).toBeGreaterThanOrEqual(2); // placement spread six streams over three nodes

    const response = await admin("POST", `/admin/nodes/${drained}/drain`);
    expect(response.status).toBe(202);
    const body = await response.json<{ nodeId: string; draining: boolean; begun: number; unplaceable: number; remaining: number; transferring: number }>();
    expect(body).toMatchObject({ nodeId: drained, draining: true, unplaceable: 0 });
    expect(body.begun).toBe(mine.filter((s) => s.transfer === undefined).length);
    // In the drain's own step every stream still on the node has a transfer pending.
    expect(body.transferring).toBe(body.remaining);
    expect(body.remaining).toBeLessThanOrEqual(mine.length);

    // Each of its streams is moving to another node, or already there.
    for (const stream of mine) {
      const now = (await meta.lookupStream({ id: stream.id })).stream;
      const destination = now?.transfer === undefined ? now?.owner : now.transfer.target;
      expect(destination, stream.name).not.toBe(drained);
    }
    for (const row of await transfers()) if (row.source === drained) expect(row.target).not.toBe(drained);
    const nodes = await (await admin("GET", "/admin/nodes")).json<{ nodes: { id: string; draining: boolean }[] }>();
    expect(nodes.nodes.find((n) => n.id === drained)?.draining).toBe(true);
    // A draining node takes no new placements.
    expect((await call("PUT", "/v1/stream/adm/after-drain", { headers: TEXT, body: "x" })).status).toBe(201);
    expect((await meta.lookupStream({ name: "adm/after-drain" })).stream?.owner).not.toBe(drained);

    const progress = await admin("GET", `/admin/nodes/${drained}/drain`);
    expect(progress.status).toBe(200);
    const shown = await progress.json<{ nodeId: string; draining: boolean; remaining: number; transferring: number; done: boolean }>();
    expect(shown).toMatchObject({ nodeId: drained, draining: true, incoming: 0, done: shown.remaining === 0 });
    expect(shown.transferring).toBe(shown.remaining);

    const undrained = await admin("DELETE", `/admin/nodes/${drained}/drain`);
    expect(undrained.status).toBe(200);
    expect(await undrained.json()).toMatchObject({ nodeId: drained, draining: false });
    expect((await meta.view()).nodes.find((n) => n.id === drained)?.draining).toBe(false);
  });

  it("BeginTransfer rows through POST /admin/transfers: 202, 200 for the same transfer, 409 for another target, 404 and 400", async () => {
    for (const id of GHOSTS) {
      const registered = await meta.propose({ type: "RegisterNode", nodeId: id, nodeEpoch: 1, addr: `http://ghost.invalid/n/${id}` });
      expect(registered.ok).toBe(true);
    }
    const [first, second] = await placeOn("ghost-a", ["ghost/t1", "ghost/t2"]);

    // BT9
    const begun = await admin("POST", "/admin/transfers", { stream: "ghost/t1", target: "ghost-b" });
    expect(begun.status).toBe(202);
    expect(await begun.json()).toEqual({
      stream: { id: first, name: "ghost/t1", owner: "ghost-a", epoch: 0, ownership: "placed" },
      transfer: { source: "ghost-a", target: "ghost-b" },
      alreadyPending: false,
    });
    // BT3: the same transfer again.
    const again = await admin("POST", "/admin/transfers", { stream: "ghost/t1", target: "ghost-b" });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ transfer: { source: "ghost-a", target: "ghost-b" }, alreadyPending: true });
    // BT4: another target while one is pending: 409 conflict (not the stream API's retryable 503).
    const conflicting = await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t1", target: "ghost-c" }), 409, "conflict", /ghost-b/);
    expect(conflicting.retryable).toBe(false);
    expect(conflicting.details).toEqual({ source: "ghost-a", target: "ghost-b" });
    expect((await transfers()).filter((row) => row.streamId === first)).toEqual([
      { streamId: first, name: "ghost/t1", source: "ghost-a", target: "ghost-b", epoch: 0, ownership: "placed" },
    ]);

    // BT2 / BT5: unknown stream or target.
    const noStream = await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/nope", target: "ghost-b" }), 404, "not_found", /stream/);
    expect(noStream.details).toEqual({ stream: "ghost/nope" });
    const noTarget = await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t2", target: "ghost-z" }), 404, "not_found", /target/);
    expect(noTarget.details).toEqual({ target: "ghost-z" });
    // BT6: a target with no slots, or draining.
    await setSlots("ghost-c", 0);
    const slotless = await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t2", target: "ghost-c" }), 400, "invalid", /takes no streams/);
    expect(slotless.details).toMatchObject({ target: "ghost-c", slots: 0, draining: false });
    await setSlots("ghost-c", 1);
    expect((await admin("POST", "/admin/nodes/ghost-c/drain")).status).toBe(202);
    const draining = await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t2", target: "ghost-c" }), 400, "invalid", /takes no streams/);
    expect(draining.details).toMatchObject({ target: "ghost-c", draining: true });
    expect((await admin("DELETE", "/admin/nodes/ghost-c/drain")).status).toBe(200);
    // BT7: a stream nobody was placed on.
    const unplaced = await meta.propose({ type: "CreateStream", name: "ghost/unplaced", config: {} });
    expect(unplaced.ok).toBe(true);
    await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/unplaced", target: "ghost-b" }), 400, "invalid", /not placed/);
    // BT8: the target already owns it.
    await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t2", target: "ghost-a" }), 400, "invalid", /already owns/);
    expect((await meta.lookupStream({ id: second ?? "" })).stream?.transfer).toBeUndefined();

    // Bodies: not JSON, missing or malformed fields, a stream path that /v1/stream would refuse.
    await expectError(await admin("POST", "/admin/transfers", "not json"), 400, "invalid", /not JSON/);
    await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t2" }), 400, "invalid", /body\.target/);
    await expectError(await admin("POST", "/admin/transfers", { stream: 7, target: "ghost-b" }), 400, "invalid", /body\.stream/);
    await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/t2", target: "" }), 400, "invalid", /body\.target/);
    await expectError(await admin("POST", "/admin/transfers", { stream: "ghost//t2", target: "ghost-b" }), 400, "invalid", /body\.stream: .*segments/);
    await expectError(await admin("POST", "/admin/transfers", { stream: "ghost/%zz", target: "ghost-b" }), 400, "invalid", /percent-encoding/);
    expect((await meta.lookupStream({ id: second ?? "" })).stream?.transfer).toBeUndefined();
  });

  it("drain of a node begins transfers spread over the eligible nodes by slots, reports progress, and undrain ends it", async () => {
    const ids = await placeOn("ghost-a", ["ghost/d1", "ghost/d2", "ghost/d3"]);
    // ghost-a holds t1 (moving to ghost-b), t2, d1..d3. Only the ghosts take streams while it drains.
    const served = (await meta.view()).nodes.filter((node) => !GHOSTS.includes(node.id));
    for (const node of served) await setSlots(node.id, 0);
    await setSlots("ghost-c", 3);
    const response = await admin("POST", "/admin/nodes/ghost-a/drain");
    for (const node of served) await setSlots(node.id, node.slots);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({
      nodeId: "ghost-a",
      draining: true,
      begun: 4,
      unplaceable: 0,
      remaining: 5,
      transferring: 5,
      incoming: 0,
      done: false,
      stalled: null,
    });

    const moving = (await transfers()).filter((row) => row.source === "ghost-a");
    expect(moving.map((row) => row.name).sort()).toEqual(["ghost/d1", "ghost/d2", "ghost/d3", "ghost/t1", "ghost/t2"]);
    for (const row of moving) expect(["ghost-b", "ghost-c"]).toContain(row.target);
    // The four new moves by the slots ratio 1:3 (placement's count/slots, lowest id on ties: b, c, c, c).
    const planned = moving.filter((row) => row.name !== "ghost/t1");
    expect(planned.filter((row) => row.target === "ghost-c")).toHaveLength(3);
    expect(planned.filter((row) => row.target === "ghost-b")).toHaveLength(1);
    expect(ids.every((id) => moving.some((row) => row.streamId === id))).toBe(true);

    expect(await (await admin("GET", "/admin/nodes/ghost-a/drain")).json()).toEqual({
      nodeId: "ghost-a",
      draining: true,
      remaining: 5,
      transferring: 5,
      incoming: 0,
      done: false,
    });
    // A second drain plans only what is not moving yet: nothing.
    expect(await (await admin("POST", "/admin/nodes/ghost-a/drain")).json()).toMatchObject({ begun: 0, remaining: 5, transferring: 5 });
    // A node holding nothing is not drained while transfers to it are pending (t1 and one of the new moves):
    // they land on it, and a drain after that moves them away.
    expect(await (await admin("POST", "/admin/nodes/ghost-b/drain")).json()).toMatchObject({ begun: 0, unplaceable: 0, remaining: 0, transferring: 0, incoming: 2, done: false, stalled: null });
    expect(await (await admin("GET", "/admin/nodes/ghost-b/drain")).json()).toEqual({ nodeId: "ghost-b", draining: true, remaining: 0, transferring: 0, incoming: 2, done: false });

    const undrained = await admin("DELETE", "/admin/nodes/ghost-a/drain");
    expect(undrained.status).toBe(200);
    expect(await undrained.json()).toEqual({ nodeId: "ghost-a", draining: false, remaining: 5, transferring: 5, incoming: 0 });
    expect(await (await admin("GET", "/admin/nodes/ghost-a/drain")).json()).toMatchObject({ draining: false, done: false });
    // Undrain moves nothing back: the transfers stay pending.
    expect((await transfers()).filter((row) => row.source === "ghost-a")).toHaveLength(5);
    expect((await admin("DELETE", "/admin/nodes/ghost-b/drain")).status).toBe(200);

    for (const path of ["/admin/nodes/ghost-z/drain"]) {
      for (const method of ["POST", "GET", "DELETE"]) {
        const error = await expectError(await admin(method, path), 404, "not_found");
        expect(error.details).toEqual({ nodeId: "ghost-z" });
      }
    }
    await expectError(await admin("POST", `/admin/nodes/${"g".repeat(257)}/drain`), 400, "invalid", /^invalid path: id: /);
    // The ghosts take no more streams (no Durable Object would serve them).
    for (const id of GHOSTS) await setSlots(id, 0);
  });
});

interface MoveRow {
  streamId: string;
  name: string;
  from: string;
  to: string;
  kind: string;
}

interface RebalanceBody {
  dryRun: boolean;
  maxConcurrent: number;
  plan: { orphans: MoveRow[]; moves: MoveRow[]; meanLoad: number; bands: { above: number; below: number }; unplaceable: number };
  begun: MoveRow[];
  pending: number;
  done: boolean;
  version: number;
}

describe("admin endpoints: rebalance", () => {
  // Two more ghosts: reb-a gets twelve streams (placed, never opened: their transfers stay pending, since no
  // node runs reb-a to hand them over), reb-b none. The served nodes' streams from the tests above take part
  // too (their transfers complete on their own), so assertions hold whatever else the plan holds.
  const REB = ["reb-a", "reb-b"];
  const heartbeat = async (): Promise<void> => {
    for (const id of REB) expect((await meta.heartbeat(id, 1)).ok).toBe(true);
  };

  it("POST /admin/rebalance: a dry run lists the plan and begins nothing; a real round begins at most maxConcurrent transfers, counting those pending; bad bodies are 400", async () => {
    for (const id of REB) expect((await meta.propose({ type: "RegisterNode", nodeId: id, nodeEpoch: 1, addr: `http://ghost.invalid/n/${id}` })).ok).toBe(true);
    const ids = await placeOn("reb-a", Array.from({ length: 12 }, (_, i) => `reb/s${i}`));

    await heartbeat();
    const dry = await admin("POST", "/admin/rebalance", { dryRun: true });
    expect(dry.status).toBe(200);
    const plan = await dry.json<RebalanceBody>();
    expect(plan).toMatchObject({ dryRun: true, maxConcurrent: 4, begun: [], done: false });
    expect(plan.plan.unplaceable).toBe(0);
    expect(plan.plan.bands.above).toBeCloseTo(plan.plan.meanLoad * 1.1);
    expect(plan.plan.bands.below).toBeCloseTo(plan.plan.meanLoad * 0.9);
    // reb-a (12 streams on 1 slot) is the most loaded source: the plan starts with its streams.
    expect(plan.plan.moves.slice(0, 3).map((m) => m.from)).toEqual(["reb-a", "reb-a", "reb-a"]);
    for (const move of plan.plan.moves) {
      expect(move.kind).toBe("transfer");
      expect(move.to).not.toBe(move.from);
      const stream = (await meta.lookupStream({ id: move.streamId })).stream;
      expect(stream?.name).toBe(move.name);
      if (move.from === "reb-a") expect(stream?.transfer).toBeUndefined(); // nothing began (reb-a's would still be pending)
    }
    expect(plan.plan.moves.filter((m) => m.from === "reb-a").every((m) => ids.includes(m.streamId))).toBe(true);

    // A real round with room for two more transfers than are pending now.
    const maxConcurrent = (await transfers()).length + 2;
    await heartbeat();
    const real = await admin("POST", "/admin/rebalance", { maxConcurrent });
    expect(real.status).toBe(202);
    const round = await real.json<RebalanceBody>();
    expect(round).toMatchObject({ dryRun: false, maxConcurrent, done: false });
    const pendingBefore = round.pending - round.begun.length;
    expect(round.begun.length).toBe(Math.min(round.plan.moves.length, maxConcurrent - pendingBefore));
    expect(round.begun.length).toBeGreaterThanOrEqual(2);
    expect(round.begun).toEqual(round.plan.moves.slice(0, round.begun.length));
    expect(round.pending).toBeLessThanOrEqual(maxConcurrent);
    for (const move of round.begun) {
      const stream = (await meta.lookupStream({ id: move.streamId })).stream;
      // Pending to its target, or (a served node's stream) already there.
      expect(stream?.transfer === undefined ? stream?.owner : stream.transfer.target, move.name).toBe(move.to);
    }
    // reb-a's transfers never complete, so a round allowing one pending transfer begins nothing.
    await heartbeat();
    const capped = await (await admin("POST", "/admin/rebalance", { maxConcurrent: 1 })).json<RebalanceBody>();
    expect(capped.begun).toEqual([]);
    expect(capped.pending).toBeGreaterThanOrEqual(1);
    // The largest maxConcurrent is accepted.
    expect((await admin("POST", "/admin/rebalance", { dryRun: true, maxConcurrent: 64 })).status).toBe(200);

    const before = (await transfers()).length;
    await expectError(await admin("POST", "/admin/rebalance", "not json"), 400, "invalid", /not JSON/);
    await expectError(await admin("POST", "/admin/rebalance"), 400, "invalid", /not JSON/);
    for (const body of [{ maxConcurrent: 0 }, { maxConcurrent: 65 }, { maxConcurrent: 2.5 }, { maxConcurrent: "4" }, { dryRun: "yes" }, { dryrun: true }, [true], null]) {
      await expectError(await admin("POST", "/admin/rebalance", body), 400, "invalid", /^invalid body: body(\.\w+)?: /);
    }
    expect((await transfers()).length).toBeLessThanOrEqual(before); // no refused call began anything
    for (const id of REB) await setSlots(id, 0);
  });
});
