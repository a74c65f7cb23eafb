// Partitions in URLs at the node (docs/tables.md, "Partitions in URLs"; tables PS and PO of
// src/core/tables/partition-segment.ts): a bucket path names its partition by the value users wrote, as
// text, percent-encoded: a date, a string with a space and a `/`, an int, a negative int. Written here as
// literal paths, not built by bucketPath, so a change of spelling fails these tests. The old internal
// spelling (encodePartition) is 404 with the segment to write, unless it is itself a partition's value.
import { describe, expect, it } from "vitest";
import { bucketOf, encodePartition } from "../../src/core/tables/bucketing.ts";
import { validateRow } from "../../src/core/tables/rows.ts";
import type { TestNode } from "./support/test-cluster.ts";
import { tableWorld, type TableWorld as World } from "./support/table-world.ts";

const ORIGIN = "http://127.0.0.1:8787";
const DAY = "2026-12-06";
const SPACED = "eu/west side";
/** A partition whose value is the internal key of SPACED: the user's value wins (PO1). */
const KEY_LIKE = encodePartition(SPACED);

function definition(type: "string" | "int") {
  return {
    columns: [{ name: "day", type }, { name: "id", type: "string" }, { name: "v", type: "int", nullable: true }],
    primaryKey: ["day", "id"],
    buckets: 2,
    partitionBy: "day",
  };
}

function world(type: "string" | "int", values: readonly (string | number)[]): Promise<World> {
  return tableWorld({
    definition: definition(type),
    setUp: async (a, recorded) => {
      expect(await a.runtime.createTable("t", recorded, 0)).toEqual({ ok: true, created: true });
      for (const value of values) expect(await a.runtime.addPartition("t", value)).toEqual({ ok: true, created: true });
    },
  });
}

function bucketOfRow(w: World, day: string | number, id: string): number {
  const row = validateRow(w.definition, { day, id, v: null });
  if (!row.ok) throw new Error(row.error.message);
  return bucketOf(w.definition, row.value);
}

function leaderOf(w: World, day: string | number, bucket: number): TestNode {
  const view = w.cluster.meta.service.lookupTable("t").buckets.find((b) => b.partition === day && b.bucket === bucket);
  return w.nodes.get(view!.leaderNode!.id)!;
}

/** A request at `node` for the literal path `path` (below `/n/<node>`). */
function at(node: TestNode, method: string, path: string, body?: unknown): Promise<Response> {
  const init = { method, headers: { "content-type": "application/json" }, body: body === undefined ? null : JSON.stringify(body) };
  return node.fetch(new Request(`${ORIGIN}/n/${node.nodeId}${path}`, init));
}

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly details: Record<string, unknown> };
}

/** Write, lookup, prefix and changelog of one row at its bucket's leader, the partition spelled `segment`. */
async function roundOfOps(w: World, day: string | number, segment: string): Promise<void> {
  const id = "k1";
  const bucket = bucketOfRow(w, day, id);
  const leader = leaderOf(w, day, bucket);
  const base = `/v1/table/t/p/${segment}/bucket/${bucket}`;
  const written = await at(leader, "POST", `${base}/write`, { ops: [{ upsert: { day, id, v: 1 } }] });
  expect(written.status).toBe(200);
  // The answer names the partition by its value, not its internal key.
  expect(await written.json()).toMatchObject({ partition: day, bucket, count: 1 });
  const looked = await at(leader, "POST", `${base}/lookup`, { keys: [{ day, id }] });
  expect(await looked.json()).toEqual({ rows: [{ day, id, v: 1 }] });
  const scanned = await at(leader, "POST", `${base}/prefix`, { prefix: { day, id } });
  expect(await scanned.json()).toMatchObject({ rows: [{ day, id, v: 1 }] });
  const changes = await at(leader, "GET", `${base}/changelog?offset=-1`);
  expect(changes.status).toBe(200);
  expect(await changes.json()).toEqual([{ op: "+I", row: { day, id, v: 1 } }]);
}

describe("node tier: partitions addressed by their values", () => {
  it("PS1: a date and a string with a space and a '/' (percent-encoded) address their partitions: write, lookup, prefix, changelog", async () => {
    const w = await world("string", [DAY, SPACED]);
    await roundOfOps(w, DAY, "2026-12-06");
    await roundOfOps(w, SPACED, "eu%2Fwest%20side");
  });

  it("PS3: an int and a negative int address their partitions", async () => {
    const w = await world("int", [42, -7]);
    await roundOfOps(w, 42, "42");
    await roundOfOps(w, -7, "-7");
  });

  it("BR1: at a node that does not lead the bucket, the 307's Location and details spell the partition as users do", async () => {
    const w = await world("string", [SPACED]);
    const bucket = bucketOfRow(w, SPACED, "k1");
    const leader = leaderOf(w, SPACED, bucket);
    const other = [...w.nodes.values()].find((n) => n !== leader)!;
    const path = `/v1/table/t/p/eu%2Fwest%20side/bucket/${bucket}/changelog?offset=-1`;
    const redirected = await at(other, "GET", path);
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get("location")).toBe(`${ORIGIN}/n/${leader.nodeId}${path}`);
    expect(((await redirected.json()) as ErrorBody).error.details).toMatchObject({ partition: SPACED, bucket });
    expect((await at(leader, "GET", path)).status).toBe(200);
  });

  it("PO3 and PS4/PS5: a value the table lacks is 404; a segment that is no value of an int column is 400", async () => {
    const w = await world("int", [42]);
    for (const node of w.nodes.values()) {
      const missing = await at(node, "POST", "/v1/table/t/p/43/bucket/0/lookup", { keys: [{ day: 43, id: "x" }] });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as ErrorBody).error.details).toMatchObject({ partition: 43 });
      for (const [segment, reason] of [["042", "not_an_int"], ["%2B42", "not_an_int"], ["42.0", "not_an_int"], ["9007199254740992", "out_of_range"]] as const) {
        const refused = await at(node, "POST", `/v1/table/t/p/${segment}/bucket/0/lookup`, { keys: [] });
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as ErrorBody).error).toMatchObject({ code: "invalid", details: { field: "partition", reason } });
      }
    }
  });

  it("PO2: the old internal spelling is 404 naming the segment to write, at every node, before and after the bucket is loaded", async () => {
    const w = await world("string", [DAY]);
    const bucket = bucketOfRow(w, DAY, "k1");
    const old = `/v1/table/t/p/${encodeURIComponent(encodePartition(DAY))}/bucket/${bucket}/write`;
    const check = async (): Promise<void> => {
      for (const node of w.nodes.values()) {
        const refused = await at(node, "POST", old, { ops: [{ upsert: { day: DAY, id: "k1", v: 1 } }] });
        expect(refused.status).toBe(404);
        const { error } = (await refused.json()) as ErrorBody;
        expect(error).toMatchObject({ code: "not_found", details: { reason: "internal_partition_key", partitionSegment: DAY } });
        expect(error.message).toContain("/p/2026-12-06/");
      }
    };
    await check();
    await roundOfOps(w, DAY, "2026-12-06");
    await check();
    // Nothing was written by the refused requests: the one row is the one roundOfOps wrote.
    const rows = await at(leaderOf(w, DAY, bucket), "POST", `/v1/table/t/p/${DAY}/bucket/${bucket}/prefix`, { prefix: { day: DAY, id: "k1" } });
    expect(((await rows.json()) as { rows: unknown[] }).rows).toHaveLength(1);
  });

  it("PO2 for an int column: the old spelling names the int to write", async () => {
    const w = await world("int", [-7]);
    const refused = await at(w.nodes.get("a")!, "POST", `/v1/table/t/p/${encodePartition(-7)}/bucket/0/lookup`, { keys: [] });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({ code: "not_found", details: { reason: "internal_partition_key", partitionSegment: "-7" } });
  });

  it("PO1: a segment that is a partition's value is that partition, even when it is also another partition's internal key", async () => {
    const w = await world("string", [SPACED, KEY_LIKE]);
    await roundOfOps(w, KEY_LIKE, encodeURIComponent(KEY_LIKE));
    await roundOfOps(w, SPACED, encodeURIComponent(SPACED));
  });
});
