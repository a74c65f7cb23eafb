// Rows S1-S9 of docs/tables.md: snapshot parts, restore plus replay, retention and the fallback.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { KeyedRecord } from "../../../src/core/tables/changelog.ts";
import { crc32OfText, utf8Length } from "../../../src/core/tables/checksum.ts";
import { chooseRestore, retainSnapshots } from "../../../src/core/tables/snapshot-retention.ts";
import { partIsSound, restoreSnapshot, takeSnapshot, type SnapshotCut, type SnapshotManifest } from "../../../src/core/tables/snapshot.ts";
import { acknowledgeBatch, applyRecords, failBatch } from "../../../src/core/tables/tablet-apply.ts";
import { writeStep, type WriteOp } from "../../../src/core/tables/tablet-write.ts";
import { EMPTY_TABLET, openBucket, type BucketState, type Tablet } from "../../../src/core/tables/tablet.ts";
import { propertyRuns } from "../../support/property-runs.ts";

function unwrap<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.error)}`);
  return result.value;
}

const SMALL_CUT: SnapshotCut = { maxPartBytes: 200, boundaryModulus: 4 };

function tabletOf(count: number, value: (i: number) => number = (i) => i): Tablet {
  const rows = new Map(Array.from({ length: count }, (_, i) => [`k${String(i).padStart(4, "0")}`, { v: value(i) }] as const));
  return { rows, appliedOffset: count };
}

function textsOf(parts: readonly { id: string; text: string }[]): Map<string, string> {
  return new Map(parts.map((p) => [p.id, p.text]));
}

describe("snapshot parts", () => {
  test("checksum: CRC-32 of the UTF-8 bytes matches the standard check value", () => {
    expect(crc32OfText("123456789")).toEqual({ crc: 0xcbf43926, bytes: 9 });
    // The same bytes TextEncoder gives, lone surrogates as U+FFFD.
    for (const text of ["é€😀", "a\ud800b", "\udc00", "x\ud83d"]) {
      const bytes = new TextEncoder().encode(text);
      expect(utf8Length(text)).toBe(bytes.length);
      let crc = 0xffffffff;
      for (const byte of bytes) {
        crc ^= byte;
        for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
      }
      expect(crc32OfText(text)).toEqual({ crc: (crc ^ 0xffffffff) >>> 0, bytes: bytes.length });
    }
  });
  test("S1: parts hold the rows in key order and cover the applied offset", () => {
    const tablet = tabletOf(50);
    const { manifest, parts } = takeSnapshot(tablet, SMALL_CUT);
    expect(manifest.coveredOffset).toBe(50);
    const keys = parts.flatMap((p) => p.text.split("\n").slice(0, -1).map((line) => (JSON.parse(line) as [string])[0]));
    expect(keys).toEqual([...tablet.rows.keys()].sort());
  });
  test("S2: no part exceeds maxPartBytes unless it holds one row", () => {
    const { parts } = takeSnapshot(tabletOf(300), SMALL_CUT);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.bytes <= SMALL_CUT.maxPartBytes || part.text.split("\n").length === 2).toBe(true);
  });
  test("S3: a snapshot after one row changed shares every part outside that row's range", () => {
    const cut = { maxPartBytes: 1_000_000, boundaryModulus: 8 };
    const before = takeSnapshot(tabletOf(2_000), cut).manifest.parts.map((p) => p.id);
    const after = takeSnapshot(tabletOf(2_000, (i) => (i === 1_000 ? -1 : i)), cut).manifest.parts.map((p) => p.id);
    const shared = after.filter((id) => before.includes(id));
    expect(before.length).toBeGreaterThan(50);
    expect(shared.length).toBe(after.length - 1);
  });
  test("S4: a part that fails its checksum refuses the restore", () => {
    const { manifest, parts } = takeSnapshot(tabletOf(40), SMALL_CUT);
    const texts = textsOf(parts);
    const victim = parts[1]!;
    const flipped = victim.text.replace("\"v\":", "\"w\":");
    expect(partIsSound(victim, flipped)).toBe(false);
    texts.set(victim.id, flipped);
    expect(restoreSnapshot(manifest, texts)).toMatchObject({ ok: false, error: { code: "conflict", details: { reason: "snapshot_corrupt", partId: victim.id } } });
    texts.delete(victim.id);
    expect(restoreSnapshot(manifest, texts).ok).toBe(false);
  });
  test("S5: restore gives back the rows and the covered offset", () => {
    const tablet = tabletOf(120);
    const { manifest, parts } = takeSnapshot(tablet, SMALL_CUT);
    expect(unwrap(restoreSnapshot(manifest, textsOf(parts)))).toEqual(tablet);
  });
});

type Action =
  | { kind: "write"; ops: WriteOp[] }
  | { kind: "ack" }
  | { kind: "fail" }
  | { kind: "snapshot" };

const keyArb = fc.constantFrom("a", "b", "c", "d", "e", "f");
const opArb: fc.Arbitrary<WriteOp> = fc.oneof(
  fc.record({ key: keyArb, v: fc.integer({ min: 0, max: 3 }) }).map(({ key, v }) => ({ key, upsert: { id: key, v } })),
  keyArb.map((key) => ({ delete: key })),
);
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.array(opArb, { maxLength: 6 }).map((ops) => ({ kind: "write" as const, ops })) },
  { weight: 3, arbitrary: fc.constant({ kind: "ack" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "fail" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "snapshot" as const }) },
);

/** Runs the actions; `log` is the bucket's stream: only acknowledged records, at their offsets. */
function run(actions: readonly Action[]): { state: BucketState; log: KeyedRecord[]; snapshots: ReturnType<typeof takeSnapshot>[] } {
  let state = openBucket(EMPTY_TABLET);
  const log: KeyedRecord[] = [];
  const snapshots: ReturnType<typeof takeSnapshot>[] = [];
  const ackHead = (): void => {
    const head = state.pending[0];
    if (head === undefined) return;
    state = unwrap(acknowledgeBatch(state, head.batchId, log.length));
    log.push(...head.records);
  };
  for (const action of actions) {
    if (action.kind === "write") state = unwrap(writeStep(state, "primary-key", action.ops)).state;
    else if (action.kind === "ack") ackHead();
    else if (action.kind === "fail" && state.pending[0] !== undefined) state = failBatch(state, state.pending[0].batchId).state;
    else if (action.kind === "snapshot") snapshots.push(takeSnapshot(state.tablet, SMALL_CUT));
  }
  while (state.pending.length > 0) ackHead();
  return { state, log, snapshots };
}

describe("restore plus replay", () => {
  test("S-P1 (property): a snapshot taken while writes go on, restored and replayed from its offset, equals a full replay", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 60 }), (actions) => {
        const { state, log, snapshots } = run(actions);
        const full = unwrap(applyRecords(EMPTY_TABLET, 0, log));
        expect(full).toEqual(state.tablet);
        for (const { manifest, parts } of snapshots) {
          const restored = unwrap(restoreSnapshot(manifest, textsOf(parts)));
          const fromCovered = unwrap(applyRecords(restored, manifest.coveredOffset, log.slice(manifest.coveredOffset)));
          expect(fromCovered).toEqual(full);
          // Replaying the whole stream over the restore skips what the snapshot already covers.
          expect(unwrap(applyRecords(restored, 0, log))).toEqual(full);
        }
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});

function manifest(coveredOffset: number, ids: string[]): SnapshotManifest {
  return { coveredOffset, parts: ids.map((id) => ({ id, checksum: 0, bytes: 0 })) };
}

describe("retention and fallback", () => {
  const snapshots = [manifest(10, ["p1", "p2"]), manifest(30, ["p2", "p4"]), manifest(20, ["p1", "p3"])];
  test("S6: the two latest snapshots by covered offset are kept", () => {
    expect(retainSnapshots(snapshots).kept.map((m) => m.coveredOffset)).toEqual([30, 20]);
  });
  test("S7: a part is collected only when no kept snapshot references it", () => {
    expect(retainSnapshots(snapshots).collectablePartIds).toEqual([]);
    // Kept: 40 [p4 p5] and 30 [p2 p4]. Dropped: 20 [p1 p3] and 10 [p1 p2]; p2 is shared by a kept one.
    expect(retainSnapshots([...snapshots, manifest(40, ["p4", "p5"])]).collectablePartIds).toEqual(["p1", "p3"]);
  });
  test("S8: the changelog is kept from the older kept snapshot's offset", () => {
    expect(retainSnapshots(snapshots).changelogRetainFrom).toBe(20);
    expect(retainSnapshots([]).changelogRetainFrom).toBe(0);
  });
  test("S9: a corrupt part falls back to the previous kept snapshot, then to a replay from zero", () => {
    expect(chooseRestore(snapshots, () => true)?.coveredOffset).toBe(30);
    expect(chooseRestore(snapshots, (id) => id !== "p4")?.coveredOffset).toBe(20);
    expect(chooseRestore(snapshots, (id) => id !== "p1" && id !== "p4")).toBeNull();
  });
});
