// Partitions in the node tier (docs/tables.md; table AP of src/core/meta/table-rules.ts): a partitioned
// table is created without buckets, each partition value added gets the definition's bucket count of bucket
// streams `__ds/table/<t>/p/<key>/b/<i>`, served at `/v1/table/<t>/p/<value>/bucket/<i>/` (bucketPath; the
// value as users write it, docs/tables.md "Partitions in URLs"). Three nodes in plain Node over the
// in-memory store and the real MetaLogService, as test/cluster/tables.test.ts.
import { describe, expect, it } from "vitest";
import { bucketPath } from "../../src/core/tables/bucket-paths.ts";
import { bucketOf, bucketStreamName, encodePartition } from "../../src/core/tables/bucketing.ts";
import { validateRow } from "../../src/core/tables/rows.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import type { TestNode } from "./support/test-cluster.ts";
import { TABLE_WORLD_LEASE_TTL_MS, tableWorld, type LogLine, type TableWorld as World } from "./support/table-world.ts";

const ORIGIN = "http://127.0.0.1:8787";
const LEASE_TTL_MS = TABLE_WORLD_LEASE_TTL_MS;
const DEFINITION = {
  columns: [
    { name: "region", type: "string" },
    { name: "id", type: "string" },
    { name: "v", type: "int", nullable: true },
  ],
  primaryKey: ["region", "id"],
  buckets: 2,
  partitionBy: "region",
};
/** Two partition values; the second has characters a path and the key encoding must both escape. */
const EU = "eu";
const US = "us/west?#%é";

/** Three nodes; table "t" partitioned by region, created with no buckets; partitions EU and US added. */
function world(lines: LogLine[] = []): Promise<World> {
  return tableWorld({
    definition: DEFINITION,
    lines,
    setUp: async (a, recorded, cluster) => {
      expect(await a.runtime.createTable("t", recorded, 0)).toEqual({ ok: true, created: true });
      expect(cluster.meta.service.lookupTable("t").buckets).toEqual([]);
      for (const value of [EU, US]) expect(await a.runtime.addPartition("t", value)).toEqual({ ok: true, created: true });
    },
  });
}

function bucketView(w: World, partition: string, bucket: number) {
  const view = w.cluster.meta.service.lookupTable("t").buckets.find((b) => b.partition === partition && b.bucket === bucket);
  if (view === undefined) throw new Error(`no bucket ${partition}/${bucket}`);
  return view;
}

function leaderOf(w: World, partition: string, bucket: number): TestNode {
  return w.nodes.get(bucketView(w, partition, bucket).leaderNode!.id)!;
}

/** An id whose row lands in `bucket` of `partition` (bucketOf over region and id, as the router splits). */
function idIn(w: World, partition: string, bucket: number, from = 0): string {
  for (let i = from; ; i++) {
    const row = validateRow(w.definition, { region: partition, id: `k${i}`, v: null });
    if (row.ok && bucketOf(w.definition, row.value) === bucket) return `k${i}`;
  }
}

/** A bucket-addressed request at `node`, at the path bucketPath builds. */
async function bucketRequest(node: TestNode, method: string, partition: string | number | null, bucket: number, op: string, body?: unknown): Promise<Response> {
  const path = `${bucketPath("t", { partition: partition === null ? null : encodePartition(partition), bucket })}/${op}`;
  return node.fetch(
    new Request(`${ORIGIN}/n/${node.nodeId}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    }),
  );
}

const write = (node: TestNode, partition: string, bucket: number, ops: unknown[]) => bucketRequest(node, "POST", partition, bucket, "write", { ops });

async function lookup(node: TestNode, partition: string, bucket: number, keys: { region: string; id: string }[]): Promise<unknown[]> {
  const response = await bucketRequest(node, "POST", partition, bucket, "lookup", { keys });
  expect(response.status).toBe(200);
  return ((await response.json()) as { rows: unknown[] }).rows;
}

interface ErrorBody {
  readonly error: { readonly code: string; readonly details: Record<string, unknown> };
}

describe("node tier: table partitions", () => {
  it("AP through the node: a partitioned table has no bucket until addPartition; a second addPartition is created:false and changes nothing", async () => {
    const w = await world();
    const before = w.cluster.meta.service.lookupTable("t");
    expect(before.buckets.map((b) => [b.partition, b.bucket, b.stream?.name])).toEqual([
      [EU, 0, bucketStreamName("t", encodePartition(EU), 0)],
      [EU, 1, bucketStreamName("t", encodePartition(EU), 1)],
      [US, 0, bucketStreamName("t", encodePartition(US), 0)],
      [US, 1, bucketStreamName("t", encodePartition(US), 1)],
    ]);
    // At the coordinator: the existing partition. At a node that is not the coordinator: fenced, a repeat or not.
    const again = await w.nodes.get("a")!.runtime.addPartition("t", EU);
    expect(again).toEqual({ ok: true, created: false });
    const after = w.cluster.meta.service.lookupTable("t");
    expect(after.buckets.map((b) => b.streamId)).toEqual(before.buckets.map((b) => b.streamId));
    expect(after.version).toBe(before.version);
    expect(await w.nodes.get("b")!.runtime.addPartition("t", EU)).toMatchObject({ ok: false, error: { code: "fenced" } });
    expect(await w.nodes.get("b")!.runtime.addPartition("t", "new")).toMatchObject({ ok: false, error: { code: "fenced" } });
    // A value of the wrong type for the partition column, and a table that does not exist.
    expect(await w.nodes.get("a")!.runtime.addPartition("t", 5)).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(await w.nodes.get("a")!.runtime.addPartition("nope", EU)).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  it("writes in two partitions: each partition's buckets keep their own rows, the same id in two partitions is two rows", async () => {
    const w = await world();
    const id = idIn(w, EU, 0);
    const usBucket = bucketOf(w.definition, { region: US, id, v: null });
    const eu = leaderOf(w, EU, 0);
    const us = leaderOf(w, US, usBucket);
    const first = await write(eu, EU, 0, [{ upsert: { region: EU, id, v: 1 } }]);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ partition: EU, bucket: 0, count: 1 });
    const second = await write(us, US, usBucket, [{ upsert: { region: US, id, v: 2 } }]);
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ partition: US, bucket: usBucket, count: 1 });
    expect(await lookup(eu, EU, 0, [{ region: EU, id }])).toEqual([{ region: EU, id, v: 1 }]);
    expect(await lookup(us, US, usBucket, [{ region: US, id }])).toEqual([{ region: US, id, v: 2 }]);
    // A delete in one partition leaves the other's row.
    expect((await write(eu, EU, 0, [{ delete: { region: EU, id } }])).status).toBe(200);
    expect(await lookup(eu, EU, 0, [{ region: EU, id }])).toEqual([null]);
    expect(await lookup(us, US, usBucket, [{ region: US, id }])).toEqual([{ region: US, id, v: 2 }]);
    // Each bucket's changelog has its own partition's changes only.
    const changelog = async (node: TestNode, partition: string, bucket: number) => {
      const response = await bucketRequest(node, "GET", partition, bucket, "changelog?offset=-1");
      expect(response.status).toBe(200);
      return response.json();
    };
    expect(await changelog(eu, EU, 0)).toEqual([{ op: "+I", row: { region: EU, id, v: 1 } }, { op: "-D", row: { region: EU, id, v: 1 } }]);
    expect(await changelog(us, US, usBucket)).toEqual([{ op: "+I", row: { region: US, id, v: 2 } }]);
    // A prefix of the partition column answers from its bucket.
    const prefix = await bucketRequest(us, "POST", US, usBucket, "prefix", { prefix: { region: US, id } });
    expect(prefix.status).toBe(200);
    expect(await prefix.json()).toMatchObject({ rows: [{ region: US, id, v: 2 }] });
  });

  it("an op, a key or a prefix of another partition sent to a bucket is 400, even with the same bucket number; nothing is written", async () => {
    const w = await world();
    const bucket = 1;
    const leader = leaderOf(w, EU, bucket);
    const own = idIn(w, EU, bucket);
    // A row of the other partition that would land in the same bucket number there.
    const stray = idIn(w, US, bucket);
    const refused = await write(leader, EU, bucket, [{ upsert: { region: EU, id: own, v: 1 } }, { upsert: { region: US, id: stray, v: 1 } }]);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({ code: "invalid", details: { opIndex: 1 } });
    expect(await lookup(leader, EU, bucket, [{ region: EU, id: own }])).toEqual([null]);
    const key = await bucketRequest(leader, "POST", EU, bucket, "lookup", { keys: [{ region: US, id: stray }] });
    expect(key.status).toBe(400);
    const prefix = await bucketRequest(leader, "POST", EU, bucket, "prefix", { prefix: { region: US, id: stray } });
    expect(prefix.status).toBe(400);
    // And the row of the other partition was never written there either.
    expect(await lookup(leaderOf(w, US, bucket), US, bucket, [{ region: US, id: stray }])).toEqual([null]);
  });

  it("BR1: a partition bucket's request at a node that does not lead it is a 307 not_leader, the partition in the details", async () => {
    const w = await world();
    const leader = leaderOf(w, US, 1);
    const other = [...w.nodes.values()].find((n) => n !== leader)!;
    const response = await write(other, US, 1, [{ upsert: { region: US, id: idIn(w, US, 1), v: 1 } }]);
    expect(response.status).toBe(307);
    // The Location spells the partition as users do: its value, percent-encoded.
    expect(response.headers.get("location")).toBe(`${ORIGIN}/n/${leader.nodeId}/v1/table/t/p/us%2Fwest%3F%23%25%C3%A9/bucket/1/write`);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("not_leader");
    expect(body.error.details).toMatchObject({ table: "t", partition: US, bucket: 1, leader: leader.nodeId, leaderAddr: `${ORIGIN}/n/${leader.nodeId}` });
  });

  it("a partition never added, or a bucket path without a partition for a partitioned table, is 404", async () => {
    const w = await world();
    for (const node of w.nodes.values()) {
      const missing = await write(node, "ap", 0, [{ upsert: { region: "ap", id: "x", v: 1 } }]);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as ErrorBody).error).toMatchObject({ code: "not_found" });
      const lookupMissing = await bucketRequest(node, "POST", "ap", 0, "lookup", { keys: [{ region: "ap", id: "x" }] });
      expect(lookupMissing.status).toBe(404);
      // Bucket 2 of a partition of 2 buckets.
      expect((await write(node, EU, 2, [{ upsert: { region: EU, id: "x", v: 1 } }])).status).toBe(404);
      // The table's buckets are all in partitions: no unpartitioned bucket 0.
      expect((await bucketRequest(node, "POST", null, 0, "lookup", { keys: [{ region: EU, id: "x" }] })).status).toBe(404);
    }
    expect(w.cluster.meta.service.lookupTable("t").buckets).toHaveLength(4);
  });

  it("failover: a dead leader's partition buckets are re-led; the new leader replays the changelog and serves every acknowledged row", async () => {
    const w = await world();
    const victim = leaderOf(w, US, 0);
    const ids = [idIn(w, US, 0), idIn(w, US, 0, 300), idIn(w, US, 0, 600)];
    for (const [v, id] of ids.entries()) expect((await write(victim, US, 0, [{ upsert: { region: US, id, v } }])).status).toBe(200);
    // The same ids in the other partition, at whichever bucket they land: they must not show up in US.
    for (const id of ids) {
      const bucket = bucketOf(w.definition, { region: EU, id, v: null });
      expect((await write(leaderOf(w, EU, bucket), EU, bucket, [{ upsert: { region: EU, id, v: -1 } }])).status).toBe(200);
    }
    victim.crash();
    const alive = [...w.nodes.values()].filter((n) => n !== victim);
    await w.advance(LEASE_TTL_MS + 100, alive);
    const next = await eventually(
      async () => {
        await w.advance(100, alive);
        const node = leaderOf(w, US, 0);
        if (node === victim) throw new NotYet("the bucket still led by the dead node");
        const response = await bucketRequest(node, "POST", US, 0, "lookup", { keys: ids.map((id) => ({ region: US, id })) });
        if (response.status !== 200) throw new NotYet(`lookup at the new leader: ${response.status}`);
        return { node, rows: ((await response.json()) as { rows: unknown[] }).rows };
      },
      { what: "the US partition's bucket 0 served by a new leader" },
    );
    expect(next.rows).toEqual(ids.map((id, v) => ({ region: US, id, v })));
    expect((await write(next.node, US, 0, [{ upsert: { region: US, id: ids[0]!, v: 9 } }])).status).toBe(200);
    expect(await lookup(next.node, US, 0, [{ region: US, id: ids[0]! }])).toEqual([{ region: US, id: ids[0], v: 9 }]);
  });

  it("S5/S9 in a partition: a partition bucket's snapshot commits to its own bucket record, and a new leader restores it", async () => {
    const lines: LogLine[] = [];
    const w = await world(lines);
    const victim = leaderOf(w, US, 1);
    const ids = Array.from({ length: 20 }, (_, i) => idIn(w, US, 1, i * 100));
    for (const [v, id] of ids.entries()) expect((await write(victim, US, 1, [{ upsert: { region: US, id, v } }])).status).toBe(200);
    const streamId = bucketView(w, US, 1).streamId;
    const [snapshot] = await victim.runtime.snapshotBuckets([streamId]);
    expect(snapshot?.error).toBeNull();
    const kept = bucketView(w, US, 1).snapshots;
    expect(kept).toHaveLength(1);
    expect(kept[0]!.rows).toBe(ids.length);
    // Only that bucket of that partition holds a snapshot (not bucket 1 of EU, not buckets[1]).
    expect(w.cluster.meta.service.lookupTable("t").buckets.map((b) => [b.partition, b.bucket, b.snapshots.length])).toEqual([
      [EU, 0, 0],
      [EU, 1, 0],
      [US, 0, 0],
      [US, 1, 1],
    ]);
    // Written after the snapshot: only this is replayed at the new leader.
    expect((await write(victim, US, 1, [{ upsert: { region: US, id: ids[0]!, v: 100 } }])).status).toBe(200);
    victim.crash();
    const alive = [...w.nodes.values()].filter((n) => n !== victim);
    await w.advance(LEASE_TTL_MS + 100, alive);
    const rows = await eventually(
      async () => {
        await w.advance(100, alive);
        const node = leaderOf(w, US, 1);
        if (node === victim) throw new NotYet("still led by the dead node");
        const response = await bucketRequest(node, "POST", US, 1, "lookup", { keys: ids.map((id) => ({ region: US, id })) });
        if (response.status !== 200) throw new NotYet(`lookup: ${response.status}`);
        return ((await response.json()) as { rows: unknown[] }).rows;
      },
      { what: "the US partition's bucket 1 served by a new leader" },
    );
    expect(rows).toEqual(ids.map((id, v) => ({ region: US, id, v: v === 0 ? 100 : v })));
    const load = lines.find((line) => line["event"] === "table.load" && line["streamId"] === streamId && line["node"] !== victim.nodeId);
    expect(load?.["restoredFrom"]).toBe(kept[0]!.coveredPosition);
    expect(load?.["replayedBytes"]).toBeGreaterThan(0);
    expect(Number(load?.["replayedBytes"])).toBeLessThan(kept[0]!.coveredPosition);
  });
});
