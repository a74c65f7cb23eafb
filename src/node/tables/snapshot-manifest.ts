// A snapshot's manifest as stored in the object store (table S, docs/tables.md): the core's manifest plus
// what ties it to its bucket and its ref, read back and checked field by field, and against the key it was
// found at and the ref that names it. A manifest that fails any check is treated as missing.
import type { PartRef, SnapshotManifest } from "../../core/tables/snapshot.ts";
import { tableManifestKey } from "../../storage/keys.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { readText } from "./snapshot-io.ts";

/** A part id is a key segment as it stands (the core's ids are hex and digits): no escaping, bounded length. */
const PART_ID = /^[A-Za-z0-9_-]{1,100}$/;
const CHECKSUM_MAX = 0xffff_ffff;

export interface SnapshotRef {
  /** The manifest's object key. */
  readonly key: string;
  /** Tablet records covered (the core's offset unit): replay applies records from this offset on. */
  readonly coveredOffset: number;
  /** The bucket stream's byte position replay resumes at. */
  readonly coveredPosition: number;
  readonly rows: number;
  /** Sum of part bytes. */
  readonly bytes: number;
}

/** The manifest as stored: the core's manifest plus what ties it to its bucket and its ref. */
export interface StoredManifest extends SnapshotManifest {
  readonly streamId: string;
  readonly coveredPosition: number;
  readonly rows: number;
}

export function matchesRef(manifest: StoredManifest, ref: SnapshotRef): boolean {
  return (
    manifest.coveredPosition === ref.coveredPosition &&
    manifest.coveredOffset === ref.coveredOffset &&
    manifest.rows === ref.rows
  );
}

/** The manifest at `key`; null when it is missing, malformed, or names a bucket and position of another key. */
export async function readManifest(store: ObjectStore, key: string): Promise<StoredManifest | null> {
  const text = await readText(store, key);
  if (text === null) return null;
  try {
    const manifest = parseManifest(JSON.parse(text));
    // Throws on a stream id keys.ts refuses, which is malformed too.
    return manifest !== null && tableManifestKey(manifest.streamId, manifest.coveredPosition) === key ? manifest : null;
  } catch {
    return null;
  }
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function parsePartRef(value: unknown): PartRef | null {
  if (typeof value !== "object" || value === null) return null;
  const { id, checksum, bytes } = value as Record<string, unknown>;
  if (typeof id !== "string" || !PART_ID.test(id) || !isCount(checksum) || checksum > CHECKSUM_MAX || !isCount(bytes)) return null;
  return { id, checksum, bytes };
}

/** The manifest's shape, checked field by field (unknown fields are ignored); null when it is malformed. */
function parseManifest(value: unknown): StoredManifest | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { streamId, coveredOffset, coveredPosition, rows, parts } = value as Record<string, unknown>;
  if (typeof streamId !== "string" || !isCount(coveredOffset) || !isCount(coveredPosition) || !isCount(rows)) return null;
  if (!Array.isArray(parts)) return null;
  const partRefs: PartRef[] = [];
  for (const part of parts) {
    const ref = parsePartRef(part);
    if (ref === null) return null;
    partRefs.push(ref);
  }
  return { streamId, coveredOffset, coveredPosition, rows, parts: partRefs };
}
