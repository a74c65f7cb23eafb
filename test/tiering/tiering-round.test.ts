// A tiering round over the in-memory store (docs/tiering.md; src/tiering/tiering-round.ts), read back by an
// outside reader (icebird): rounds continue where the last snapshot ended (exactly once), and the coordinator
// epoch fences a holder that lost the lease (its heartbeat is refused, or a newer epoch's version is there),
// so its late commit changes nothing.
import { describe, expect, test } from "vitest";
import { domainError } from "../../src/core/errors.ts";
import type { ChangeRecord } from "../../src/core/tables/changelog.ts";
import { definitionOf as definition } from "../support/parse-definition.ts";
import { isStoreError } from "../../src/storage/object-store.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { resolveRetry } from "../../src/storage/retry-policy.ts";
import { readLatestVersion } from "../../src/tiering/iceberg-store.ts";
import { tierTable, type TieringBucket, type TieringPort } from "../../src/tiering/tiering-round.ts";
import { readIcebergTable } from "../support/iceberg-reader.ts";


const LOG = definition({ columns: [{ name: "id", type: "int" }, { name: "note", type: "json", nullable: true }], buckets: 2 });
const KEYED = definition({ columns: [{ name: "day", type: "string" }, { name: "id", type: "int" }, { name: "v", type: "float" }], primaryKey: ["day", "id"], buckets: 1, partitionBy: "day" });

/** Each record's size in the fake changelogs' byte positions. */
const RECORD_BYTES = 10_000;

/** Bucket changelogs in memory: what the leaders' streams hold (each record RECORD_BYTES of byte positions). */
class Changelogs {
  readonly logs = new Map<string, ChangeRecord[]>();
  append(streamId: string, ...records: ChangeRecord[]): void {
    this.logs.set(streamId, [...(this.logs.get(streamId) ?? []), ...records]);
  }
  read(streamId: string, fromPosition: number, maxBytes: number) {
    const all = this.logs.get(streamId) ?? [];
    const first = fromPosition / RECORD_BYTES;
    const records = all.slice(first, first + Math.max(1, Math.floor(maxBytes / RECORD_BYTES)));
    return { records, endPosition: (first + records.length) * RECORD_BYTES, atTail: first + records.length === all.length };
  }
}

/** File names and snapshot ids, unique across every round of a test (as random ones are). */
let names = 0;
let ids = 0;

function port(store: MemoryStore, logs: Changelogs, epoch: number, hooks: { heartbeat?: (n: number) => Promise<boolean> } = {}): TieringPort {
  let beats = 0;
  return {
    store,
    retry: resolveRetry({ sleep: async () => {} }),
    storeUri: "s3://mink",
    coordinatorEpoch: epoch,
    heartbeat: async () => ((await (hooks.heartbeat?.(++beats) ?? Promise.resolve(true))) ? { ok: true, value: undefined } : { ok: false, error: domainError("fenced", "lease lost") }),
    readChangelog: async (bucket, from, maxBytes) => {
      const { records, endPosition, atTail } = logs.read(bucket.streamId, from.position, maxBytes);
      return { ok: true, value: { records, end: { position: endPosition, offset: from.offset + records.length }, atTail } };
    },
    now: () => 1_000,
    newName: () => (++names).toString(16).padStart(32, "0"),
    newSnapshotId: () => ++ids,
  };
}

const readTable = (store: MemoryStore, table: string) =>
  readIcebergTable(`s3://mink/tiered/${table}`, async (_bucket, key) => {
    try {
      return (await store.get(key)).body;
    } catch (error) {
      if (isStoreError(error, "not_found")) return null;
      throw error;
    }
  });

const LOG_BUCKETS: TieringBucket[] = [
  { streamId: "s1", partition: null, bucket: 0 },
  { streamId: "s2", partition: null, bucket: 1 },
];
const ins = (id: number, note: unknown = null): ChangeRecord => ({ op: "+I", row: { id, note } as ChangeRecord["row"] });

describe("tiering rounds over an object store, read back by icebird", () => {
  test("a log table tiered twice with writes between holds every row exactly once", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    logs.append("s1", ins(1, { a: [1] }), ins(2));
    logs.append("s2", ins(3));
    const first = await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    expect(first.ok && first.value.committed && first.value.rows).toBe(3);
    logs.append("s2", ins(4), ins(5));
    const second = await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    expect(second.ok ? second.value.buckets.map((b) => [b.streamId, b.fromOffset, b.toOffset]) : second.error).toEqual([
      ["s1", 2, 2],
      ["s2", 1, 3],
    ]);
    const rows = await readTable(store, "events");
    expect(rows.map((row) => [row["id"], row["note"], row["_bucket"], row["_offset"]]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      [1n, '{"a":[1]}', 0, 0n],
      [2n, null, 0, 1n],
      [3n, null, 1, 0n],
      [4n, null, 1, 1n],
      [5n, null, 1, 2n],
    ]);
    // Nothing new: no commit, the same snapshot.
    const third = await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    expect(third.ok && [third.value.committed, third.value.snapshotId]).toEqual([false, second.ok && second.value.snapshotId]);
  });

  test("a partitioned primary-key table shows exactly the current rows after each round", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    const buckets: TieringBucket[] = [
      { streamId: "p1", partition: "mon", bucket: 0 },
      { streamId: "p2", partition: "tue", bucket: 0 },
    ];
    logs.append("p1", { op: "+I", row: { day: "mon", id: 1, v: 1.5 } }, { op: "+I", row: { day: "mon", id: 2, v: 2 } });
    logs.append("p2", { op: "+I", row: { day: "tue", id: 1, v: 3 } });
    await tierTable(port(store, logs, 1), { name: "scores", definition: KEYED, buckets }, 1 << 20);
    const firstRows = await readTable(store, "scores");
    expect(firstRows.map((r) => `${String(r["day"])}/${String(r["id"])}=${String(r["v"])}`).sort()).toEqual(["mon/1=1.5", "mon/2=2", "tue/1=3"]);
    logs.append("p1", { op: "-U", row: { day: "mon", id: 1, v: 1.5 } }, { op: "+U", row: { day: "mon", id: 1, v: 9 } }, { op: "-D", row: { day: "mon", id: 2, v: 2 } });
    logs.append("p2", { op: "+I", row: { day: "tue", id: 2, v: 4 } });
    await tierTable(port(store, logs, 1), { name: "scores", definition: KEYED, buckets }, 1 << 20);
    const rows = await readTable(store, "scores");
    expect(rows.map((r) => `${String(r["day"])}/${String(r["id"])}=${String(r["v"])}`).sort()).toEqual(["mon/1=9", "tue/1=3", "tue/2=4"]);
  });

  test("a round reads at most its share of the round's budget of each bucket, says there is more, and the next round goes on from there", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    logs.append("s1", ins(1), ins(2), ins(3));
    // Two buckets share 40,000 bytes: two records of each.
    const first = await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 4 * RECORD_BYTES);
    expect(first.ok && [first.value.buckets[0], first.value.more]).toMatchObject([{ fromOffset: 0, toOffset: 2 }, true]);
    const second = await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 4 * RECORD_BYTES);
    expect(second.ok && [second.value.buckets[0], second.value.more]).toMatchObject([{ fromOffset: 2, toOffset: 3 }, false]);
    expect((await readTable(store, "events")).map((r) => r["id"]).sort()).toEqual([1n, 2n, 3n]);
  });
});

describe("fencing by the coordinator epoch", () => {
  test("a holder whose heartbeat is refused before its commit commits nothing", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    logs.append("s1", ins(1));
    const refused = await tierTable(port(store, logs, 1, { heartbeat: async (n) => n < 3 }), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    expect(refused.ok ? "committed" : refused.error.code).toBe("fenced");
    const latest = await readLatestVersion(store, "events");
    expect(latest?.metadata.snapshots).toEqual([]);
  });

  test("a round of an older epoch than the latest version is fenced and writes nothing", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    logs.append("s1", ins(1));
    await tierTable(port(store, logs, 2), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    const objects = (await store.list("tiered/")).objects.length;
    logs.append("s1", ins(2));
    const stale = await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    expect(stale.ok ? "committed" : [stale.error.code, stale.error.details?.["coordinatorEpoch"]]).toEqual(["fenced", 2]);
    expect((await store.list("tiered/")).objects.length).toBe(objects);
  });

  test("the old holder's late commit is refused once the new holder wrote a version, and no row is tiered twice or lost", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    logs.append("s1", ins(1), ins(2));
    await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    logs.append("s1", ins(3));
    logs.append("s2", ins(4));
    const uncommittedFilesOfEpoch1 = async (): Promise<string[]> => {
      const committed = new Set((await readLatestVersion(store, "events"))?.metadata.snapshots.map((s) => s["snapshot-id"]));
      return (await store.list("tiered/events/")).objects.map((o) => o.key).filter((key) => {
        const round = /\/e1-s(\d+)-/.exec(key);
        return round !== null && !committed.has(Number(round[1]));
      });
    };
    let newHolder: Awaited<ReturnType<typeof tierTable>> | null = null;
    let oldFilesBeforeTakeover = 0;
    // The old holder's last heartbeat before its commit passes; the lease moves before the PUT lands.
    const old = await tierTable(
      port(store, logs, 1, {
        heartbeat: async (n) => {
          if (n === 2) {
            oldFilesBeforeTakeover = (await uncommittedFilesOfEpoch1()).length;
            newHolder = await tierTable(port(store, logs, 2), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
          }
          return n <= 2;
        },
      }),
      { name: "events", definition: LOG, buckets: LOG_BUCKETS },
      1 << 20,
    );
    expect(old.ok ? "committed" : old.error.code).toBe("fenced");
    expect(newHolder).toMatchObject({ ok: true, value: { committed: true, rows: 2 } });
    const latest = await readLatestVersion(store, "events");
    expect(latest?.metadata.properties["mink.coordinator-epoch"]).toBe("2");
    expect((await readTable(store, "events")).map((r) => r["id"]).sort()).toEqual([1n, 2n, 3n, 4n]);

    // Table OF: the files the old holder wrote for its round (data, manifest, list) were collected by the
    // new holder's round, which found them of an older epoch and never committed; the table still reads whole.
    expect(oldFilesBeforeTakeover).toBe(3);
    expect(await uncommittedFilesOfEpoch1()).toEqual([]);
    expect((await readTable(store, "events")).map((r) => r["id"]).sort()).toEqual([1n, 2n, 3n, 4n]);
  });

  test("a new holder's fence version refuses the old holder's late commit even when the new holder has nothing to commit", async () => {
    const store = new MemoryStore();
    const logs = new Changelogs();
    logs.append("s1", ins(1));
    await tierTable(port(store, logs, 1), { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20);
    logs.append("s1", ins(2));
    // The new holder's round fences the table, then finds no leader answering: it commits nothing.
    const unreachable: TieringPort = { ...port(store, logs, 2), readChangelog: async () => ({ ok: false, error: domainError("unavailable", "no leader") }) };
    const old = await tierTable(
      port(store, logs, 1, {
        heartbeat: async (n) => {
          if (n === 2) expect(await tierTable(unreachable, { name: "events", definition: LOG, buckets: LOG_BUCKETS }, 1 << 20)).toMatchObject({ ok: true, value: { committed: false } });
          return true;
        },
      }),
      { name: "events", definition: LOG, buckets: LOG_BUCKETS },
      1 << 20,
    );
    expect(old.ok ? "committed" : old.error.code).toBe("fenced");
    const latest = await readLatestVersion(store, "events");
    expect(latest?.metadata.properties["mink.coordinator-epoch"]).toBe("2");
    expect((await readTable(store, "events")).map((r) => r["id"])).toEqual([1n]);
  });
});
