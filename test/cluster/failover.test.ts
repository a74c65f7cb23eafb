// Failover in the node tier (docs/failover.md): three nodes in plain Node over the in-memory store
// and the real MetaLogService, on a clock the test moves, heartbeats driven by the test (NodeRuntime.beat,
// what the Durable Object's alarm calls). Each test names the seed rule it proves.
import { describe, expect, it } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { nodeWorld, NODE_WORLD_LEASE_TTL_MS, type NodeWorld } from "./support/node-world.ts";

const TEXT = { "content-type": "text/plain" };
const LEASE_TTL_MS = NODE_WORLD_LEASE_TTL_MS;

type World = NodeWorld;
const world = (): Promise<World> => nodeWorld();

/** A request that follows the node's 307 to the owner (as a client through the router would). */
async function send(w: World, from: string, method: string, path: string, body?: string): Promise<Response> {
  let node = w.nodes.get(from)!;
  for (let hops = 0; hops < 3; hops++) {
    const response = await node.request(method, path, { headers: TEXT, ...(body === undefined ? {} : { body }) });
    if (response.status !== 307) return response;
    const to = /\/n\/([^/]+)\//.exec(response.headers.get("location") ?? "")?.[1];
    node = w.nodes.get(to ?? "")!;
  }
  throw new Error(`${method} ${path}: too many redirects`);
}

function ownerOf(w: World, name: string): { owner: string | null; ownership: string } {
  const stream = w.cluster.meta.service.lookupStream({ name }).stream!;
  return { owner: stream.owner, ownership: stream.ownership };
}

/** Six streams spread by placement, two acknowledged appends each; the names owned by `victim`. */
async function streamsWithData(w: World, victim: string): Promise<{ names: string[]; owned: string[] }> {
  const names = Array.from({ length: 6 }, (_, i) => `f/${i}`);
  for (const name of names) {
    expect((await send(w, "a", "PUT", name)).status).toBe(201);
    for (const word of ["x", "y"]) expect((await send(w, "a", "POST", name, `${name}:${word};`)).status).toBe(204);
  }
  const owned = names.filter((name) => ownerOf(w, name).owner === victim);
  expect(owned.length).toBeGreaterThan(0);
  return { names, owned };
}

async function reopenedElsewhere(w: World, names: readonly string[], victim: string): Promise<void> {
  await eventually(
    () => {
      for (const name of names) {
        const { owner, ownership } = ownerOf(w, name);
        if (owner === victim || ownership !== "opened") throw new NotYet(`${name}: ${ownership} by ${owner}`);
      }
      return true;
    },
    { what: `every stream of ${victim} opened by another node` },
  );
}

describe("node tier: failover", () => {
  it("takeover: a dead node's streams are re-led and taken over; every acknowledged append is there and the new owner accepts more", async () => {
    const w = await world();
    const { names, owned } = await streamsWithData(w, "b");
    w.nodes.get("b")!.crash();
    await w.advance(LEASE_TTL_MS + 100, [w.nodes.get("a")!, w.nodes.get("c")!]);
    expect(w.cluster.meta.service.state.nodes.get("b")?.dead ?? w.cluster.meta.service.state.nodes.get("b")?.takenOver).toBeDefined();
    await reopenedElsewhere(w, owned, "b");
    expect(w.cluster.meta.service.state.nodes.get("b")?.takenOver).toBeDefined();
    for (const name of names) {
      expect((await send(w, "a", "POST", name, `${name}:z;`)).status).toBe(204);
      expect(await (await send(w, "a", "GET", `${name}?offset=-1`)).text()).toBe(`${name}:x;${name}:y;${name}:z;`);
    }
  });

  it("out of touch, a node ends its live readers: a long-poll at a node that stops hearing from the metadata log is answered 503 when its self-lease runs out, not at the long-poll timeout, and the retry reaches the new owner", async () => {
    const w = await world();
    const { owned } = await streamsWithData(w, "b");
    const name = owned[0]!;
    const b = w.nodes.get("b")!;
    const tail = (await b.request("GET", `${name}?offset=-1`)).headers.get("stream-next-offset")!;
    // LONG_POLL_TIMEOUT_MS is the default 30 s: a reader kept until then would outlast the test.
    const poll = b.request("GET", `${name}?offset=${tail}&live=long-poll`);
    await eventually(() => b.runtime.ctx.readers.size === 1, { what: "the long-poll waiting at b" });
    await w.advance(LEASE_TTL_MS + 100, [w.nodes.get("a")!, w.nodes.get("c")!]); // b's heartbeats stop
    const answer = await poll;
    expect(answer.status).toBe(503);
    expect(b.runtime.ctx.readers.size).toBe(0);
    await reopenedElsewhere(w, [name], "b");
    expect((await send(w, "a", "POST", name, "late;")).status).toBe(204);
    expect(await (await send(w, "a", "GET", `${name}?offset=${tail}`)).text()).toBe("late;");
  });

  it("the seal is the arbiter: a zombie acknowledges nothing once its chain is sealed; what it acknowledged before is kept", async () => {
    const w = await world();
    const { owned } = await streamsWithData(w, "b");
    const zombie = w.nodes.get("b")!;
    zombie.runtime.fault = { mode: "zombie" };
    // Acknowledged by the zombie before anyone noticed: it must survive the takeover.
    expect((await zombie.request("POST", owned[0]!, { headers: TEXT, body: "late;" })).status).toBe(204);
    await w.advance(LEASE_TTL_MS + 100, [w.nodes.get("a")!, w.nodes.get("c")!, zombie]);
    await reopenedElsewhere(w, owned, "b");
    const after = await zombie.request("POST", owned[0]!, { headers: TEXT, body: "after-seal;" });
    expect(after.status).not.toBe(204);
    const text = await (await send(w, "a", "GET", `${owned[0]}?offset=-1`)).text();
    expect(text).toBe(`${owned[0]}:x;${owned[0]}:y;late;`);
  });

  it("a dead node that comes back: the dead node returns at a new epoch, owns nothing that moved, and redirects to the new owner", async () => {
    const w = await world();
    const { owned } = await streamsWithData(w, "b");
    const old = w.nodes.get("b")!;
    old.crash();
    await w.advance(LEASE_TTL_MS + 100, [w.nodes.get("a")!, w.nodes.get("c")!]);
    await reopenedElsewhere(w, owned, "b");
    const back = await w.cluster.start("b");
    w.nodes.set("b", back);
    expect(back.runtime.ctx.nodeEpoch).toBeGreaterThan(old.runtime.ctx.nodeEpoch);
    expect(back.runtime.ctx.registry.size).toBe(0);
    for (const name of owned) {
      const response = await back.request("GET", `${name}?offset=-1`);
      expect(response.status).toBe(307);
      expect(response.headers.get("location")).toContain(`/n/${ownerOf(w, name).owner}/`);
    }
    // Its own next compaction copes with a chain sealed by someone else.
    expect((await send(w, "b", "PUT", "f/back")).status).toBe(201);
    await expect(back.runtime.compact()).resolves.not.toBeNull();
  });

  it("coordinator failover: another node takes the lease at coordinator epoch + 1; a tick at the old epoch changes nothing", async () => {
    const w = await world();
    const a = w.nodes.get("a")!;
    const before = w.cluster.meta.service.state.lease!;
    a.runtime.fault = { mode: "zombie" };
    await w.advance(LEASE_TTL_MS + 100, [a, w.nodes.get("b")!, w.nodes.get("c")!]);
    const lease = w.cluster.meta.service.state.lease!;
    expect(lease.holder).not.toBe("a");
    expect(lease.coordinatorEpoch).toBe(before.coordinatorEpoch + 1);
    const version = w.cluster.meta.service.state.version;
    const stale = w.cluster.meta.service.coordinatorTick({ nodeId: "a", nodeEpoch: before.holderEpoch, coordinatorEpoch: before.coordinatorEpoch }, 100);
    expect(stale.ok).toBe(false);
    expect(w.cluster.meta.service.state.version).toBe(version);
  });
});

describe("node tier: lifecycle loops", () => {
  it("lifecycle: an idle TTL stream expires without any request, and its name frees", async () => {
    const w = await world();
    const a = w.nodes.get("a")!;
    expect((await a.request("PUT", "ttl/idle", { headers: { ...TEXT, "stream-ttl": "1" } })).status).toBe(201);
    const owner = w.nodes.get(ownerOf(w, "ttl/idle").owner!)!;
    await w.advance(1_500, [owner]);
    expect(w.cluster.meta.service.lookupStream({ name: "ttl/idle" }).stream).toBeNull();
    // The name is free: a create with another configuration is a new stream.
    expect((await send(w, "a", "PUT", "ttl/idle")).status).toBe(201);
  });

  it("lifecycle: the coordinator collects the objects of deleted streams, and only those", async () => {
    const w = await world();
    for (const name of ["gc/gone", "gc/kept"]) {
      expect((await send(w, "a", "PUT", name)).status).toBe(201);
      expect((await send(w, "a", "POST", name, "data;")).status).toBe(204);
    }
    for (const node of w.nodes.values()) await node.runtime.compact();
    const idOf = (name: string): string => w.cluster.meta.service.lookupStream({ name }).stream!.id;
    const gone = idOf("gc/gone");
    const kept = idOf("gc/kept");
    const objectsOf = (id: string): string[] => w.cluster.store.keys().filter((key) => key.startsWith(`streams/${id}/`));
    expect(objectsOf(gone).length).toBeGreaterThan(0);
    expect((await send(w, "a", "DELETE", "gc/gone")).status).toBe(204);
    // The coordinator (a) ticks: one page of streams/ per tick.
    await w.advance(200, [...w.nodes.values()]);
    expect(objectsOf(gone)).toEqual([]);
    expect(objectsOf(kept).length).toBeGreaterThan(0);
    expect(await (await send(w, "a", "GET", "gc/kept?offset=-1")).text()).toBe("data;");
  });
});
