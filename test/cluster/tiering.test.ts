// Tiering in the node tier (docs/tiering.md): three nodes in plain Node over the in-memory store and the real
// MetaLogService. The coordinator reads every bucket at its leader (another node's, through its RPC) and
// commits; a node that is not the lease holder is refused; TIERING_INTERVAL_MS tiers on the holder's
// heartbeat; and a holder that stalls in the middle of a round, while the lease moves on, has its late
// commit refused while the new holder's round commits, with every row tiered exactly once.
import { describe, expect, it } from "vitest";
import { bucketOf } from "../../src/core/tables/bucketing.ts";
import { validateRow } from "../../src/core/tables/rows.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { PutOptions, PutResult } from "../../src/storage/object-store.ts";
import { isStoreError } from "../../src/storage/object-store.ts";
import { readLatestVersion } from "../../src/tiering/iceberg-store.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import { readIcebergTable } from "../support/iceberg-reader.ts";
import type { TestNode } from "./support/test-cluster.ts";
import { TABLE_WORLD_LEASE_TTL_MS, tableWorld, type TableWorld as World } from "./support/table-world.ts";

const DEFINITION = { columns: [{ name: "id", type: "string" }, { name: "v", type: "int", nullable: true }], primaryKey: ["id"], buckets: 4 };

function world(options: { store?: MemoryStore; settings?: Record<string, string> } = {}): Promise<World> {
  return tableWorld({
    definition: DEFINITION,
    ...options,
    setUp: async (a, recorded) => {
      expect(await a.runtime.createTable("t", recorded, DEFINITION.buckets)).toEqual({ ok: true, created: true });
    },
  });
}

function leaderOf(w: World, bucket: number): TestNode {
  return w.nodes.get(w.cluster.meta.service.lookupTable("t").buckets[bucket]!.leaderNode!.id)!;
}

/** Upserts `id = v` at the leader of the id's bucket. */
async function upsert(w: World, id: string, v: number | null): Promise<void> {
  const row = validateRow(w.definition, { id, v });
  if (!row.ok) throw new Error(row.error.message);
  const bucket = bucketOf(w.definition, row.value);
  const response = await leaderOf(w, bucket).table("POST", `t/bucket/${bucket}/write`, { ops: [{ upsert: { id, v } }] });
  expect(response.status, await response.clone().text()).toBe(200);
}

async function tiered(store: MemoryStore): Promise<string[]> {
  const rows = await readIcebergTable("s3://mink/tiered/t", async (_bucket, key) => {
    try {
      return (await store.get(key)).body;
    } catch (error) {
      if (isStoreError(error, "not_found")) return null;
      throw error;
    }
  });
  return rows.map((row) => `${String(row["id"])}=${String(row["v"])}`).sort();
}

describe("tiering at the coordinator, three nodes", () => {
  it("reads every bucket at its leader, on any node, and commits a snapshot icebird reads back", async () => {
    const store = new MemoryStore();
    const w = await world({ store });
    const leaders = new Set([0, 1, 2, 3].map((bucket) => leaderOf(w, bucket).nodeId));
    expect(leaders.size).toBeGreaterThan(1);
    for (let i = 0; i < 12; i++) await upsert(w, `k${i}`, i);
    const answer = await w.nodes.get("a")!.runtime.tierTable("t");
    expect(answer.ok && [answer.report.committed, answer.report.rows, answer.report.buckets.every((b) => b.error === null)]).toEqual([true, 12, true]);
    expect(await tiered(store)).toEqual(Array.from({ length: 12 }, (_, i) => `k${i}=${i}`).sort());
  });

  it("a node that does not hold the lease is refused as fenced, naming the holder", async () => {
    const w = await world();
    const answer = await w.nodes.get("b")!.runtime.tierTable("t");
    expect(answer.ok ? "tiered" : [answer.error.code, answer.error.details?.["holder"]]).toEqual(["fenced", "a"]);
  });

  it("TIERING_INTERVAL_MS: the lease holder's heartbeat tiers every table in the background", async () => {
    const store = new MemoryStore();
    const w = await world({ store, settings: { TIERING_INTERVAL_MS: "500" } });
    await upsert(w, "x", 1);
    await w.advance(500, [...w.nodes.values()]);
    await eventually(async () => {
      const latest = await readLatestVersion(store, "t");
      if (latest?.metadata["current-snapshot-id"] === undefined) throw new NotYet("no snapshot yet");
      return true;
    });
    expect(await tiered(store)).toEqual(["x=1"]);
  });
});

/** A store that holds the first PUT of one key until released: a holder stalled right before its commit lands. */
class StallingStore extends MemoryStore {
  private stalled: { key: string; release: Promise<void> } | null = null;
  arrived = false;
  stall(key: string, release: Promise<void>): void {
    this.stalled = { key, release };
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    const stalled = this.stalled;
    if (stalled !== null && stalled.key === key) {
      this.stalled = null;
      this.arrived = true;
      await stalled.release;
    }
    return super.put(key, body, options);
  }
}

describe("a coordinator that stalls in the middle of a round", () => {
  it("the new holder's round commits, the old holder's late commit is refused, and nothing is tiered twice or lost", async () => {
    const store = new StallingStore();
    const w = await world({ store });
    const [a, b, c] = ["a", "b", "c"].map((id) => w.nodes.get(id)!) as [TestNode, TestNode, TestNode];
    await upsert(w, "k1", 1);
    expect((await a.runtime.tierTable("t")).ok).toBe(true); // versions 1 (created) and 2
    await upsert(w, "k2", 2);
    await upsert(w, "k1", 10);

    // a's next commit (version 3) stalls on its way to the store.
    let release = (): void => {};
    store.stall("tiered/t/metadata/v3.metadata.json", new Promise<void>((resolve) => (release = resolve)));
    const stale = a.runtime.tierTable("t");
    await eventually(async () => {
      if (!store.arrived) throw new NotYet("a's commit has not reached the store");
      return true;
    });
    // a stops heartbeating; its lease runs out and b takes it (a new coordinator epoch), then tiers.
    await w.advance(TABLE_WORLD_LEASE_TTL_MS + 1, [b, c]);
    await w.advance(100, [b, c]);
    expect(b.runtime.coordinator.coordinatorEpoch).not.toBeNull();
    await upsert(w, "k3", 3);
    const fresh = await b.runtime.tierTable("t");
    expect(fresh.ok && fresh.report.committed).toBe(true);

    // a's stalled commit lands now: its version is taken (b's fence), and its next heartbeat is refused: the
    // lease moved (fenced), or, as here, the new coordinator declared a dead (stale_epoch).
    release();
    const late = await stale;
    expect(late.ok ? "committed" : late.error.code).toMatch(/^(fenced|stale_epoch)$/);
    const latest = await readLatestVersion(store, "t");
    expect(latest?.metadata.properties["mink.coordinator-epoch"]).toBe(String(b.runtime.coordinator.coordinatorEpoch));
    expect(await tiered(store)).toEqual(["k1=10", "k2=2", "k3=3"]);
    // Each snapshot after the first was b's: a's round committed nothing.
    expect(latest?.metadata.snapshots.map((s) => s.summary["mink.coordinator-epoch"])).toEqual([String(a.runtime.coordinator.coordinatorEpoch ?? 1), String(b.runtime.coordinator.coordinatorEpoch)]);
  });
});
