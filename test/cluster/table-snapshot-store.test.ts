// Table S in the object store (docs/tables.md, "Snapshots in the object store"): round trip, shared parts
// written once (S3), corrupt parts refused (S4) and the fallback to the older snapshot (S9), collection of
// what no kept snapshot references (S7), and a dropped bucket's prefix emptied.
import { beforeEach, describe, expect, test } from "vitest";
import type { Row } from "../../src/core/tables/changelog.ts";
import { takeSnapshot, type SnapshotCut } from "../../src/core/tables/snapshot.ts";
import type { Tablet } from "../../src/core/tables/tablet.ts";
import {
  collectSnapshots,
  deleteBucketSnapshots,
  readSnapshot,
  restoreLatest,
  writeSnapshot,
  type SnapshotRef,
} from "../../src/node/tables/snapshot-store.ts";
import { tableManifestKey, tablePartKey, tablePartsPrefix, tableSnapshotPrefix } from "../../src/storage/keys.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore, PutOptions, PutResult } from "../../src/storage/object-store.ts";

const ROWS = 20_000;
/** For the corruption and collection rules, where a few parts are enough (the core's cutting costs time). */
const FEW_ROWS = 4_000;
/** About 80 parts of ~25 KB for 20,000 rows of ~100 B: small enough that one changed row is a small share. */
const CUT: SnapshotCut = { maxPartBytes: 64 * 1024, boundaryModulus: 256 };
const BUCKET = "s7";

function rowOf(i: number, version = 0): Row {
  return { id: i, version, note: `row ${i} `.padEnd(60, "x") };
}

function tabletOf(count: number, appliedOffset: number, changed: ReadonlyMap<number, number> = new Map()): Tablet {
  const rows = new Map<string, Row>();
  for (let i = 0; i < count; i++) rows.set(`k${String(i).padStart(6, "0")}`, rowOf(i, changed.get(i) ?? 0));
  return { rows, appliedOffset };
}

function partIds(tablet: Tablet): string[] {
  return takeSnapshot(tablet, CUT).manifest.parts.map((p) => p.id);
}

/** Records the key of every put that reached the store. */
class PutRecorder implements ObjectStore {
  readonly puts: string[] = [];
  constructor(private readonly inner: MemoryStore) {}
  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    const result = await this.inner.put(key, body, options);
    this.puts.push(key);
    return result;
  }
  get: ObjectStore["get"] = (key, range) => this.inner.get(key, range);
  head: ObjectStore["head"] = (key) => this.inner.head(key);
  list: ObjectStore["list"] = (prefix, options) => this.inner.list(prefix, options);
  delete: ObjectStore["delete"] = (key) => this.inner.delete(key);
}

async function flipByte(store: MemoryStore, key: string): Promise<void> {
  const body = (await store.get(key)).body;
  const middle = Math.floor(body.length / 2);
  body[middle] = body[middle] === 0x78 ? 0x79 : 0x78;
  await store.put(key, body);
}

function rejection(result: Awaited<ReturnType<typeof readSnapshot>>): { code: string; details: unknown } {
  if (result.ok) throw new Error("expected a rejection");
  return { code: result.error.code, details: result.error.details };
}

let store: MemoryStore;
beforeEach(() => {
  store = new MemoryStore();
});

describe("writing and reading a snapshot", () => {
  test("S5: a snapshot read back is the tablet, at appliedOffset = coveredOffset", async () => {
    const tablet = tabletOf(ROWS, 20_450);
    const ref = await writeSnapshot(store, BUCKET, tablet, 1_234_567, CUT);
    expect(ref).toMatchObject({ key: tableManifestKey(BUCKET, 1_234_567), coveredOffset: 20_450, coveredPosition: 1_234_567, rows: ROWS });
    const partSizes = (await store.list(tablePartsPrefix(BUCKET))).objects.map((o) => o.size);
    expect(partSizes.length).toBeGreaterThan(20);
    expect(ref.bytes).toBe(partSizes.reduce((a, b) => a + b, 0));
    const result = await readSnapshot(store, ref);
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    expect(result.value.appliedOffset).toBe(ref.coveredOffset);
    expect(result.value.rows).toEqual(tablet.rows);
  });

  test("S5: an empty tablet is a snapshot with no parts", async () => {
    const ref = await writeSnapshot(store, BUCKET, { rows: new Map(), appliedOffset: 3 }, 90);
    const result = await readSnapshot(store, ref);
    expect(result).toEqual({ ok: true, value: { rows: new Map(), appliedOffset: 3 } });
  });

  test("S9: no refs, nothing to restore", async () => {
    expect(await restoreLatest(store, [])).toBeNull();
  });

  test("snapshot keys stay out of streams/, where the stream GC reads every key as a stream object", async () => {
    await writeSnapshot(store, BUCKET, tabletOf(500, 500), 10, CUT);
    expect(store.keys().length).toBeGreaterThan(1);
    for (const key of store.keys()) expect(key.startsWith(tableSnapshotPrefix(BUCKET))).toBe(true);
  });

  test("S3: a second snapshot after one row changed puts only the changed parts and its manifest", async () => {
    const recorder = new PutRecorder(store);
    const first = tabletOf(ROWS, ROWS);
    await writeSnapshot(recorder, BUCKET, first, 1_000, CUT);
    const second = tabletOf(ROWS, ROWS + 1, new Map([[12_345, 1]]));
    recorder.puts.length = 0;
    const ref = await writeSnapshot(recorder, BUCKET, second, 1_100, CUT);
    const before = new Set(partIds(first));
    const fresh = partIds(second).filter((id) => !before.has(id));
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.length).toBeLessThanOrEqual(2);
    expect(recorder.puts.sort()).toEqual([...fresh.map((id) => tablePartKey(BUCKET, id)), ref.key].sort());
  });

  test("S4: a stored part of the wrong length is written over by the next snapshot", async () => {
    const tablet = tabletOf(2_000, 2_000);
    const ref = await writeSnapshot(store, BUCKET, tablet, 50, CUT);
    const partKey = tablePartKey(BUCKET, partIds(tablet)[1]!);
    await store.put(partKey, new TextEncoder().encode("truncated"));
    expect(rejection(await readSnapshot(store, ref)).code).toBe("conflict");
    await writeSnapshot(store, BUCKET, tablet, 50, CUT);
    expect((await readSnapshot(store, ref)).ok).toBe(true);
  });
});

describe("corrupt snapshots and the fallback", () => {
  let older: SnapshotRef;
  let newer: SnapshotRef;
  let olderTablet: Tablet;
  let onlyInNewer: string;
  let shared: string;

  beforeEach(async () => {
    olderTablet = tabletOf(FEW_ROWS, FEW_ROWS);
    const newerTablet = tabletOf(FEW_ROWS, FEW_ROWS + 1, new Map([[777, 1]]));
    older = await writeSnapshot(store, BUCKET, olderTablet, 5_000, CUT);
    newer = await writeSnapshot(store, BUCKET, newerTablet, 6_000, CUT);
    const olderIds = new Set(partIds(olderTablet));
    const newerIds = partIds(newerTablet);
    onlyInNewer = newerIds.find((id) => !olderIds.has(id))!;
    shared = newerIds.find((id) => olderIds.has(id))!;
  });

  test("S4: a part whose bytes were overwritten is refused with snapshot_corrupt and its partId", async () => {
    await flipByte(store, tablePartKey(BUCKET, onlyInNewer));
    expect(rejection(await readSnapshot(store, newer))).toEqual({
      code: "conflict",
      details: { reason: "snapshot_corrupt", partId: onlyInNewer },
    });
  });

  test("S4: a missing part is refused with snapshot_corrupt and its partId", async () => {
    await store.delete(tablePartKey(BUCKET, shared));
    expect(rejection(await readSnapshot(store, older))).toEqual({
      code: "conflict",
      details: { reason: "snapshot_corrupt", partId: shared },
    });
  });

  test("S4: a missing, malformed or mismatched manifest is refused as snapshot_corrupt", async () => {
    const corrupt = { code: "conflict", details: { reason: "snapshot_corrupt", manifest: newer.key } };
    await store.put(newer.key, new TextEncoder().encode('{"streamId":"s7","parts":"none"}'));
    expect(rejection(await readSnapshot(store, newer))).toEqual(corrupt);
    await store.put(newer.key, new TextEncoder().encode("{not json"));
    expect(rejection(await readSnapshot(store, newer))).toEqual(corrupt);
    // A sound manifest under another snapshot's key (its ref names other facts).
    await store.put(newer.key, (await store.get(older.key)).body);
    expect(rejection(await readSnapshot(store, newer))).toEqual(corrupt);
    await store.delete(newer.key);
    expect(rejection(await readSnapshot(store, newer))).toEqual(corrupt);
  });

  test("a store failure is thrown, not taken for a corrupt snapshot", async () => {
    store.inject({ op: "get", keyPrefix: tablePartsPrefix(BUCKET), kind: "fail", errorKind: "retryable" });
    await expect(restoreLatest(store, [older, newer])).rejects.toThrow(/injected failure/);
  });

  test("S9: restoreLatest takes the newest sound snapshot, in whatever order the refs come", async () => {
    const restored = await restoreLatest(store, [older, newer]);
    expect(restored?.ref).toEqual(newer);
    expect(restored?.tablet.appliedOffset).toBe(FEW_ROWS + 1);
  });

  test("S9: restoreLatest falls back to the older snapshot when the newer one has a corrupt part", async () => {
    await flipByte(store, tablePartKey(BUCKET, onlyInNewer));
    const restored = await restoreLatest(store, [newer, older]);
    expect(restored?.ref).toEqual(older);
    expect(restored?.tablet.rows).toEqual(olderTablet.rows);
    expect(restored?.tablet.appliedOffset).toBe(older.coveredOffset);
  });

  test("S9: restoreLatest gives null when both snapshots are corrupt (replay from zero)", async () => {
    await flipByte(store, tablePartKey(BUCKET, shared));
    expect(await restoreLatest(store, [newer, older])).toBeNull();
  });
});

describe("collection", () => {
  async function threeSnapshots(): Promise<{ dropped: SnapshotRef; kept: SnapshotRef[]; keptTablets: Tablet[] }> {
    const tablets = [0, 1, 2].map((n) => tabletOf(FEW_ROWS, FEW_ROWS + n, new Map([[1_000 * (n + 1), n + 1]])));
    const refs: SnapshotRef[] = [];
    for (const [n, tablet] of tablets.entries()) refs.push(await writeSnapshot(store, BUCKET, tablet, 1_000 * (n + 1), CUT));
    return { dropped: refs[0]!, kept: refs.slice(1), keptTablets: tablets.slice(1) };
  }

  test("S7: collectSnapshots keeps every part a kept snapshot references and deletes the rest", async () => {
    const { dropped, kept, keptTablets } = await threeSnapshots();
    const keptPartKeys = new Set(keptTablets.flatMap(partIds).map((id) => tablePartKey(BUCKET, id)));
    const keysBefore = store.keys();
    const deleted = await collectSnapshots(store, BUCKET, kept);
    const expected = keysBefore.filter((key) => key === dropped.key || (key.startsWith(tablePartsPrefix(BUCKET)) && !keptPartKeys.has(key)));
    expect(expected.length).toBeGreaterThan(1); // the dropped manifest and at least one part of its own
    expect(deleted).toBe(expected.length);
    expect(store.keys()).toEqual(keysBefore.filter((key) => !expected.includes(key)));
    for (const [i, ref] of kept.entries()) expect(await readSnapshot(store, ref)).toEqual({ ok: true, value: keptTablets[i] });
    expect(await collectSnapshots(store, BUCKET, kept)).toBe(0);
  });

  test("S7: a kept manifest that cannot be read stops part collection, so no part it may hold goes", async () => {
    const { dropped, kept } = await threeSnapshots();
    await store.delete(kept[0]!.key);
    const partsBefore = store.keys().filter((key) => key.startsWith(tablePartsPrefix(BUCKET)));
    expect(await collectSnapshots(store, BUCKET, kept)).toBe(1);
    expect(store.keys()).not.toContain(dropped.key);
    expect(store.keys().filter((key) => key.startsWith(tablePartsPrefix(BUCKET)))).toEqual(partsBefore);
  });

  test("S7: one call deletes a bounded number of objects, and repeated calls finish the job", async () => {
    const kept = [await writeSnapshot(store, BUCKET, tabletOf(2_000, 2_000), 10, CUT)];
    const orphans = 2_500;
    for (let i = 0; i < orphans; i++) await store.put(tablePartKey(BUCKET, `orphan-${i}`), new Uint8Array([1]));
    const counts: number[] = [];
    for (let round = 0; round < 10; round++) {
      const deleted = await collectSnapshots(store, BUCKET, kept);
      if (deleted === 0) break;
      counts.push(deleted);
    }
    expect(counts.length).toBeGreaterThan(1);
    expect(Math.max(...counts)).toBeLessThan(orphans);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(orphans);
    expect(await readSnapshot(store, kept[0]!)).toMatchObject({ ok: true });
  });

  test("a dropped table's bucket: deleteBucketSnapshots empties its prefix and leaves s70 beside s7 alone", async () => {
    await threeSnapshots();
    const other = await writeSnapshot(store, "s70", tabletOf(1_000, 1_000), 10, CUT);
    const otherKeys = store.keys().filter((key) => key.startsWith(tableSnapshotPrefix("s70")));
    const ours = store.keys().length - otherKeys.length;
    let total = 0;
    for (let round = 0; round < 10; round++) {
      const deleted = await deleteBucketSnapshots(store, BUCKET);
      if (deleted === 0) break;
      total += deleted;
    }
    expect(total).toBe(ours);
    expect(store.keys()).toEqual(otherKeys);
    expect((await readSnapshot(store, other)).ok).toBe(true);
  });
});
