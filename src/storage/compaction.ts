// The compaction building block: one stream's acknowledged WAL records become one immutable stream object,
// and the manifest takes it in one compare-and-swap (object added, covered WAL ranges dropped, end offset
// raised). When to compact and how the node checkpoint advances across streams belong to the node (docs/node.md).
//
// Records must continue the stream exactly where its last stream object ends (or at its start offset):
// a gap or an overlap is a `NonContiguousRecordsError`, never merged. Re-running a compaction that already
// landed is harmless: the object's key is already in the manifest, so the update changes nothing new.

import { isEof, recordEnd, type WalRecord } from "./record-codec.ts";
import type { ObjectStore } from "./object-store.ts";
import { streamObjectKey } from "./keys.ts";
import {
  ManifestNotFoundError,
  StaleEpochError,
  readManifest,
  updateManifest,
  type Manifest,
  type ManifestSnapshot,
  type StreamObjectRef,
} from "./manifest.ts";
import type { ManifestWriteOptions } from "./document-cas.ts";
import { NonContiguousRecordsError, checkContiguous, writeStreamObject } from "./stream-object.ts";

/** Every record of the stream in `nodeId`'s WAL below `toSeq` is compacted once this compaction lands. */
interface WalCoverage {
  nodeId: string;
  toSeq: number;
}

export interface CompactionInput extends ManifestWriteOptions {
  streamId: string;
  /** The owner's stream epoch: the manifest must be at it, and no record may be above it. */
  writerEpoch: number;
  /** Offset order, contiguous, continuing from the last stream object. */
  records: readonly WalRecord[];
  /** WAL ranges this compaction empties of the stream's records (dropped or trimmed in the manifest). */
  walCovered?: readonly WalCoverage[];
  /** The manifest as the caller just wrote it (opened it): not read again. */
  known?: ManifestSnapshot;
}

export interface CompactionResult {
  object: StreamObjectRef;
  snapshot: ManifestSnapshot;
}

/** Checks the records on their own: one stream, contiguous, no epoch above the writer's. */
function checkCompactable(streamId: string, writerEpoch: number, records: readonly WalRecord[]): void {
  checkContiguous(records);
  for (const record of records) {
    if (record.streamId !== streamId) throw new NonContiguousRecordsError(`record of ${record.streamId} in a compaction of ${streamId}`);
    if (record.streamEpoch > writerEpoch) {
      throw new NonContiguousRecordsError(`record at offset ${record.firstOffset} has epoch ${record.streamEpoch} above the writer's ${writerEpoch}`);
    }
  }
}

/**
 * The manifest after the compaction into `object` (pure; idempotent: applying it twice equals once).
 * Throws `NonContiguousRecordsError` if the object does not continue the manifest's objects exactly.
 */
function applyCompaction(
  manifest: Manifest,
  object: StreamObjectRef,
  endsStream: boolean,
  walCovered: readonly WalCoverage[] = [],
): Manifest {
  const already = manifest.objects.some((o) => o.key === object.key);
  if (!already) {
    const expected = manifest.objects.at(-1)?.endOffset ?? manifest.startOffset;
    if (object.firstOffset > expected) {
      throw new NonContiguousRecordsError(`gap in ${manifest.streamId}: stream objects end at ${expected}, compaction starts at ${object.firstOffset}`);
    }
    if (object.firstOffset < expected) {
      throw new NonContiguousRecordsError(`overlap in ${manifest.streamId}: stream objects end at ${expected}, compaction starts at ${object.firstOffset}`);
    }
  }
  const walRanges = manifest.walRanges.flatMap((range) => {
    const cover = walCovered.find((c) => c.nodeId === range.nodeId);
    if (cover === undefined || cover.toSeq <= range.fromSeq) return [range];
    return cover.toSeq >= range.toSeq ? [] : [{ ...range, fromSeq: cover.toSeq }];
  });
  return {
    ...manifest,
    objects: already ? manifest.objects : [...manifest.objects, object],
    walRanges,
    endOffset: Math.max(manifest.endOffset, object.endOffset),
    eof: manifest.eof || endsStream,
  };
}

export async function compactStream(store: ObjectStore, input: CompactionInput): Promise<CompactionResult> {
  const { streamId, writerEpoch, records } = input;
  checkCompactable(streamId, writerEpoch, records);
  const last = records.at(-1)!;
  const endsStream = isEof(last);
  const key = streamObjectKey(streamId, records[0]!.firstOffset, recordEnd(last));

  // Check against the manifest before writing, so a stale owner or a gap leaves no orphan object.
  const known = input.known ?? (await readManifest(store, streamId));
  if (known === null) throw new ManifestNotFoundError(`no manifest for stream ${streamId}`);
  if (known.manifest.epoch > writerEpoch) {
    throw new StaleEpochError(`stream ${streamId} is at epoch ${known.manifest.epoch}, writer at ${writerEpoch}`, known.manifest.epoch);
  }
  const planned = { key, firstOffset: records[0]!.firstOffset, endOffset: recordEnd(last), bytes: 0 };
  applyCompaction(known.manifest, planned, endsStream, input.walCovered);

  const object = await writeStreamObject(store, records, { retry: input.retry });
  const snapshot = await updateManifest(
    store,
    streamId,
    writerEpoch,
    (manifest) => applyCompaction(manifest, object, endsStream, input.walCovered),
    { known, retry: input.retry, maxCasAttempts: input.maxCasAttempts },
  );
  return { object, snapshot };
}
