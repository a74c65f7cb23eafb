// The router with three nodes (docs/router.md), in workerd over the in-memory
// object store: streams spread by the slots ratio, a 307 to the owner's advertised address, a create placed
// on another node answered exactly (201 once, 200, 409; the body written once), forwarding mode, a closed
// stream revived on the node that served it, and a stale view answered with one more redirect.
// NODE_IDS is overridden per call (the Worker's env is the test's env plus these vars).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { StreamNode } from "../../durable-objects/stream-node.ts";
import type { Env } from "../../src/env.ts";
import { diagnosticMetaLog } from "./diagnostic-meta-log.ts";
import { closeOwnership } from "../support/close-ownership.ts";
import { routeRequest, toNodeAddress, type RouterDeps } from "./router-as-worker.ts";
import { ViewCache } from "../../src/router/view-cache.ts";

const baseEnv = env as unknown as Env;
const NODES = ["rt-0", "rt-1", "rt-2"];
const routerEnv = (vars: Partial<Env> = {}): Env => ({ ...baseEnv, NODE_IDS: NODES.join(","), PUBLIC_ORIGIN: ORIGIN, ...vars });
const meta = diagnosticMetaLog(baseEnv.META_LOG);
/** Nodes advertise `<PUBLIC_ORIGIN>/n/<id>` (the default origin here). */
const ORIGIN = "http://127.0.0.1:8787";
const TEXT = { "content-type": "text/plain" };

function deps(ttlMs: number): RouterDeps {
  return { cache: new ViewCache({ ttlMs }), lookup: (name) => meta.lookupStream({ name }) };
}

/** A router whose lookups name no placement (as a view from before R1a would): a new name goes to the local node (R1). */
function routerWithoutPlacement(cache: ViewCache = new ViewCache({ ttlMs: 1_000 })): RouterDeps {
  return { cache, lookup: async (name) => ({ ...(await meta.lookupStream({ name })), placeAmong: [] }) };
}

interface Hop {
  status: number;
  location: string | null;
}

/** Sends a request to the router, then follows 307s to node addresses as a client does; records each hop. */
async function send(
  method: string,
  path: string,
  init: { body?: string; headers?: Record<string, string>; vars?: Partial<Env>; router?: RouterDeps } = {},
): Promise<{ response: Response; hops: Hop[]; text: string }> {
  const hops: Hop[] = [];
  const e = routerEnv(init.vars);
  const request = (url: string): Request => new Request(url, { method, headers: init.headers, body: init.body ?? null });
  let response = await routeRequest(e, request(`${ORIGIN}/v1/stream/${path}`), init.router ?? deps(1_000));
  for (let i = 0; response.status === 307 && i < 5; i++) {
    const location = response.headers.get("location");
    hops.push({ status: 307, location });
    const nodeId = /^\/n\/([^/]+)\//.exec(new URL(location ?? "").pathname)?.[1] ?? "";
    response = await toNodeAddress(e, nodeId, request(location ?? ""));
  }
  const text = method === "HEAD" ? "" : await response.text();
  return { response, hops, text };
}

async function ownerOf(name: string): Promise<{ owner: string | null; ownership: string; epoch: number }> {
  const { stream } = await meta.lookupStream({ name });
  if (stream === null) throw new Error(`${name} is not registered`);
  return { owner: stream.owner, ownership: stream.ownership, epoch: stream.epoch };
}

async function setSlots(slots: Record<string, number>): Promise<void> {
  for (const [nodeId, count] of Object.entries(slots)) {
    const result = await meta.propose({ type: "SetSlots", nodeId, slots: count });
    if (!result.ok) throw new Error(result.error.message);
  }
}

describe("router", () => {
  it("spreads streams over the nodes by the slots ratio", async () => {
    // The first routed request wakes (registers) every node.
    expect((await send("GET", "spread-probe")).response.status).toBe(404);
    const view = await meta.view();
    expect(view.nodes.map((node) => node.id)).toEqual(NODES);
    await setSlots({ "rt-1": 2 });

    const names = Array.from({ length: 12 }, (_, i) => `spread-${i}`);
    for (const name of names) {
      const { response, text } = await send("PUT", name, { headers: TEXT, body: `body of ${name}` });
      expect(response.status, text).toBe(201);
    }
    const owners = await Promise.all(names.map(async (name) => (await ownerOf(name)).owner));
    const count = (id: string): number => owners.filter((owner) => owner === id).length;
    expect([count("rt-0"), count("rt-1"), count("rt-2")]).toEqual([3, 6, 3]);
    // Every stream holds its body once, wherever it landed.
    for (const name of names) expect((await send("GET", name)).text).toBe(`body of ${name}`);
    await setSlots({ "rt-1": 1 });
  });

  it("answers a 307 to the owner's advertised address for a stream owned elsewhere, query included", async () => {
    let name = "";
    for (let i = 0; i < 12 && name === ""; i++) if ((await ownerOf(`spread-${i}`)).owner === "rt-1") name = `spread-${i}`;
    const routed = await routeRequest(routerEnv(), new Request(`${ORIGIN}/v1/stream/${name}?offset=-1`), deps(1_000));
    expect(routed.status).toBe(307);
    expect(routed.headers.get("location")).toBe(`${ORIGIN}/n/rt-1/v1/stream/${name}?offset=-1`);
    // A node answers from its own view the same way (it never forwards).
    const atNode = await toNodeAddress(routerEnv(), "rt-2", new Request(`${ORIGIN}/n/rt-2/v1/stream/${name}?offset=-1`));
    expect(atNode.status).toBe(307);
    expect(atNode.headers.get("location")).toBe(`${ORIGIN}/n/rt-1/v1/stream/${name}?offset=-1`);
    // The owner serves it.
    const served = await toNodeAddress(routerEnv(), "rt-1", new Request(`${ORIGIN}/n/rt-1/v1/stream/${name}?offset=-1`));
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(`body of ${name}`);
  });

  it("R1a: a new name goes from the router straight to a node placement would choose, which opens it there: 201, no 307", async () => {
    await setSlots({ "rt-0": 0 }); // the router's own node takes no new streams
    const created = await send("PUT", "placed-direct", { headers: TEXT, body: "initial" });
    expect(created.hops).toHaveLength(0);
    expect(created.response.status).toBe(201);
    const { owner } = await ownerOf("placed-direct");
    expect(owner).not.toBe("rt-0");
    expect((await send("GET", "placed-direct")).text).toBe("initial");
    await setSlots({ "rt-0": 1 });
  });

  it("answers a create placed on another node exactly: 201 once with the body written once, 200, then 409", async () => {
    await setSlots({ "rt-0": 0 }); // the local node registers the name; placement must choose another
    const router = routerWithoutPlacement(); // R1: to the local node, whose claim places it elsewhere
    const first = await send("PUT", "placed-away", { headers: TEXT, body: "initial", router });
    expect(first.hops).toHaveLength(1);
    const { owner } = await ownerOf("placed-away");
    expect(owner).not.toBe("rt-0");
    expect(first.hops[0]?.location).toBe(`${ORIGIN}/n/${owner}/v1/stream/placed-away`);
    expect(first.response.status).toBe(201);

    const repeat = await send("PUT", "placed-away", { headers: TEXT, body: "initial" });
    expect(repeat.response.status).toBe(200);
    const other = await send("PUT", "placed-away", { headers: { "content-type": "application/json" } });
    expect(other.response.status).toBe(409);
    expect((await send("GET", "placed-away")).text).toBe("initial");

    // Two racing creates of a new name: exactly one 201.
    const racing = await Promise.all([1, 2, 3].map(() => send("PUT", "placed-race", { headers: TEXT, body: "x", router })));
    expect(racing.map((r) => r.response.status).sort()).toEqual([200, 200, 201]);
    expect((await send("GET", "placed-race")).text).toBe("x");
    await setSlots({ "rt-0": 1 });
  });

  it("forwards to the owner in forwarding mode: the client sees no redirect", async () => {
    await setSlots({ "rt-0": 0 });
    const vars = { ROUTER_MODE: "forward" };
    const created = await send("PUT", "forwarded", { headers: TEXT, body: "a", vars });
    expect(created.hops).toHaveLength(0);
    expect(created.response.status).toBe(201);
    expect((await ownerOf("forwarded")).owner).not.toBe("rt-0");
    const appended = await send("POST", "forwarded", { headers: TEXT, body: "b", vars });
    expect(appended.hops).toHaveLength(0);
    expect(appended.response.status).toBe(204);
    const read = await send("GET", "forwarded?offset=-1", { vars });
    expect(read.hops).toHaveLength(0);
    expect(read.text).toBe("ab");
    await setSlots({ "rt-0": 1 });
  });

  it("revives a closed stream on the node that served it", async () => {
    await setSlots({ "rt-0": 0, "rt-1": 0 });
    expect((await send("PUT", "revived", { headers: TEXT, body: "before," })).response.status).toBe(201);
    await setSlots({ "rt-0": 1, "rt-1": 1 });
    const opened = await ownerOf("revived");
    expect(opened).toMatchObject({ owner: "rt-2", ownership: "opened" });

    const rt2 = baseEnv.STREAM_NODE.getByName("rt-2") as DurableObjectStub<StreamNode>;
    const closeError = await runInDurableObject(rt2, async (node) => closeOwnership(node.node!, "revived"));
    expect(closeError).toBeNull();
    expect(await ownerOf("revived")).toMatchObject({ ownership: "closed", epoch: opened.epoch });

    // Through a router acting for rt-0 (which never held it): R7, served there: rt-0 opens it from the
    // object store (the close flushed it there) at a new epoch.
    const read = await send("GET", "revived");
    expect(read.hops).toHaveLength(0);
    expect(read.text).toBe("before,");
    expect(await ownerOf("revived")).toEqual({ owner: "rt-0", ownership: "opened", epoch: opened.epoch + 1 });
    // A write through a router acting for rt-2 (its last owner) now goes to rt-0 and continues the stream.
    const write = await send("POST", "revived", { headers: TEXT, body: "after", vars: { LOCAL_NODE: "rt-2" } });
    expect(write.hops.map((hop) => hop.location)).toEqual([`${ORIGIN}/n/rt-0/v1/stream/revived`]);
    expect(write.response.status).toBe(204);
    expect((await send("GET", "revived")).text).toBe("before,after");
  });

  it("answers a request routed by a stale view with one more redirect", async () => {
    const stale = deps(60_000);
    await setSlots({ "rt-0": 0, "rt-2": 0 });
    expect((await send("PUT", "moved", { headers: TEXT, body: "old" })).response.status).toBe(201);
    expect((await ownerOf("moved")).owner).toBe("rt-1");
    // The router caches the owner.
    expect((await send("GET", "moved", { router: stale })).text).toBe("old");

    // Deleted at its owner and created again elsewhere; the router's cache still says rt-1.
    const e = routerEnv();
    expect((await toNodeAddress(e, "rt-1", new Request(`${ORIGIN}/n/rt-1/v1/stream/moved`, { method: "DELETE" }))).status).toBe(204);
    await setSlots({ "rt-1": 0, "rt-2": 1 });
    const recreated = await toNodeAddress(e, "rt-2", new Request(`${ORIGIN}/n/rt-2/v1/stream/moved`, { method: "PUT", headers: TEXT, body: "new" }));
    expect(recreated.status).toBe(201);
    expect((await ownerOf("moved")).owner).toBe("rt-2");

    const read = await send("GET", "moved", { router: stale });
    expect(read.hops.map((hop) => hop.location)).toEqual([`${ORIGIN}/n/rt-1/v1/stream/moved`, `${ORIGIN}/n/rt-2/v1/stream/moved`]);
    expect(read.text).toBe("new");
    await setSlots({ "rt-0": 1, "rt-1": 1 });
  });

  it("creates a fork next to its source, whichever node placement chose", async () => {
    await setSlots({ "rt-0": 0, "rt-2": 0 });
    expect((await send("PUT", "fork-source", { headers: TEXT, body: "shared," })).response.status).toBe(201);
    expect((await ownerOf("fork-source")).owner).toBe("rt-1");
    await setSlots({ "rt-2": 100 }); // placement now chooses rt-2 for the fork (rt-1 must keep slots to take it back)

    const fork = await send("PUT", "fork-child", { headers: { ...TEXT, "stream-forked-from": "/v1/stream/fork-source" } });
    expect(fork.response.status, fork.text).toBe(201);
    // rt-0 (not registered) sends it to the source's owner, which registers it; placement chose rt-2,
    // which hands the never-opened fork back to rt-1.
    expect(fork.hops.map((hop) => hop.location)).toEqual([
      `${ORIGIN}/n/rt-1/v1/stream/fork-child`,
      `${ORIGIN}/n/rt-2/v1/stream/fork-child`,
      `${ORIGIN}/n/rt-1/v1/stream/fork-child`,
    ]);
    expect(await ownerOf("fork-child")).toMatchObject({ owner: "rt-1", ownership: "opened" });
    expect((await send("POST", "fork-child", { headers: TEXT, body: "own" })).response.status).toBe(204);
    expect((await send("GET", "fork-child")).text).toBe("shared,own");
    const repeat = await send("PUT", "fork-child", { headers: { ...TEXT, "stream-forked-from": "/v1/stream/fork-source" } });
    expect(repeat.response.status).toBe(200);
    await setSlots({ "rt-0": 1, "rt-2": 1 });
  });

  it("a name cached as absent costs the router no lookup, and a create through the router is never hidden by it", async () => {
    let lookups = 0;
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000 });
    const router: RouterDeps = { cache, lookup: (name) => (lookups++, meta.lookupStream({ name })) };
    expect((await send("GET", "neg-local", { router })).response.status).toBe(404);
    expect((await send("GET", "neg-local", { router })).response.status).toBe(404);
    expect(lookups).toBe(1);
    // R1: served locally; the 201 drops the entry, so the next GET looks the name up and is served.
    expect((await send("PUT", "neg-local", { headers: TEXT, body: "here", router })).response.status).toBe(201);
    expect(cache.cached("neg-local")).toBeNull();
    const read = await send("GET", "neg-local", { router });
    expect(read.response.status).toBe(200);
    expect(read.text).toBe("here");
    expect(lookups).toBe(2);
  });

  it("a name cached as absent and created on another node is redirected to, not answered 404", async () => {
    await setSlots({ "rt-0": 0 });
    const cache = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000 });
    const router = routerWithoutPlacement(cache); // R1: the local node's claim places it elsewhere
    expect((await send("GET", "neg-away", { router })).response.status).toBe(404);
    const created = await send("PUT", "neg-away", { headers: TEXT, body: "away", router });
    expect(created.response.status).toBe(201);
    expect(created.hops).toHaveLength(1); // the local node's 307 to the placed owner, which also dropped the entry
    expect(cache.cached("neg-away")).toBeNull();
    // Another isolate's entry is still "absent" (up to NEGATIVE_CACHE_TTL_MS): the local node looks the
    // name up itself and redirects, one hop more, never a 404.
    const otherIsolate = new ViewCache({ ttlMs: 60_000, negativeTtlMs: 60_000 });
    otherIsolate.remember("neg-away", { version: 0, stream: null, ownerNode: null, targetNode: null });
    const read = await send("GET", "neg-away", { router: { cache: otherIsolate, lookup: (name) => meta.lookupStream({ name }) } });
    expect(read.response.status).toBe(200);
    expect(read.text).toBe("away");
    expect(read.hops).toHaveLength(1);
    await setSlots({ "rt-0": 1 });
  });

  it("in forwarding mode a body without a length is read only up to MAX_BODY_BYTES: over it is 413", async () => {
    const vars = { ROUTER_MODE: "forward" };
    expect((await send("PUT", "fwd-unsized", { headers: TEXT, vars })).response.status).toBe(201);
    let pulled = 0;
    /** `bytes` of "a", or a body that never ends (null): only a bounded reader answers it. */
    const chunked = (bytes: number | null): ReadableStream<Uint8Array> => {
      let left = bytes ?? Number.POSITIVE_INFINITY;
      return new ReadableStream({
        pull(controller) {
          if (left <= 0) return controller.close();
          const size = Math.min(left, 16 * 1024);
          left -= size;
          pulled += size;
          controller.enqueue(new Uint8Array(size).fill(97));
        },
      });
    };
    const post = (bytes: number | null): Request =>
      new Request(`${ORIGIN}/v1/stream/fwd-unsized`, { method: "POST", headers: TEXT, body: chunked(bytes) });
    const maxBodyBytes = Number(baseEnv.MAX_BODY_BYTES);
    expect(post(10).headers.get("content-length")).toBeNull();
    const over = await routeRequest(routerEnv(vars), post(null), deps(1_000));
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: { code: "too_large", details: { maxBytes: maxBodyBytes } } });
    // The bound, plus the bounded drain that lets a client still sending read its 413 (4 times the bound).
    expect(pulled).toBeLessThanOrEqual(5 * maxBodyBytes + 2 * 16 * 1024);
    const fits = await routeRequest(routerEnv(vars), post(maxBodyBytes), deps(1_000));
    expect(fits.status).toBe(204);
    const read = await send("GET", "fwd-unsized?offset=-1", { vars });
    expect(read.text.length).toBe(maxBodyBytes);
  });
});
