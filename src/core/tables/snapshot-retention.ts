// Which snapshots to keep, which parts to collect, and which snapshot to restore (docs/tables.md,
// rows S6-S9). Pure decisions over manifests; the shell lists and deletes objects.
import type { SnapshotManifest } from "./snapshot.ts";

const KEPT_SNAPSHOTS = 2;

export interface Retention {
  /** The latest KEPT_SNAPSHOTS by covered offset, newest first. */
  readonly kept: readonly SnapshotManifest[];
  /** Parts of dropped snapshots that no kept snapshot references. */
  readonly collectablePartIds: readonly string[];
  /** The changelog must be kept from here on, so the older kept snapshot can still be replayed (S8). */
  readonly changelogRetainFrom: number;
}

/** S6-S8 */
export function retainSnapshots(manifests: readonly SnapshotManifest[]): Retention {
  const newestFirst = [...manifests].sort((a, b) => b.coveredOffset - a.coveredOffset);
  const kept = newestFirst.slice(0, KEPT_SNAPSHOTS);
  const keptIds = new Set(kept.flatMap((m) => m.parts.map((p) => p.id)));
  const dropped = new Set(newestFirst.slice(KEPT_SNAPSHOTS).flatMap((m) => m.parts.map((p) => p.id)));
  const oldestKept = kept[kept.length - 1];
  return {
    kept,
    collectablePartIds: [...dropped].filter((id) => !keptIds.has(id)).sort(),
    changelogRetainFrom: oldestKept === undefined ? 0 : oldestKept.coveredOffset,
  };
}

/** S9: the newest kept snapshot whose parts are all sound; null means replay the changelog from zero. */
export function chooseRestore(manifests: readonly SnapshotManifest[], partOk: (partId: string) => boolean): SnapshotManifest | null {
  return retainSnapshots(manifests).kept.find((m) => m.parts.every((p) => partOk(p.id))) ?? null;
}
