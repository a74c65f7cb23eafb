// A tiered table's versions in the object store, as a file-based Iceberg catalog reads them
// (docs/tiering.md): `metadata/v<N>.metadata.json` created once with `If-None-Match: *` (the commit: of two
// writers of version N only one succeeds), and `metadata/version-hint.text`, a hint a reader starts from.
// The hint may lag (it is written after the commit, unconditionally), so the latest version is found by
// reading on from the hint until a version is missing.
import type { IcebergMetadata } from "../core/tiering/iceberg-metadata.ts";
import { putCreateOnce, readOrNull } from "../storage/create-once.ts";
import { tieredMetadataKey, tieredTablePrefix, tieredVersionHintKey } from "../storage/keys.ts";
import { listAll, type ObjectStore } from "../storage/object-store.ts";
import { retrying, type ResolvedRetry } from "../storage/retry-policy.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How many versions past the hint a reader follows before it lists the metadata folder instead. */
const MAX_VERSIONS_PAST_HINT = 64;

export interface TableVersion {
  readonly version: number;
  readonly metadata: IcebergMetadata;
}

/**
 * The latest committed version of the tiered table, or null when it has none. With `retry`, each read and
 * listing is tried again after retryable failures (a round's reads; the admin API answers at once).
 */
export async function readLatestVersion(store: ObjectStore, table: string, retry?: ResolvedRetry): Promise<TableVersion | null> {
  if (retry !== undefined) store = retryingReads(store, retry);
  const hint = await readOrNull(store, tieredVersionHintKey(table));
  const hinted = hint === null ? NaN : Number.parseInt(decoder.decode(hint), 10);
  let version = Number.isSafeInteger(hinted) && hinted > 0 ? hinted : await highestListedVersion(store, table);
  if (version === 0) return null;
  let metadata = await readVersion(store, table, version);
  if (metadata === null) {
    // A hint naming a version that is not there: trust the listing.
    version = await highestListedVersion(store, table);
    if (version === 0) return null;
    metadata = await readVersion(store, table, version);
    if (metadata === null) throw new Error(`tiered table ${table}: version ${version} listed but not readable`);
  }
  for (let step = 0; step < MAX_VERSIONS_PAST_HINT; step++) {
    const next = await readVersion(store, table, version + 1);
    if (next === null) return { version, metadata };
    version++;
    metadata = next;
  }
  const listed = await highestListedVersion(store, table);
  const latest = await readVersion(store, table, listed);
  if (latest === null) throw new Error(`tiered table ${table}: version ${listed} listed but not readable`);
  return { version: listed, metadata: latest };
}

async function readVersion(store: ObjectStore, table: string, version: number): Promise<IcebergMetadata | null> {
  const bytes = await readOrNull(store, tieredMetadataKey(table, version));
  return bytes === null ? null : (JSON.parse(decoder.decode(bytes)) as IcebergMetadata);
}

async function highestListedVersion(store: ObjectStore, table: string): Promise<number> {
  let highest = 0;
  for await (const object of listAll(store, `${tieredTablePrefix(table)}metadata/v`)) {
    const match = /\/v(\d+)\.metadata\.json$/.exec(object.key);
    if (match !== null) highest = Math.max(highest, Number(match[1]));
  }
  return highest;
}

/** The store with its reads and listings retried (writes go through as they are: putCreateOnce retries its own). */
function retryingReads(store: ObjectStore, retry: ResolvedRetry): ObjectStore {
  return {
    put: (key, body, options) => store.put(key, body, options),
    get: (key, range, options) => retrying(retry, () => store.get(key, range, options)),
    head: (key) => retrying(retry, () => store.head(key)),
    list: (prefix, options) => retrying(retry, () => store.list(prefix, options)),
    delete: (key) => store.delete(key),
  };
}

/** Creates version `version`; `exists` when another writer committed that version first. */
export async function createVersion(store: ObjectStore, table: string, version: number, metadata: IcebergMetadata, retry: ResolvedRetry): Promise<"created" | "exists"> {
  const outcome = await putCreateOnce(store, tieredMetadataKey(table, version), encoder.encode(JSON.stringify(metadata, null, 2)), retry);
  return outcome.kind;
}

/** Points readers at `version` (after its commit; a lost hint only makes readers read on). */
export async function writeVersionHint(store: ObjectStore, table: string, version: number): Promise<void> {
  await store.put(tieredVersionHintKey(table), encoder.encode(String(version)), { contentType: "text/plain" });
}
