// Loading a bucket at its leader (docs/tables.md, "Tablets on the leader"): the stored tablet, the newest
// sound snapshot when it covers more than the tablet's mark, then the bucket's stream replayed from the mark
// to the tail, a page at a time. What a tablet holds stays valid across epochs: a stream only grows and its
// positions never change.
import { formatOffset } from "../../core/protocol/offsets.ts";
import { decodeJsonMessages } from "../../core/protocol/json-mode.ts";
import { parseChangeRecord, type KeyedRecord, type Row } from "../../core/tables/changelog.ts";
import type { TableDefinition } from "../../core/tables/definition.ts";
import { encodeKey } from "../../core/tables/key-encoding.ts";
import { primaryKeyOf } from "../../core/tables/rows.ts";
import { openBucket } from "../../core/tables/tablet.ts";
import { netChanges } from "../../core/tables/tablet-apply.ts";
import type { TableKind } from "../../core/tables/tablet-write.ts";
import { readPage } from "../paths/read.ts";
import { unavailable } from "../state/replies.ts";
import type { StreamState } from "../state/stream-registry.ts";
import type { BucketIdentity, LoadedBucket, TableContext } from "./buckets.ts";
import type { BucketTablet } from "../../ports/tablet-storage.ts";
import { TabletRowsView } from "./tablet-rows-view.ts";
import { restoreInto } from "./snapshot-store.ts";
import type { Result } from "../../core/result.ts";

const decoder = new TextDecoder();

/** The key a changelog row of this table is stored under (null in a log table). */
function keyOfRow(definition: TableDefinition, row: Row): string | null {
  const tuple = primaryKeyOf(definition, row);
  return tuple === null ? null : encodeKey(tuple);
}

/**
 * Loads the bucket of `stream` (opened here) at its epoch: the stored tablet, then the stream replayed
 * from the tablet's mark to the tail. One load per stream at a time (the caller holds its lock).
 */
export async function loadBucket(ctx: TableContext, stream: StreamState, identity: BucketIdentity): Promise<Result<LoadedBucket>> {
  const startedMs = ctx.now();
  const tablet = ctx.tables.storage.open(stream.id);
  let mark = tablet.mark() ?? { appliedOffset: 0, appliedPosition: 0 };
  if (mark.appliedPosition > stream.tail) {
    // A tablet ahead of its stream cannot come from this stream's acknowledged records: start again.
    ctx.log.log("node.error", { during: "table_load", streamId: stream.id, position: mark.appliedPosition, tail: stream.tail });
    mark = { appliedOffset: 0, appliedPosition: 0 };
    tablet.replace([], mark);
  }
  const newest = identity.snapshots.at(-1);
  let restoredFrom: number | null = null;
  if (newest !== undefined && newest.coveredPosition > mark.appliedPosition && newest.coveredPosition <= stream.tail) {
    // S5/S9: the newest sound snapshot replaces a tablet that is further behind (a new leader has none), a
    // part at a time; none sound: the tablet starts empty and the whole changelog is replayed.
    const restored = await restoreInto(ctx.store, identity.snapshots, tablet);
    mark = restored === null ? { appliedOffset: 0, appliedPosition: 0 } : { appliedOffset: restored.coveredOffset, appliedPosition: restored.coveredPosition };
    restoredFrom = restored?.coveredPosition ?? null;
  }
  const replayedAt = await replay(ctx, stream, identity.definition, tablet, mark.appliedPosition, mark.appliedOffset);
  if (!replayedAt.ok) return replayedAt;
  const replayed = replayedAt.value;
  ctx.log.log("table.load", {
    streamId: stream.id,
    table: identity.table,
    bucket: identity.bucket,
    restoredFrom,
    replayedBytes: replayed.appliedPosition - mark.appliedPosition,
    rows: tablet.count(),
    durationMs: ctx.now() - startedMs,
  });
  const kind: TableKind = identity.definition.primaryKey === null ? "log" : "primary-key";
  const bucket: LoadedBucket = {
    ...identity,
    streamId: stream.id,
    kind,
    tablet,
    epoch: stream.epoch,
    state: openBucket({ rows: new TabletRowsView(tablet), appliedOffset: replayed.appliedOffset }),
    appliedPosition: replayed.appliedPosition,
    snapshot: { position: newest?.coveredPosition ?? 0, atMs: ctx.now(), running: null },
  };
  ctx.tables.remember(bucket);
  return { ok: true, value: bucket };
}

/** Applies the stream's records from `position` to its tail to the tablet, a page at a time. */
async function replay(
  ctx: TableContext,
  stream: StreamState,
  definition: TableDefinition,
  tablet: BucketTablet,
  position: number,
  offset: number,
): Promise<Result<{ appliedPosition: number; appliedOffset: number }>> {
  let at = { appliedPosition: position, appliedOffset: offset };
  while (at.appliedPosition < stream.tail) {
    const page = await readPage(ctx, stream, at.appliedPosition);
    if (page.end <= at.appliedPosition) break;
    const records: KeyedRecord[] = [];
    for (const message of decodeJsonMessages(decoder.decode(page.bytes))) {
      const record = parseChangeRecord(message);
      if (!record.ok) return { ok: false, error: unavailable(`bucket stream ${stream.id} holds a record that is not a changelog record`, { at: formatOffset(at.appliedPosition) }) };
      records.push({ key: keyOfRow(definition, record.value.row), record: record.value });
    }
    const changes = netChanges(records);
    if (!changes.ok) return changes;
    at = { appliedPosition: page.end, appliedOffset: at.appliedOffset + records.length };
    tablet.apply(changes.value, at);
  }
  return { ok: true, value: at };
}
