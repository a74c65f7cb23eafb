// Deletes the files of tiering rounds that never committed (docs/tiering.md, table OF): listed under the
// table's data and metadata folders, judged by the core, at most MAX_ORPHAN_DELETES per call (the next
// round goes on). Run by each round once its epoch wrote the latest version.
import type { IcebergMetadata } from "../core/tiering/iceberg-metadata.ts";
import { orphanedFiles } from "../core/tiering/orphan-files.ts";
import { tieredTablePrefix } from "../storage/keys.ts";
import { listAll, type ObjectStore } from "../storage/object-store.ts";

/** Deletes per call at most: a listing page's worth. */
const MAX_ORPHAN_DELETES = 1_000;

/** The number of orphaned files deleted. */
export async function collectOrphans(store: ObjectStore, table: string, metadata: IcebergMetadata, latestEpoch: number): Promise<number> {
  const committed = new Set(metadata.snapshots.map((snapshot) => snapshot["snapshot-id"]));
  const prefix = tieredTablePrefix(table);
  let deleted = 0;
  for (const folder of ["data/", "metadata/"]) {
    const keys: string[] = [];
    for await (const object of listAll(store, prefix + folder)) keys.push(object.key);
    for (const key of orphanedFiles(keys, committed, latestEpoch)) {
      if (deleted >= MAX_ORPHAN_DELETES) return deleted;
      await store.delete(key);
      deleted++;
    }
  }
  return deleted;
}
