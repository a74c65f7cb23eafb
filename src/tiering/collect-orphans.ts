// Deletes the files of tiering rounds that never committed (docs/tiering.md, table OF): listed under the
// table's data and metadata folders (at most MAX_LISTED_KEYS each), judged by the core, at most
// MAX_ORPHAN_DELETES per call. Run by the round that fenced the table for a newer epoch: orphans are the
// files of older epochs' rounds, so only an epoch change makes new ones (a fenced writer that still
// writes files after the fence leaves them for the next change).
import type { IcebergMetadata } from "../core/tiering/iceberg-metadata.ts";
import { orphanedFiles } from "../core/tiering/orphan-files.ts";
import { tieredTablePrefix } from "../storage/keys.ts";
import { listAll, type ObjectStore } from "../storage/object-store.ts";

/** Deletes per call at most: a listing page's worth. */
const MAX_ORPHAN_DELETES = 1_000;
/** Keys listed per folder per call at most: the rest waits for the next collection. */
const MAX_LISTED_KEYS = 10_000;

/** The number of orphaned files deleted. */
export async function collectOrphans(store: ObjectStore, table: string, metadata: IcebergMetadata, latestEpoch: number): Promise<number> {
  const committed = new Set(metadata.snapshots.map((snapshot) => snapshot["snapshot-id"]));
  const prefix = tieredTablePrefix(table);
  let deleted = 0;
  for (const folder of ["data/", "metadata/"]) {
    const keys: string[] = [];
    for await (const object of listAll(store, prefix + folder)) {
      keys.push(object.key);
      if (keys.length >= MAX_LISTED_KEYS) break;
    }
    for (const key of orphanedFiles(keys, committed, latestEpoch)) {
      if (deleted >= MAX_ORPHAN_DELETES) return deleted;
      await store.delete(key);
      deleted++;
    }
  }
  return deleted;
}
