// Idle streams out of memory and back (docs/node.md, "Idle streams"; tables EV and RL in
// src/core/stream-eviction.ts), in the node tier: three nodes over the in-memory store and the real
// MetaLogService, on a clock the test moves. An evicted stream must come back exactly as it was (data,
// producer state, Stream-Seq, offsets), through a read, an append, a restart, a transfer and a takeover.
import { describe, expect, it } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { nodeWorld, NODE_WORLD_LEASE_TTL_MS, type NodeWorld } from "./support/node-world.ts";
import type { TestNode } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };
const LEASE_TTL_MS = NODE_WORLD_LEASE_TTL_MS;
const IDLE_MS = 5_000;

interface World extends NodeWorld {
  /** The events of every log line the nodes wrote. */
  readonly events: string[];
}

async function world(): Promise<World> {
  const events: string[] = [];
  const logSink = (line: string): void => void events.push(String((JSON.parse(line) as { event?: unknown }).event));
  return { ...(await nodeWorld({ settings: { STREAM_IDLE_EVICT_MS: String(IDLE_MS) }, logSink })), events };
}

/** A request that follows 307s to the owner, as a client through the router would. */
async function send(w: World, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
  let node = w.nodes.get("a")!;
  for (let hops = 0; hops < 3; hops++) {
    const response = await node.request(method, path, { headers: { ...TEXT, ...headers }, ...(body === undefined ? {} : { body }) });
    if (response.status !== 307) return response;
    const to = /\/n\/([^/]+)\//.exec(response.headers.get("location") ?? "")?.[1];
    node = w.nodes.get(to ?? "")!;
  }
  throw new Error(`${method} ${path}: too many redirects`);
}

const producer = (seq: number): Record<string, string> => ({ "producer-id": "p1", "producer-epoch": "0", "producer-seq": String(seq) });

function recordOf(w: World, name: string): { id: string; owner: string; epoch: number; ownership: string } {
  const stream = w.cluster.meta.service.lookupStream({ name }).stream!;
  return { id: stream.id, owner: stream.owner ?? "", epoch: stream.epoch, ownership: stream.ownership };
}

/** A stream on `owner` with two producer appends and a Stream-Seq, compacted and evicted there. */
async function evictedOn(w: World, owner: string): Promise<{ name: string; id: string; node: TestNode }> {
  const node = w.nodes.get(owner)!;
  const name = await nameOn(w, owner);
  expect((await send(w, "POST", name, "one;", producer(0))).status).toBe(200);
  expect((await send(w, "POST", name, "two;", { ...producer(1), "stream-seq": "b" })).status).toBe(200);
  await evict(w, node, name);
  return { name, id: recordOf(w, name).id, node };
}

/** A new stream placed on `owner` (the log places creates: try names until one lands there). */
let names = 0;

async function nameOn(w: World, owner: string): Promise<string> {
  for (let tries = 0; tries < 50; tries++) {
    const name = `ev/${owner}/${names++}`;
    expect((await send(w, "PUT", name)).status).toBe(201);
    if (recordOf(w, name).owner === owner) return name;
  }
  throw new Error(`no create landed on ${owner}`);
}

/** Moves the clock by `ms` in steps below the lease, every live node beating at each. */
async function idleFor(w: World, ms: number): Promise<void> {
  const live = [...w.nodes.values()].filter((node) => !node.crashed);
  for (let passed = 0; passed < ms; passed += LEASE_TTL_MS / 4) await w.advance(LEASE_TTL_MS / 4, live);
}

/** Compacts, lets the stream go idle and evicts it; then compacts again, so replay no longer meets its snapshot. */
async function evict(w: World, node: TestNode, name: string): Promise<void> {
  expect(await node.runtime.compact()).not.toBeNull();
  await idleFor(w, IDLE_MS); // the heartbeats' eviction rounds may take it already
  await node.runtime.evictIdle();
  await eventually(
    () => {
      if (node.runtime.ctx.registry.byName(name) !== undefined) throw new NotYet("still in memory");
      return true;
    },
    { what: `${name} evicted` },
  );
  expect(await node.runtime.compact()).not.toBeNull();
}

/** Begins a transfer of the stream to `target` and waits until the target has opened it. */
async function transferTo(w: World, name: string, id: string, target: string): Promise<void> {
  expect(w.cluster.meta.service.propose({ type: "BeginTransfer", streamId: id, target }).ok).toBe(true);
  await eventually(
    () => {
      const { owner, ownership } = recordOf(w, name);
      if (owner !== target || ownership !== "opened") throw new NotYet(`${ownership} by ${owner}`);
      return true;
    },
    { what: `${name} opened at ${target}` },
  );
}

async function expectWhole(w: World, name: string, text: string): Promise<void> {
  const read = await send(w, "GET", `${name}?offset=-1`);
  expect(read.status).toBe(200);
  expect(await read.text()).toBe(text);
}

/** Producer p1's state survived: its last seq again is a duplicate, and Stream-Seq "a" is behind "b". */
async function expectProducerState(w: World, name: string, lastSeq = 1): Promise<void> {
  const duplicate = await send(w, "POST", name, "again;", producer(lastSeq));
  expect(duplicate.status).toBe(204);
  expect(duplicate.headers.get("producer-seq")).toBe(String(lastSeq));
  expect((await send(w, "POST", name, "x;", { ...producer(lastSeq + 1), "stream-seq": "a" })).status).toBe(409);
}

describe("node tier: idle streams (tables EV and RL)", () => {
  it("EV8 then RL5: an evicted stream's next read reloads it with its data, offsets, producers and Stream-Seq", async () => {
    const w = await world();
    const { name, node } = await evictedOn(w, "b");
    const head = await send(w, "HEAD", name);
    expect(head.headers.get("stream-next-offset")).toBe("0000000000000000_0000000000000008");
    expect(node.runtime.ctx.registry.byName(name)?.phase.kind).toBe("held");
    await expectWhole(w, name, "one;two;");
    await expectProducerState(w, name);
    expect((await send(w, "POST", name, "three;", { ...producer(2), "stream-seq": "c" })).status).toBe(200);
    await expectWhole(w, name, "one;two;three;");
  });

  it("the first record after a reload carries the stream's snapshot: a restart replays it, and nothing is lost", async () => {
    const w = await world();
    const { name, node } = await evictedOn(w, "b");
    expect((await send(w, "POST", name, "three;", producer(2))).status).toBe(200);
    node.crash();
    w.nodes.set("b", await w.cluster.start("b"));
    await expectWhole(w, name, "one;two;three;");
    await expectProducerState(w, name, 2);
  });

  it("a node restarted after an eviction replays nothing of the evicted stream and reloads it on demand", async () => {
    const w = await world();
    const { name, node } = await evictedOn(w, "b");
    node.crash();
    const again = await w.cluster.start("b");
    w.nodes.set("b", again);
    expect(again.runtime.ctx.registry.byName(name)).toBeUndefined();
    await expectWhole(w, name, "one;two;");
    await expectProducerState(w, name);
  });

  it("an evicted stream is handed off (T1): reloaded at its owner, closed with its session, opened by the target", async () => {
    const w = await world();
    const { name, id } = await evictedOn(w, "b");
    await transferTo(w, name, id, "c");
    // Closed in its manifest by the hand-off: the target's open found the session it continues from at once.
    expect(w.events.filter((event) => event === "transfer.failed")).toEqual([]);
    expect(w.events).toContain("transfer.open");
    await expectWhole(w, name, "one;two;");
    await expectProducerState(w, name);
  });

  it("a stream that arrived by a transfer is evicted at its new owner: the previous owner's close in the manifest gives way to the session", async () => {
    const w = await world();
    const name = await nameOn(w, "b");
    expect((await send(w, "POST", name, "one;", producer(0))).status).toBe(200);
    const { id } = recordOf(w, name);
    await transferTo(w, name, id, "c");
    expect((await send(w, "POST", name, "two;", { ...producer(1), "stream-seq": "b" })).status).toBe(200);
    await evict(w, w.nodes.get("c")!, name);
    expect(w.events).not.toContain("stream.evict_skipped");
    await expectWhole(w, name, "one;two;");
    await expectProducerState(w, name);
  });

  it("an evicted stream of a dead node is adopted by its new owner from the eviction's session (RL5 for an orphan)", async () => {
    const w = await world();
    const { name } = await evictedOn(w, "b");
    w.nodes.get("b")!.crash();
    await w.advance(LEASE_TTL_MS + 100, [w.nodes.get("a")!, w.nodes.get("c")!]);
    const refusals: string[] = [];
    await eventually(
      async () => {
        const response = await send(w, "GET", `${name}?offset=-1`);
        if (response.status !== 200) {
          const text = await response.text();
          if (text.includes("cannot be adopted")) refusals.push(text);
          throw new NotYet(`GET answered ${response.status}: ${text}`);
        }
        expect(await response.text()).toBe("one;two;");
        return true;
      },
      { what: "the orphan served by its new owner" },
    );
    expect(refusals).toEqual([]); // adopted from the eviction's session at once, not after a refused adoption
    const adopted = ["a", "c"].map((id) => w.nodes.get(id)!.runtime.ctx.meters.residency.adoptedFromEviction);
    expect(adopted.reduce((sum, n) => sum + n, 0)).toBe(1);
    expect(recordOf(w, name).owner).not.toBe("b");
    await expectProducerState(w, name);
  });

  it("EV6 and EV7: a stream with a long-poll waiting, or touched within the idle time, stays in memory", async () => {
    const w = await world();
    const node = w.nodes.get("b")!;
    const polled = await nameOn(w, "b");
    const touched = await nameOn(w, "b");
    for (const name of [polled, touched]) expect((await send(w, "POST", name, "x")).status).toBe(204);
    expect(await node.runtime.compact()).not.toBeNull();
    await idleFor(w, IDLE_MS);
    const poll = node.request("GET", `${polled}?offset=0000000000000000_0000000000000001&live=long-poll`);
    await eventually(
      () => {
        if (!node.runtime.ctx.readers.waiting(recordOf(w, polled).id)) throw new NotYet("no reader waits");
        return true;
      },
      { what: "the long-poll waiting" },
    );
    expect((await node.request("GET", `${touched}?offset=-1`)).status).toBe(200);
    expect(await node.runtime.evictIdle()).toBe(0);
    expect((await node.request("POST", polled, { headers: TEXT, body: "y" })).status).toBe(204);
    expect((await poll).status).toBe(200);
  });
});
