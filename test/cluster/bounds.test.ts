// The node's client-reachable bounds end to end (docs/limits.md, "Stream nodes"): a node in plain
// Node over the in-memory store and metadata log, each bound reached through the protocol app, with the
// answer the client gets and what the node still does meanwhile.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { eventually, stillPending } from "../support/eventually.ts";
import { FORWARDED_TOKEN_ID } from "../../src/http/request-target.ts";
import { TestCluster, type TestNode } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };
const JSON_TYPE = { "content-type": "application/json" };

async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return body.error.code;
}

async function errorOf(response: Response): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  return ((await response.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
}

function producer(id: string, epoch: number, seq: number): Record<string, string> {
  return { ...TEXT, "producer-id": id, "producer-epoch": String(epoch), "producer-seq": String(seq) };
}

describe("node bounds: live readers (MAX_LIVE_READERS)", () => {
  it("a long-poll over MAX_LIVE_READERS is answered at once with 429 and never spins; appends are still acknowledged", async () => {
    // With a 30 s long-poll timeout, a reader over the cap that waited or looped would outlast the test.
    const cluster = new TestCluster({ settings: { MAX_LIVE_READERS: "2", LONG_POLL_TIMEOUT_MS: "30000" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "lr/one", { headers: TEXT })).status).toBe(201);
    const first = node.request("GET", "lr/one?offset=now&live=long-poll");
    const second = node.request("GET", "lr/one?offset=now&live=long-poll");
    await eventually(() => node.runtime.ctx.readers.size === 2, { what: "two long-polls waiting" });

    const third = await node.request("GET", "lr/one?offset=now&live=long-poll");
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("1");
    const error = await errorOf(third);
    expect(error).toMatchObject({ code: "limit_reached", details: { limit: "MAX_LIVE_READERS", max: 2 } });
    const sse = await node.request("GET", "lr/one?offset=now&live=sse");
    expect(sse.status).toBe(429);

    // The node keeps acknowledging appends, and the admitted readers get them.
    expect((await node.request("POST", "lr/one", { headers: TEXT, body: "x" })).status).toBe(204);
    for (const answer of await Promise.all([first, second])) {
      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe("x");
    }
    expect(node.runtime.ctx.liveReaders.active).toBe(0);
  });

  it("MAX_LIVE_READERS_PER_TOKEN: a token at its share gets 429 at once while another token and a tokenless reader still park; a released slot is the token's again", async () => {
    const cluster = new TestCluster({ settings: { MAX_LIVE_READERS: "4", MAX_LIVE_READERS_PER_TOKEN: "2", LONG_POLL_TIMEOUT_MS: "30000" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "lr/share", { headers: TEXT })).status).toBe(201);
    const as = (tokenId: string): { headers: Record<string, string> } => ({ headers: { [FORWARDED_TOKEN_ID]: tokenId } });
    const parked = [node.request("GET", "lr/share?offset=now&live=long-poll", as("t1")), node.request("GET", "lr/share?offset=now&live=long-poll", as("t1"))];
    await eventually(() => node.runtime.ctx.readers.size === 2, { what: "t1's two long-polls waiting" });
    const refused = await node.request("GET", "lr/share?offset=now&live=long-poll", as("t1"));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await errorOf(refused)).toMatchObject({ code: "limit_reached", details: { limit: "MAX_LIVE_READERS_PER_TOKEN", max: 2 } });
    expect((await node.request("GET", "lr/share?offset=now&live=sse", as("t1"))).status).toBe(429);
    parked.push(node.request("GET", "lr/share?offset=now&live=long-poll", as("t2")), node.request("GET", "lr/share?offset=now&live=long-poll"));
    await eventually(() => node.runtime.ctx.readers.size === 4, { what: "t2's and a tokenless long-poll waiting" });
    expect(await errorOf(await node.request("GET", "lr/share?offset=now&live=long-poll", as("t3")))).toMatchObject({ details: { limit: "MAX_LIVE_READERS" } });
    expect((await node.request("POST", "lr/share", { headers: TEXT, body: "x" })).status).toBe(204);
    for (const answer of await Promise.all(parked)) expect(answer.status).toBe(200);
    expect(node.runtime.ctx.liveReaders.active).toBe(0);
    expect(node.runtime.ctx.liveReaders.heldBy("t1")).toBe(0);
    const again = node.request("GET", "lr/share?offset=now&live=long-poll", as("t1"));
    expect(await stillPending(again)).toBe(true);
    expect((await node.request("POST", "lr/share", { headers: TEXT, body: "y" })).status).toBe(204);
    expect((await again).status).toBe(200);
  });

  it("a long-poll that finds data at once takes no live-reader slot", async () => {
    const cluster = new TestCluster({ settings: { MAX_LIVE_READERS: "1" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "lr/two", { headers: TEXT, body: "ab" })).status).toBe(201);
    const waiting = node.request("GET", "lr/two?offset=now&live=long-poll");
    await eventually(() => node.runtime.ctx.readers.size === 1, { what: "the long-poll waiting" });
    const withData = await node.request("GET", "lr/two?offset=-1&live=long-poll");
    expect(withData.status).toBe(200);
    expect(await withData.text()).toBe("ab");
    expect((await node.request("POST", "lr/two", { headers: TEXT, body: "c" })).status).toBe(204);
    expect((await waiting).status).toBe(200);
  });

  it("an SSE response holds its slot until it ends, then the slot is free again", async () => {
    const cluster = new TestCluster({ settings: { MAX_LIVE_READERS: "1", LONG_POLL_TIMEOUT_MS: "30000" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "lr/three", { headers: TEXT })).status).toBe(201);
    const sse = await node.request("GET", "lr/three?offset=now&live=sse");
    expect(sse.status).toBe(200);
    expect(node.runtime.ctx.liveReaders.active).toBe(1);
    expect((await node.request("GET", "lr/three?offset=now&live=long-poll")).status).toBe(429);
    await sse.body?.cancel();
    await eventually(() => node.runtime.ctx.liveReaders.active === 0, { what: "the SSE slot released" });
    const poll = node.request("GET", "lr/three?offset=now&live=long-poll");
    expect(await stillPending(poll)).toBe(true);
    expect((await node.request("POST", "lr/three", { headers: TEXT, body: "y" })).status).toBe(204);
    expect((await poll).status).toBe(200);
  });
});

describe("node bounds: one page per read", () => {
  const PAGE = 64;

  it("a JSON message larger than a page is returned alone, never read to the tail", async () => {
    const cluster = new TestCluster({ overrides: { maxReadBytes: PAGE } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "pg/json", { headers: JSON_TYPE })).status).toBe(201);
    const big = { x: "a".repeat(3 * PAGE) };
    for (const message of [big, big, { s: 1 }, { s: 2 }]) {
      expect((await node.request("POST", "pg/json", { headers: JSON_TYPE, body: JSON.stringify(message) })).status).toBe(204);
    }
    // Every read of the stream's bytes is at most one page (once, the first read went to the tail).
    const registry = node.runtime.ctx.registry;
    const readBytes = registry.readBytes.bind(registry);
    const reads: number[] = [];
    registry.readBytes = (stream, start, end) => {
      reads.push(end - start);
      return readBytes(stream, start, end);
    };
    const first = await node.request("GET", "pg/json?offset=-1");
    expect(await first.json()).toEqual([big]);
    expect(Math.max(...reads)).toBeLessThanOrEqual(PAGE);
    expect(first.headers.get("stream-up-to-date")).toBeNull();
    const second = await node.request("GET", `pg/json?offset=${first.headers.get("stream-next-offset")}`);
    expect(await second.json()).toEqual([big]);
    const third = await node.request("GET", `pg/json?offset=${second.headers.get("stream-next-offset")}`);
    expect(await third.json()).toEqual([{ s: 1 }, { s: 2 }]);
    expect(third.headers.get("stream-up-to-date")).toBe("true");
  });

  it("property: paging returns every message once, in order, and a page is one page's worth or one message", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 3 * PAGE }), { minLength: 1, maxLength: 8 }), async (sizes) => {
        const cluster = new TestCluster({ overrides: { maxReadBytes: PAGE } });
        const node = await cluster.start("node-a");
        expect((await node.request("PUT", "pg/prop", { headers: JSON_TYPE })).status).toBe(201);
        const messages = sizes.map((size, i) => ({ i, pad: "p".repeat(size) }));
        for (const message of messages) {
          expect((await node.request("POST", "pg/prop", { headers: JSON_TYPE, body: JSON.stringify(message) })).status).toBe(204);
        }
        const seen: unknown[] = [];
        let offset = "-1";
        for (let pages = 0; pages <= messages.length; pages++) {
          const page = await node.request("GET", `pg/prop?offset=${offset}`);
          const got = (await page.json()) as unknown[];
          const storedBytes = got.reduce<number>((sum, m) => sum + JSON.stringify(m).length + 1, 0);
          expect(got.length === 1 || storedBytes <= PAGE).toBe(true);
          seen.push(...got);
          offset = page.headers.get("stream-next-offset")!;
          if (page.headers.get("stream-up-to-date") === "true") break;
        }
        expect(seen).toEqual(messages);
      }),
      { numRuns: 15 },
    );
  });
});

describe("node bounds: producers per stream (MAX_PRODUCERS_PER_STREAM, PRODUCER_IDLE_MS)", () => {
  it("a new producer over the cap gets 429 unless idle ones are pruned; the pruning survives a restart and a compaction", async () => {
    let nowMs = Date.now();
    const cluster = new TestCluster({ now: () => nowMs, settings: { MAX_PRODUCERS_PER_STREAM: "2", PRODUCER_IDLE_MS: "1000" } });
    let node: TestNode = await cluster.start("node-a");
    const post = (headers: Record<string, string>, body = "d"): Promise<Response> => node.request("POST", "pr/one", { headers, body });
    expect((await node.request("PUT", "pr/one", { headers: TEXT })).status).toBe(201);
    expect((await post(producer("a", 0, 0))).status).toBe(200);
    nowMs += 600;
    expect((await post(producer("b", 0, 0))).status).toBe(200);

    const refused = await post(producer("c", 0, 0));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await errorOf(refused)).toMatchObject({ code: "limit_reached", details: { limit: "MAX_PRODUCERS_PER_STREAM", max: 2 } });

    // "a" has been idle for PRODUCER_IDLE_MS, "b" not: "c" takes "a"'s place.
    nowMs += 600;
    expect((await post(producer("c", 0, 0))).status).toBe(200);
    const answers = async (): Promise<number[]> => [
      (await post(producer("a", 0, 1))).status, // pruned: a stranger again, seq 1 is a gap
      (await post(producer("b", 0, 0))).status, // kept: a duplicate
      (await post(producer("c", 0, 0))).status, // kept: a duplicate
    ];
    expect(await answers()).toEqual([409, 204, 204]);

    node.crash();
    node = await cluster.start("node-a");
    expect(await answers()).toEqual([409, 204, 204]);
    await node.runtime.compact();
    node.crash();
    node = await cluster.start("node-a");
    expect(await answers()).toEqual([409, 204, 204]);
    expect(await (await node.request("GET", "pr/one?offset=-1")).text()).toBe("ddd");
  });

  it("property: replay after a restart rebuilds exactly the producer table the node had, prunes included", async () => {
    const step = fc.record({ id: fc.constantFrom("a", "b", "c", "d", "e"), advanceMs: fc.constantFrom(0, 300, 700) });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), fc.boolean(), async (steps, compactFirst) => {
        let nowMs = Date.now();
        const cluster = new TestCluster({ now: () => nowMs, settings: { MAX_PRODUCERS_PER_STREAM: "3", PRODUCER_IDLE_MS: "1000" } });
        const node = await cluster.start("node-a");
        expect((await node.request("PUT", "pr/prop", { headers: TEXT })).status).toBe(201);
        const nextSeq = new Map<string, number>();
        for (const { id, advanceMs } of steps) {
          nowMs += advanceMs;
          const answer = await node.request("POST", "pr/prop", { headers: producer(id, 0, nextSeq.get(id) ?? 0), body: id });
          if (answer.status === 200) nextSeq.set(id, (nextSeq.get(id) ?? 0) + 1);
          else if (answer.status === 409) nextSeq.set(id, 0); // pruned meanwhile: a stranger again
          else expect(answer.status).toBe(429);
        }
        const table = (n: TestNode): unknown[] => [...n.runtime.ctx.registry.byName("pr/prop")!.decided.producers].sort();
        const before = table(node);
        expect(before.length).toBeLessThanOrEqual(3);
        if (compactFirst) await node.runtime.compact();
        node.crash();
        const again = await cluster.start("node-a");
        expect(table(again)).toEqual(before);
      }),
      { numRuns: 12 },
    );
  });

  it("Producer-Epoch 2^53-1 cannot fence a producer for good: a raise beyond MAX_PRODUCER_EPOCH_STEP is a 400", async () => {
    const cluster = new TestCluster({ settings: { MAX_PRODUCER_EPOCH_STEP: "10" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "pr/two", { headers: TEXT })).status).toBe(201);
    expect((await node.request("POST", "pr/two", { headers: producer("p", 0, 0), body: "a" })).status).toBe(200);
    const jump = await node.request("POST", "pr/two", { headers: producer("p", Number.MAX_SAFE_INTEGER, 0), body: "b" });
    expect(jump.status).toBe(400);
    const error = await errorOf(jump);
    expect(error).toMatchObject({ code: "invalid", details: { reason: "epoch_step", limit: "MAX_PRODUCER_EPOCH_STEP", maxEpoch: 10 } });
    expect((await node.request("POST", "pr/two", { headers: producer("p", 1, 0), body: "c" })).status).toBe(200);
    expect((await node.request("POST", "pr/two", { headers: producer("q", 11, 0), body: "d" })).status).toBe(400);
    expect(await (await node.request("GET", "pr/two?offset=-1")).text()).toBe("ac");
  });
});

describe("node bounds: header values (MAX_HEADER_VALUE_BYTES)", () => {
  it("a 17 KB Content-Type is a 400 naming the header, not a retryable 503", async () => {
    const cluster = new TestCluster();
    const node = await cluster.start("node-a");
    const created = await node.request("PUT", "hd/one", { headers: { "content-type": `text/plain; x=${"a".repeat(17_000)}` } });
    expect(created.status).toBe(400);
    const error = await errorOf(created);
    expect(error.code).toBe("invalid");
    expect(error.message).toContain("Content-Type");
    expect(error.message).toContain("1024");
    expect((await node.request("HEAD", "hd/one")).status).toBe(404);
  });

  it.each([
    ["Producer-Id", { ...producer("p".repeat(1_025), 0, 0) }],
    ["Stream-Seq", { ...TEXT, "stream-seq": "z".repeat(1_025) }],
    ["Content-Type", { "content-type": `text/plain; y=${"b".repeat(1_020)}` }],
  ])("an append whose %s is over the limit is a 400 and appends nothing", async (name, headers) => {
    const cluster = new TestCluster();
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "hd/two", { headers: TEXT })).status).toBe(201);
    const answer = await node.request("POST", "hd/two", { headers, body: "x" });
    expect(answer.status).toBe(400);
    expect(await errorOf(answer)).toMatchObject({ code: "invalid", details: { header: name, maxBytes: 1_024 } });
    expect(await (await node.request("GET", "hd/two?offset=-1")).text()).toBe("");
  });

  it("the fork headers are bounded too", async () => {
    const cluster = new TestCluster({ settings: { MAX_HEADER_VALUE_BYTES: "64" } });
    const node = await cluster.start("node-a");
    const answer = await node.request("PUT", "hd/fork", { headers: { ...TEXT, "stream-forked-from": `/v1/stream/${"s".repeat(80)}` } });
    expect(answer.status).toBe(400);
    expect(await errorOf(answer)).toMatchObject({ details: { header: "Stream-Forked-From", maxBytes: 64 } });
  });
});

describe("node bounds: fork depth (MAX_FORK_DEPTH)", () => {
  it("a fork of a stream whose fork chain is already MAX_FORK_DEPTH deep is a 400 with the limit", async () => {
    const cluster = new TestCluster({ settings: { MAX_FORK_DEPTH: "2" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "fk/root", { headers: TEXT, body: "r" })).status).toBe(201);
    const fork = (name: string, source: string): Promise<Response> =>
      node.request("PUT", name, { headers: { ...TEXT, "stream-forked-from": `/v1/stream/${source}` } });
    expect((await fork("fk/one", "fk/root")).status).toBe(201);
    expect((await fork("fk/two", "fk/one")).status).toBe(201);
    const tooDeep = await fork("fk/three", "fk/two");
    expect(tooDeep.status).toBe(400);
    const error = await errorOf(tooDeep);
    expect(error).toMatchObject({ code: "invalid", details: { reason: "fork_depth", max: 2, limit: "MAX_FORK_DEPTH" } });
    expect(error.message).toContain("MAX_FORK_DEPTH");
    // A sibling at an allowed depth still works, and the deepest fork reads its whole chain.
    expect((await fork("fk/two-b", "fk/one")).status).toBe(201);
    expect(await (await node.request("GET", "fk/two?offset=-1")).text()).toBe("r");
  });
});

describe("node bounds: memory (MAX_BODY_BYTES_IN_FLIGHT, MAX_JSON_MESSAGES)", () => {
  it("a body beyond MAX_BODY_BYTES_IN_FLIGHT held by the node gets 503 with Retry-After before it is read; the held one is acknowledged and frees the pool", async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const cluster = new TestCluster({ store: new MemoryStore({ sleep: () => gate }), settings: { MAX_BODY_BYTES_IN_FLIGHT: "200" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "bp/one", { headers: TEXT })).status).toBe(201);
    expect((await node.request("PUT", "bp/two", { headers: TEXT })).status).toBe(201);
    cluster.store.inject({ op: "put", keyPrefix: "wal/node-a/", kind: "delay", delayMs: 1 });
    const held = node.request("POST", "bp/one", { headers: TEXT, body: "h".repeat(150) });
    await eventually(() => node.runtime.ctx.bodies.heldBytes === 150, { what: "the first body held" });
    const refused = await node.request("POST", "bp/two", { headers: TEXT, body: "r".repeat(100) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await errorOf(refused)).toMatchObject({ code: "unavailable", details: { limit: "MAX_BODY_BYTES_IN_FLIGHT", max: 200 } });
    // A declared length is reserved before any byte is read; an undeclared one is counted as it is read.
    const create = await node.request("PUT", "bp/three", { headers: { ...TEXT, "content-length": "100" }, body: "c".repeat(100) });
    expect(create.status).toBe(503);
    expect(node.runtime.ctx.bodies.heldBytes).toBe(150);
    // A write without a body holds nothing and is never refused by the pool.
    expect(await stillPending(node.request("POST", "bp/two", { headers: { ...TEXT, "stream-closed": "true" } }))).toBe(true);
    expect(await stillPending(held)).toBe(true);
    openGate();
    expect((await held).status).toBe(204);
    await eventually(() => node.runtime.ctx.bodies.heldBytes === 0, { what: "the pool emptied" });
    expect((await node.request("POST", "bp/one", { headers: TEXT, body: "r".repeat(100) })).status).toBe(204);
    expect(await (await node.request("GET", "bp/one?offset=-1")).text()).toBe(`${"h".repeat(150)}${"r".repeat(100)}`);
  });

  it("a JSON append or create of more than MAX_JSON_MESSAGES messages is 413 naming the limit; nothing is appended", async () => {
    const cluster = new TestCluster({ settings: { MAX_JSON_MESSAGES: "3" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "jm/one", { headers: JSON_TYPE, body: "[1,2,3]" })).status).toBe(201);
    const append = await node.request("POST", "jm/one", { headers: JSON_TYPE, body: "[4,5,6,7]" });
    expect(append.status).toBe(413);
    expect(await errorOf(append)).toMatchObject({ code: "too_large", details: { limit: "MAX_JSON_MESSAGES", max: 3 } });
    const create = await node.request("PUT", "jm/two", { headers: JSON_TYPE, body: "[1,2,3,4]" });
    expect(create.status).toBe(413);
    expect((await node.request("POST", "jm/one", { headers: JSON_TYPE, body: "[4,5,6]" })).status).toBe(204);
    expect(await (await node.request("GET", "jm/one?offset=-1")).json()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("node bounds: the WAL (MAX_WAL_QUEUE_BYTES, WAL_BATCH_DEADLINE_MS)", () => {
  it("appends beyond MAX_WAL_QUEUE_BYTES get 503 with Retry-After at once; the queued one is acknowledged", async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const cluster = new TestCluster({ store: new MemoryStore({ sleep: () => gate }), settings: { MAX_WAL_QUEUE_BYTES: "200" } });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "wq/one", { headers: TEXT })).status).toBe(201);
    cluster.store.inject({ op: "put", keyPrefix: "wal/node-a/", kind: "delay", delayMs: 1 });
    const held = node.request("POST", "wq/one", { headers: TEXT, body: "h".repeat(150) });
    await eventually(() => node.runtime.wal.queuedBytes > 0, { what: "the first append queued" });
    const refused = await node.request("POST", "wq/one", { headers: TEXT, body: "r".repeat(100) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await errorOf(refused)).toMatchObject({ code: "unavailable", details: { limit: "MAX_WAL_QUEUE_BYTES", max: 200 } });
    expect(await stillPending(held)).toBe(true);
    openGate();
    expect((await held).status).toBe(204);
    expect(node.runtime.wal.queuedBytes).toBe(0);
    expect((await node.request("POST", "wq/one", { headers: TEXT, body: "a" })).status).toBe(204);
    expect(await (await node.request("GET", "wq/one?offset=-1")).text()).toBe(`${"h".repeat(150)}a`);
  });

  it("a WAL object that does not land within WAL_BATCH_DEADLINE_MS: 503, the node stops, and the seal settles its outcome once", async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const cluster = new TestCluster({ store: new MemoryStore({ sleep: () => gate }), settings: { WAL_BATCH_DEADLINE_MS: "50" } });
    const first = await cluster.start("node-a");
    expect((await first.request("PUT", "wd/one", { headers: TEXT })).status).toBe(201);
    expect((await first.request("POST", "wd/one", { headers: producer("p", 0, 0), body: "a" })).status).toBe(200);
    cluster.store.inject({ op: "put", keyPrefix: "wal/node-a/", kind: "delay", delayMs: 1 });
    const stalled = await first.request("POST", "wd/one", { headers: producer("p", 0, 1), body: "b" });
    expect(stalled.status).toBe(503);
    expect(await errorCode(stalled)).toBe("unavailable");
    expect(first.crashed).toBe(true); // the writer stopped: the shell replaces the incarnation
    // The stalled PUT lands late, before the next incarnation seals: it is replayed (not acknowledged, not lost).
    openGate();
    await eventually(() => cluster.store.keys().filter((key) => key.startsWith("wal/node-a/")).length >= 3, { what: "the late WAL object" });
    const second = await cluster.start("node-a");
    expect(await (await second.request("GET", "wd/one?offset=-1")).text()).toBe("ab");
    // The client's retry of the unacknowledged append is a duplicate, never a second copy.
    expect((await second.request("POST", "wd/one", { headers: producer("p", 0, 1), body: "b" })).status).toBe(204);
    expect(await (await second.request("GET", "wd/one?offset=-1")).text()).toBe("ab");
  });

  it("a WAL object past its deadline that lands after the next seal is fenced: the retry is appended exactly once", async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const cluster = new TestCluster({ store: new MemoryStore({ sleep: () => gate }), settings: { WAL_BATCH_DEADLINE_MS: "50" } });
    const first = await cluster.start("node-a");
    expect((await first.request("PUT", "wd/two", { headers: TEXT })).status).toBe(201);
    cluster.store.inject({ op: "put", keyPrefix: "wal/node-a/", kind: "delay", delayMs: 1 });
    expect((await first.request("POST", "wd/two", { headers: producer("p", 0, 0), body: "a" })).status).toBe(503);
    const second = await cluster.start("node-a");
    openGate(); // the stalled PUT now collides with the seal and loses
    expect((await second.request("POST", "wd/two", { headers: producer("p", 0, 0), body: "a" })).status).toBe(200);
    expect(await (await second.request("GET", "wd/two?offset=-1")).text()).toBe("a");
    const third = await cluster.start("node-a");
    expect(await (await third.request("GET", "wd/two?offset=-1")).text()).toBe("a");
  });
});
