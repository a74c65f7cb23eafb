// Tables in the node tier (docs/tables.md): three nodes in plain Node over the in-memory store and the
// real MetaLogService, each keeping its tablets in memory across restarts (as the Durable Object's SQLite
// does). A bucket is a stream: its leader is the stream's owner, its leader epoch the stream's epoch.
import { describe, expect, it } from "vitest";
import { bucketOf } from "../../src/core/tables/bucketing.ts";
import { validateRow } from "../../src/core/tables/rows.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import type { TestNode } from "./support/test-cluster.ts";
import { MAX_TABLE_WRITE_BYTES } from "../../src/core/tables/tablet-write.ts";
import { TABLE_WORLD_LEASE_TTL_MS, tableWorld, type LogLine, type TableWorld as World } from "./support/table-world.ts";

const LEASE_TTL_MS = TABLE_WORLD_LEASE_TTL_MS;
const DEFINITION = {
  columns: [
    { name: "id", type: "string" },
    { name: "v", type: "int", nullable: true },
  ],
  primaryKey: ["id"],
  buckets: 4,
};

function world(store?: MemoryStore, lines: LogLine[] = [], walBatchDeadlineMs = 10_000): Promise<World> {
  return tableWorld({
    definition: DEFINITION,
    store,
    lines,
    walBatchDeadlineMs,
    setUp: async (a, recorded) => {
      expect(await a.runtime.createTable("t", recorded, DEFINITION.buckets)).toEqual({ ok: true, created: true });
    },
  });
}

function leaderOf(w: World, bucket: number): { node: TestNode; epoch: number } {
  const view = w.cluster.meta.service.lookupTable("t").buckets[bucket]!;
  return { node: w.nodes.get(view.leaderNode!.id)!, epoch: view.stream!.epoch };
}

/** A key of the table that lands in `bucket` (bucketOf over the key, as the router splits). */
function keyIn(w: World, bucket: number, from = 0): string {
  for (let i = from; ; i++) {
    const row = validateRow(w.definition, { id: `k${i}`, v: null });
    if (row.ok && bucketOf(w.definition, row.value) === bucket) return `k${i}`;
  }
}

async function write(node: TestNode, bucket: number, ops: unknown[], headers?: Record<string, string>): Promise<Response> {
  return node.table("POST", `t/bucket/${bucket}/write`, { ops }, headers);
}

async function lookup(node: TestNode, bucket: number, ids: string[], minOffset?: string): Promise<unknown[]> {
  const response = await node.table("POST", `t/bucket/${bucket}/lookup`, { keys: ids.map((id) => ({ id })), ...(minOffset === undefined ? {} : { minOffset }) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { rows: unknown[] }).rows;
}

async function changelog(node: TestNode, bucket: number): Promise<unknown[]> {
  const response = await node.table("GET", `t/bucket/${bucket}/changelog?offset=-1`);
  expect(response.status).toBe(200);
  return (await response.json()) as unknown[];
}

describe("node tier: tables", () => {
  it("W1-W4, R1: upsert, update, delete and lookup at the leader; the changelog carries +I, -U/+U, -D images", async () => {
    const w = await world();
    const { node, epoch } = leaderOf(w, 1);
    const id = keyIn(w, 1);
    const first = await write(node, 1, [{ upsert: { id, v: 1 } }]);
    expect(first.status).toBe(200);
    const answer = (await first.json()) as { bucket: number; leaderEpoch: number; nextOffset: string; count: number };
    expect(answer).toMatchObject({ bucket: 1, count: 1 });
    expect(answer.leaderEpoch).toBeGreaterThan(epoch); // the first open took the next epoch
    expect(await lookup(node, 1, [id, keyIn(w, 1, 1000)])).toEqual([{ id, v: 1 }, null]);
    expect((await write(node, 1, [{ upsert: { id, v: 2 } }, { upsert: { id, v: 2 } }])).status).toBe(200);
    expect((await write(node, 1, [{ delete: { id } }])).status).toBe(200);
    expect(await lookup(node, 1, [id])).toEqual([null]);
    expect(await changelog(node, 1)).toEqual([
      { op: "+I", row: { id, v: 1 } },
      { op: "-U", row: { id, v: 1 } },
      { op: "+U", row: { id, v: 2 } },
      { op: "-D", row: { id, v: 2 } },
    ]);
  });

  it("BR1: a bucket request at a node that does not lead it is not_leader: a 307 to the leader, its address and leader epoch in the body", async () => {
    const w = await world();
    const { node: leader } = leaderOf(w, 2);
    const other = [...w.nodes.values()].find((n) => n !== leader)!;
    const response = await write(other, 2, [{ upsert: { id: keyIn(w, 2), v: 1 } }]);
    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe(`http://127.0.0.1:8787/n/${leader.nodeId}/v1/table/t/bucket/2/write`);
    const body = (await response.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe("not_leader");
    expect(body.error.details).toMatchObject({ table: "t", bucket: 2, leader: leader.nodeId, leaderAddr: `http://127.0.0.1:8787/n/${leader.nodeId}` });
  });

  it("R7: a json value 100,000 levels deep is a 400 naming MAX_JSON_VALUE_DEPTH, not a retryable 503, and writes nothing", async () => {
    const definition = { columns: [{ name: "id", type: "string" }, { name: "doc", type: "json", nullable: true }], primaryKey: ["id"], buckets: 1 };
    const w = await tableWorld({
      definition,
      setUp: async (a, recorded) => {
        expect(await a.runtime.createTable("t", recorded, 1)).toEqual({ ok: true, created: true });
      },
    });
    const { node } = leaderOf(w, 0);
    const depth = 100_000;
    // Sent as text: the test's own JSON.stringify would overflow the stack on such a value.
    const body = `{"ops":[{"upsert":{"id":"deep","doc":${"[".repeat(depth)}${"]".repeat(depth)}}}]}`;
    const response = await node.fetch(new Request(`http://mink.test/n/${node.nodeId}/v1/table/t/bucket/0/write`, { method: "POST", headers: { "content-type": "application/json" }, body }));
    const text = await response.text();
    expect(response.status, text).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ error: { code: "invalid", retryable: false, details: { field: "doc" } } });
    expect(text).toContain("MAX_JSON_VALUE_DEPTH");
    expect(await lookup(node, 0, ["deep"])).toEqual([null]);
  });

  it("MAX_TABLE_WRITE_BYTES: a bucket write whose body is over 2 MiB is 413 before any op is read and writes nothing; a small one is taken", async () => {
    const w = await world();
    const { node } = leaderOf(w, 0);
    const id = keyIn(w, 0);
    const padded = (bytes: number): unknown[] => [{ upsert: { id, v: 1 } }, ...Array.from({ length: Math.ceil(bytes / 60_000) }, () => ({ delete: { id: `${id}-none`, pad: "x".repeat(60_000) } }))];
    const over = await write(node, 0, padded(MAX_TABLE_WRITE_BYTES + 1));
    expect(over.status).toBe(413);
    expect(await lookup(node, 0, [id])).toEqual([null]);
    const under = await write(node, 0, [{ upsert: { id, v: 2 } }]);
    expect(under.status).toBe(200);
    expect(await lookup(node, 0, [id])).toEqual([{ id, v: 2 }]);
  });

  it("an op of another bucket is refused whole at a bucket-addressed write", async () => {
    const w = await world();
    const { node } = leaderOf(w, 0);
    const response = await write(node, 0, [{ upsert: { id: keyIn(w, 0), v: 1 } }, { upsert: { id: keyIn(w, 3), v: 1 } }]);
    expect(response.status).toBe(400);
    expect(await lookup(node, 0, [keyIn(w, 0)])).toEqual([null]);
  });

  it("exactly once per bucket: a batch repeated with the same producer seq is a 204 duplicate and is in the changelog once", async () => {
    const w = await world();
    const { node } = leaderOf(w, 3);
    const id = keyIn(w, 3);
    const producer = { "producer-id": "p1", "producer-epoch": "0", "producer-seq": "0" };
    const once = await write(node, 3, [{ upsert: { id, v: 7 } }], producer);
    expect(once.status).toBe(200);
    expect(once.headers.get("producer-seq")).toBe("0");
    expect((await write(node, 3, [{ upsert: { id, v: 7 } }], producer)).status).toBe(204);
    expect((await write(node, 3, [{ upsert: { id, v: 8 } }], { ...producer, "producer-seq": "1" })).status).toBe(200);
    expect(await changelog(node, 3)).toEqual([
      { op: "+I", row: { id, v: 7 } },
      { op: "-U", row: { id, v: 7 } },
      { op: "+U", row: { id, v: 8 } },
    ]);
  });

  it("a batch that changes nothing appends nothing and does not take the producer seq", async () => {
    const w = await world();
    const { node } = leaderOf(w, 0);
    const id = keyIn(w, 0);
    const producer = { "producer-id": "p2", "producer-epoch": "0", "producer-seq": "0" };
    const noop = await write(node, 0, [{ delete: { id } }], producer);
    expect(noop.status).toBe(200);
    expect(await noop.json()).toMatchObject({ count: 0 });
    expect(noop.headers.get("producer-seq")).toBeNull();
    expect((await write(node, 0, [{ upsert: { id, v: 1 } }], producer)).status).toBe(200);
    expect(await changelog(node, 0)).toEqual([{ op: "+I", row: { id, v: 1 } }]);
  });

  it("R7: a lookup with minOffset waits until the bucket has applied that far; a lookup never sees a row the WAL has not acknowledged", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const store = new MemoryStore({ sleep: () => held });
    const w = await world(store);
    const { node } = leaderOf(w, 1);
    const id = keyIn(w, 1);
    expect((await write(node, 1, [{ upsert: { id, v: 1 } }])).status).toBe(200); // opens and loads the bucket
    store.inject({ op: "put", keyPrefix: "wal/", kind: "delay" });
    const pending = write(node, 1, [{ upsert: { id, v: 2 } }]);
    await eventually(() => node.runtime.ctx.tables.all()[0]?.state.pending.length === 1, { what: "a batch in flight" });
    expect(await lookup(node, 1, [id])).toEqual([{ id, v: 1 }]);
    release();
    const answer = (await (await pending).json()) as { nextOffset: string };
    expect(await lookup(node, 1, [id], answer.nextOffset)).toEqual([{ id, v: 2 }]);
  });

  it("a restart that keeps leadership replays only what its tablet has not applied", async () => {
    const w = await world();
    const { node } = leaderOf(w, 2);
    const ids = [keyIn(w, 2), keyIn(w, 2, 500)];
    for (const [i, id] of ids.entries()) expect((await write(node, 2, [{ upsert: { id, v: i } }])).status).toBe(200);
    const tablets = w.cluster.tabletsOf(node.nodeId);
    const streamId = w.cluster.meta.service.lookupTable("t").buckets[2]!.streamId;
    const markBefore = tablets.open(streamId).mark();
    node.crash();
    const again = await w.cluster.start(node.nodeId);
    w.nodes.set(node.nodeId, again);
    let applied = 0;
    const open = tablets.open.bind(tablets);
    tablets.open = (id) => {
      const tablet = open(id);
      const apply = tablet.apply.bind(tablet);
      tablet.apply = (changes, mark) => {
        applied++;
        apply(changes, mark);
      };
      return tablet;
    };
    expect(await lookup(again, 2, ids)).toEqual(ids.map((id, v) => ({ id, v })));
    expect(applied).toBe(0);
    expect(tablets.open(streamId).mark()).toEqual(markBefore);
  });

  it("failover: a dead leader's buckets are re-led like its streams; the new leader replays the changelog and serves every acknowledged row", async () => {
    const w = await world();
    const { node: victim } = leaderOf(w, 0);
    const ids = [keyIn(w, 0), keyIn(w, 0, 300), keyIn(w, 0, 600)];
    for (const [i, id] of ids.entries()) expect((await write(victim, 0, [{ upsert: { id, v: i } }])).status).toBe(200);
    victim.crash();
    const alive = [...w.nodes.values()].filter((n) => n !== victim);
    await w.advance(LEASE_TTL_MS + 100, alive);
    const next = await eventually(
      async () => {
        await w.advance(100, alive);
        const { node } = leaderOf(w, 0);
        if (node === victim) throw new NotYet("bucket 0 still led by the dead node");
        const response = await node.table("POST", "t/bucket/0/lookup", { keys: ids.map((id) => ({ id })) });
        if (response.status !== 200) throw new NotYet(`lookup at the new leader: ${response.status}`);
        return { node, rows: ((await response.json()) as { rows: unknown[] }).rows };
      },
      { what: "bucket 0 served by a new leader" },
    );
    expect(next.rows).toEqual(ids.map((id, v) => ({ id, v })));
    expect((await write(next.node, 0, [{ upsert: { id: ids[0]!, v: 9 } }])).status).toBe(200);
    expect(await lookup(next.node, 0, [ids[0]!])).toEqual([{ id: ids[0], v: 9 }]);
  });

  it("S5/S9 at a new leader: it restores the newest committed snapshot and replays the changelog only from its covered position", async () => {
    const lines: LogLine[] = [];
    const w = await world(undefined, lines);
    const { node: victim } = leaderOf(w, 1);
    const ids = Array.from({ length: 20 }, (_, i) => keyIn(w, 1, i * 100));
    for (const [v, id] of ids.entries()) expect((await write(victim, 1, [{ upsert: { id, v } }])).status).toBe(200);
    const streamId = w.cluster.meta.service.lookupTable("t").buckets[1]!.streamId;
    const [snapshot] = await victim.runtime.snapshotBuckets([streamId]);
    expect(snapshot?.error).toBeNull();
    const kept = w.cluster.meta.service.lookupTable("t").buckets[1]!.snapshots;
    expect(kept).toHaveLength(1);
    expect(kept[0]!.rows).toBe(ids.length);
    // Written after the snapshot: only this is replayed at the new leader.
    expect((await write(victim, 1, [{ upsert: { id: ids[0]!, v: 100 } }])).status).toBe(200);
    victim.crash();
    const alive = [...w.nodes.values()].filter((n) => n !== victim);
    await w.advance(LEASE_TTL_MS + 100, alive);
    const rows = await eventually(
      async () => {
        await w.advance(100, alive);
        const { node } = leaderOf(w, 1);
        if (node === victim) throw new NotYet("still led by the dead node");
        const response = await node.table("POST", "t/bucket/1/lookup", { keys: ids.map((id) => ({ id })) });
        if (response.status !== 200) throw new NotYet(`lookup: ${response.status}`);
        return ((await response.json()) as { rows: unknown[] }).rows;
      },
      { what: "bucket 1 served by a new leader" },
    );
    expect(rows).toEqual(ids.map((id, v) => ({ id, v: v === 0 ? 100 : v })));
    const load = lines.find((line) => line["event"] === "table.load" && line["streamId"] === streamId && line["node"] !== victim.nodeId);
    expect(load?.["restoredFrom"]).toBe(kept[0]!.coveredPosition);
    expect(load?.["replayedBytes"]).toBeGreaterThan(0);
    expect(Number(load?.["replayedBytes"])).toBeLessThan(kept[0]!.coveredPosition);
  });

  it("a transfer moves a bucket like any stream: the target opens it from the store, loads its tablet and serves every row", async () => {
    const w = await world();
    const { node: source } = leaderOf(w, 2);
    const target = [...w.nodes.values()].find((n) => n !== source)!;
    const ids = [keyIn(w, 2), keyIn(w, 2, 400)];
    for (const [v, id] of ids.entries()) expect((await write(source, 2, [{ upsert: { id, v } }])).status).toBe(200);
    const streamId = w.cluster.meta.service.lookupTable("t").buckets[2]!.streamId;
    const begun = w.cluster.meta.service.propose({ type: "BeginTransfer", streamId, target: target.nodeId });
    expect(begun.ok).toBe(true);
    const rows = await eventually(
      async () => {
        const view = w.cluster.meta.service.lookupTable("t").buckets[2]!;
        if (view.leaderNode?.id !== target.nodeId || view.stream?.ownership !== "opened") throw new NotYet(JSON.stringify(view.stream));
        const response = await target.table("POST", "t/bucket/2/lookup", { keys: ids.map((id) => ({ id })) });
        if (response.status !== 200) throw new NotYet(`lookup: ${response.status}`);
        return ((await response.json()) as { rows: unknown[] }).rows;
      },
      { what: "bucket 2 moved to the target" },
    );
    expect(rows).toEqual(ids.map((id, v) => ({ id, v })));
    expect((await write(source, 2, [{ upsert: { id: ids[0]!, v: 5 } }])).status).toBe(307);
  });

  it("A7 with a WAL failure injected: a write whose WAL object never lands is never visible, before or after the node restarts", async () => {
    const store = new MemoryStore();
    // The WAL object's deadline (real time) ends the failing write's retries soon.
    const w = await world(store, [], 1_000);
    const { node } = leaderOf(w, 3);
    const id = keyIn(w, 3);
    expect((await write(node, 3, [{ upsert: { id, v: 1 } }])).status).toBe(200);
    // Every WAL put fails from now on: the write's retries go on until its deadline.
    store.inject({ op: "put", keyPrefix: "wal/", kind: "fail", times: Infinity });
    const failing = write(node, 3, [{ upsert: { id, v: 2 } }]);
    await eventually(() => node.runtime.ctx.tables.all().some((bucket) => bucket.state.pending.length === 1), { what: "the batch in flight" });
    expect(await lookup(node, 3, [id])).toEqual([{ id, v: 1 }]);
    expect((await failing).status).toBe(503);
    store.clearFaults();
    const again = await w.cluster.start(node.nodeId);
    w.nodes.set(node.nodeId, again);
    expect(await lookup(again, 3, [id])).toEqual([{ id, v: 1 }]);
    expect(await changelog(again, 3)).toEqual([{ op: "+I", row: { id, v: 1 } }]);
  });
});
