// The coordinator's collection loop (docs/architecture.md, "Lifecycle"): the objects (stream objects and
// manifest, and a table bucket's snapshots) of streams the log no longer has are deleted, one page of `streams/` per tick, so no round is unbounded. The
// decision is the MetaLog's (table GC, fenced by the coordinator epoch like the tick); the chain of a
// deleted fork source's own sources is only in manifests' sessions, so it is followed here, and kept.
import type { Coordinator } from "../../core/meta/commands.ts";
import { forkSourceOf } from "../../core/meta/stream-table.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import { unescapeId } from "../../storage/keys.ts";
import { readManifest } from "../../storage/manifest.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { deleteBucketSnapshots } from "../tables/snapshot-store.ts";

/** Keys listed per round (one S3 list page). */
const PAGE_KEYS = 1_000;
/** Deletes in flight at once. */
const DELETE_CONCURRENCY = 8;
/** How far a chain of deleted fork sources is followed. */
const MAX_SOURCE_DEPTH = 64;

export interface CollectionRound {
  /** Where the next round lists from (undefined: the next round starts over). */
  readonly cursor: string | undefined;
  readonly streamsCollected: number;
  readonly objectsDeleted: number;
}

/** One page: the stream ids under `streams/` after `cursor`, the MetaLog's decision, the deletes. */
export async function collectRound(
  store: ObjectStore,
  meta: Pick<MetaLogClient, "collectable">,
  coordinator: Coordinator,
  cursor: string | undefined,
): Promise<CollectionRound | { readonly fenced: true }> {
  const page = await store.list("streams/", { maxKeys: PAGE_KEYS, ...(cursor === undefined ? {} : { startAfter: cursor }) });
  const keysById = new Map<string, string[]>();
  for (const object of page.objects) {
    const escaped = object.key.slice("streams/".length).split("/")[0] ?? "";
    let id: string;
    try {
      id = unescapeId(escaped);
    } catch {
      continue; // not a key mink wrote
    }
    keysById.set(id, [...(keysById.get(id) ?? []), object.key]);
  }
  const next = page.nextContinuationToken === undefined ? undefined : page.objects.at(-1)?.key;
  if (keysById.size === 0) return { cursor: next, streamsCollected: 0, objectsDeleted: 0 };
  const answer = await meta.collectable(coordinator, [...keysById.keys()]);
  if (!answer.ok) return { fenced: true };
  const kept = await sourcesOfKept(store, answer.keptSources);
  if (kept === null) return { cursor: next, streamsCollected: 0, objectsDeleted: 0 };
  const doomed = answer.collect.filter((id) => !kept.has(id)).flatMap((id) => keysById.get(id) ?? []);
  for (let i = 0; i < doomed.length; i += DELETE_CONCURRENCY) {
    await Promise.all(doomed.slice(i, i + DELETE_CONCURRENCY).map((key) => store.delete(key)));
  }
  const collected = answer.collect.filter((id) => !kept.has(id));
  // A dropped table's bucket streams are streams: their snapshots (under tables/<id>/) go with their objects.
  let snapshotObjects = 0;
  for (const id of collected) snapshotObjects += await deleteBucketSnapshots(store, id);
  return { cursor: next, streamsCollected: collected.length, objectsDeleted: doomed.length + snapshotObjects };
}

/**
 * The deleted sources of the kept deleted sources, up their chain (from each one's manifest session). Null
 * when a kept source's manifest has no session to tell: nothing is collected this round rather than a guess.
 */
async function sourcesOfKept(store: ObjectStore, kept: readonly string[]): Promise<Set<string> | null> {
  const seen = new Set<string>();
  let frontier = [...kept];
  for (let depth = 0; depth < MAX_SOURCE_DEPTH && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      const manifest = await readManifest(store, id);
      const session = manifest?.manifest.session;
      if (session === undefined) return null;
      const source = forkSourceOf(session["config"]);
      if (source !== null && !seen.has(source)) {
        seen.add(source);
        next.push(source);
      }
    }
    frontier = next;
  }
  return seen;
}
