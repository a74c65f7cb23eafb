// The I/O shell of table S (docs/tables.md, "Snapshots in the object store"): a bucket's tablet is written as
// content-addressed parts plus a JSON manifest (snapshot-manifest.ts), read back verified, and restored
// newest-sound-first; what no kept snapshot references is collected (snapshot-collect.ts). Cutting, checks
// and restore are the pure core's (snapshot.ts); every key comes from keys.ts.
import { rejectResult, type TableResult } from "../../core/tables/changelog.ts";
import type { Row } from "../../core/tables/changelog.ts";
import { cutParts, partRows, restoreSnapshot, type PartRef, type SnapshotCut } from "../../core/tables/snapshot.ts";
import type { BucketTablet, TabletMark } from "../../ports/tablet-storage.ts";
import type { Tablet } from "../../core/tables/tablet.ts";
import { tableManifestKey, tablePartKey } from "../../storage/keys.ts";
import { isStoreError, type ObjectStore } from "../../storage/object-store.ts";
import { matchesRef, readManifest, type SnapshotRef, type StoredManifest } from "./snapshot-manifest.ts";
import { forEachBounded, readText } from "./snapshot-io.ts";

export type { SnapshotRef } from "./snapshot-manifest.ts";
export { collectSnapshots, deleteBucketSnapshots } from "./snapshot-collect.ts";

/** Parts a streaming snapshot holds in memory at once (each at most 4 MiB) while they are written. */
const PARTS_AHEAD = 4;

const encoder = new TextEncoder();

/** Writes the parts the store lacks, then the manifest (S3: an unchanged key range is a part already there). */
export async function writeSnapshot(
  store: ObjectStore,
  streamId: string,
  tablet: Tablet,
  coveredPosition: number,
  cut?: SnapshotCut,
): Promise<SnapshotRef> {
  const keys = [...tablet.rows.keys()].sort();
  const entries = keys.map((key) => [key, tablet.rows.get(key)!] as const);
  return writeSnapshotOf(store, streamId, entries, { appliedOffset: tablet.appliedOffset, appliedPosition: coveredPosition }, cut);
}

/**
 * The same from rows read in key order while they are written, a part at a time (memory: PARTS_AHEAD parts).
 * Rows may change while they are read (a fuzzy snapshot): every changelog record is a whole image and
 * applying it is idempotent, so restoring such a snapshot and replaying from `mark`, read before the first
 * row, gives the tablet exactly (docs/tables.md, "Snapshots").
 */
export async function writeSnapshotOf(
  store: ObjectStore,
  streamId: string,
  entries: Iterable<readonly [string, Row]>,
  mark: TabletMark,
  cut?: SnapshotCut,
): Promise<SnapshotRef> {
  const refs: PartRef[] = [];
  let rows = 0;
  let batch: Promise<void>[] = [];
  for (const part of cut === undefined ? cutParts(entries) : cutParts(entries, cut)) {
    refs.push({ id: part.id, checksum: part.checksum, bytes: part.bytes });
    rows += part.rows;
    batch.push(storePart(store, tablePartKey(streamId, part.id), encoder.encode(part.text)));
    if (batch.length >= PARTS_AHEAD) {
      await Promise.all(batch);
      batch = [];
    }
  }
  await Promise.all(batch);
  const key = tableManifestKey(streamId, mark.appliedPosition);
  const stored: StoredManifest = { streamId, coveredPosition: mark.appliedPosition, rows, coveredOffset: mark.appliedOffset, parts: refs };
  // Unconditional: a manifest at the same position describes the same tablet (the stream decides its rows).
  await store.put(key, encoder.encode(JSON.stringify(stored)), { contentType: "application/json" });
  const bytes = refs.reduce((sum, part) => sum + part.bytes, 0);
  return { key, coveredOffset: mark.appliedOffset, coveredPosition: mark.appliedPosition, rows, bytes };
}

/**
 * S5/S9 into a stored tablet, a part at a time: the newest ref whose parts are all sound replaces the
 * tablet, its mark set last (a restore cut short leaves the mark at zero: the next load restores again).
 * Null when none is sound: the tablet is then empty at mark zero (replay from the start).
 */
export async function restoreInto(store: ObjectStore, refs: readonly SnapshotRef[], tablet: BucketTablet): Promise<SnapshotRef | null> {
  const zero: TabletMark = { appliedOffset: 0, appliedPosition: 0 };
  for (const ref of [...refs].sort((a, b) => b.coveredPosition - a.coveredPosition)) {
    tablet.replace([], zero);
    const manifest = await readManifest(store, ref.key);
    if (manifest === null || !matchesRef(manifest, ref)) continue;
    let after: string | null = null;
    let sound = true;
    // The next part is read while this one is checked and applied: the store's latency overlaps the work.
    const read = (index: number) => settled(readText(store, tablePartKey(manifest.streamId, manifest.parts[index]!.id)));
    let next = manifest.parts.length > 0 ? read(0) : null;
    for (const [index, part] of manifest.parts.entries()) {
      const text = unwrap(await next!);
      next = index + 1 < manifest.parts.length ? read(index + 1) : null;
      const rows = partRows(part, text ?? undefined, after);
      if (!rows.ok) {
        sound = false;
        break;
      }
      tablet.apply({ set: rows.value, remove: [] }, zero);
      after = rows.value.at(-1)?.[0] ?? after;
    }
    if (!sound || tablet.count() !== manifest.rows) continue;
    tablet.apply({ set: [], remove: [] }, { appliedOffset: ref.coveredOffset, appliedPosition: ref.coveredPosition });
    return ref;
  }
  tablet.replace([], zero);
  return null;
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** The promise's outcome as a value: a read started ahead and never awaited (the restore stopped) rejects no one. */
function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
}

function unwrap<T>(outcome: Settled<T>): T {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}

/** A part already stored with its length is reused; one of another length (damaged) is written over. */
async function storePart(store: ObjectStore, key: string, body: Uint8Array): Promise<void> {
  const existing = await store.head(key);
  if (existing !== null && existing.size === body.byteLength) return;
  try {
    await store.put(key, body, existing === null ? { condition: { ifNoneMatch: "*" } } : {});
  } catch (error) {
    // Another writer (or our own resent request) stored it in between: same id, same content.
    if (!isStoreError(error, "precondition_failed")) throw error;
  }
}

/**
 * S4-S5 over the store: the tablet of one snapshot, every part checked by the core. A missing or corrupt
 * part, or a missing or malformed manifest, is `conflict {reason: "snapshot_corrupt"}` (with `partId`, or
 * `manifest` for the manifest). Any other store failure throws: it says nothing about the snapshot.
 */
export async function readSnapshot(store: ObjectStore, ref: SnapshotRef): Promise<TableResult<Tablet>> {
  const manifest = await readManifest(store, ref.key);
  if (manifest === null || !matchesRef(manifest, ref)) {
    return rejectResult("conflict", "a snapshot manifest is missing, malformed or not the one its ref names", {
      reason: "snapshot_corrupt",
      manifest: ref.key,
    });
  }
  const texts = await readParts(store, manifest);
  const restored = restoreSnapshot(manifest, texts);
  if (restored.ok && restored.value.rows.size !== manifest.rows) {
    return rejectResult("conflict", "a snapshot holds another row count than its manifest records", {
      reason: "snapshot_corrupt",
      manifest: ref.key,
    });
  }
  return restored;
}


/** The texts of the manifest's parts; a missing or non-UTF-8 part is left out (the core then refuses it), and
 * once one is, the rest are not fetched. */
async function readParts(store: ObjectStore, manifest: StoredManifest): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const ids = [...new Set(manifest.parts.map((part) => part.id))];
  let lacking = false;
  await forEachBounded(ids, async (id) => {
    if (lacking) return;
    const text = await readText(store, tablePartKey(manifest.streamId, id));
    if (text === null) lacking = true;
    else texts.set(id, text);
  });
  return texts;
}

/** S9 in the shell: the newest ref (by covered position) whose snapshot is sound; null: replay from zero. */
export async function restoreLatest(
  store: ObjectStore,
  refs: readonly SnapshotRef[],
): Promise<{ ref: SnapshotRef; tablet: Tablet } | null> {
  for (const ref of [...refs].sort((a, b) => b.coveredPosition - a.coveredPosition)) {
    const result = await readSnapshot(store, ref);
    if (result.ok) return { ref, tablet: result.value };
  }
  return null;
}

