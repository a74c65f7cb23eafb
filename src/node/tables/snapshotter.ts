// Snapshots of the primary-key buckets this node leads (docs/tables.md, "Snapshots"): a bucket is
// snapshotted once TABLE_SNAPSHOT_BYTES of changelog came since its last snapshot, or TABLE_SNAPSHOT_INTERVAL_MS
// passed with any change. The mark is read first, then the rows are read from the tablet in key order and
// written a part at a time while writes go on (a fuzzy snapshot: replay from the mark repairs whatever
// changed meanwhile, see tables/snapshot-store.ts), committed through the metadata log at the bucket's stream
// epoch (a leader that lost the bucket is refused, CB3), and only then are parts no kept snapshot names collected.
import { unavailable } from "../state/replies.ts";
import type { LoadedBucket, TableContext } from "./buckets.ts";
import { collectSnapshots, writeSnapshotOf, type SnapshotRef } from "./snapshot-store.ts";
import type { Result } from "../../core/result.ts";

/** Whether the bucket is due a snapshot now. */
function snapshotDue(ctx: TableContext, bucket: LoadedBucket, nowMs: number): boolean {
  if (bucket.kind !== "primary-key" || bucket.appliedPosition <= bucket.snapshot.position) return false;
  if (bucket.appliedPosition - bucket.snapshot.position >= ctx.settings.tableSnapshotBytes) return true;
  return nowMs - bucket.snapshot.atMs >= ctx.settings.tableSnapshotIntervalMs;
}

/** Snapshots one bucket: the ref committed, or why not. One snapshot per bucket at a time. */
export async function snapshotBucket(ctx: TableContext, bucket: LoadedBucket): Promise<Result<SnapshotRef>> {
  if (bucket.snapshot.running !== null) return bucket.snapshot.running;
  const run = takeAndCommit(ctx, bucket).finally(() => {
    bucket.snapshot.running = null;
  });
  bucket.snapshot.running = run;
  return run;
}

async function takeAndCommit(ctx: TableContext, bucket: LoadedBucket): Promise<Result<SnapshotRef>> {
  const startedMs = ctx.now();
  // The mark before the first row is read: everything applied after it is replayed over the snapshot.
  const position = bucket.appliedPosition;
  const mark = { appliedOffset: bucket.state.tablet.appliedOffset, appliedPosition: position };
  const ref = await writeSnapshotOf(ctx.store, bucket.streamId, bucket.tablet.entries(), mark);
  const committed = await ctx.meta.propose({
    type: "CommitBucketSnapshot",
    table: bucket.table,
    bucket: bucket.bucket,
    streamId: bucket.streamId,
    epoch: bucket.epoch,
    snapshot: { key: ref.key, coveredOffset: ref.coveredOffset, coveredPosition: ref.coveredPosition, rows: ref.rows, bytes: ref.bytes },
    by: { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch },
  });
  if (!committed.ok) {
    ctx.log.log("table.snapshot_refused", { streamId: bucket.streamId, code: committed.error.code });
    return { ok: false, error: committed.error.code === "fenced" ? committed.error : unavailable(committed.error.message) };
  }
  bucket.snapshot.position = position;
  bucket.snapshot.atMs = ctx.now();
  // The commit made `ref` kept; what it dropped is collectable now, while this node still leads at its epoch.
  const kept = committed.value.bucket.snapshots;
  const deleted = await collectSnapshots(ctx.store, bucket.streamId, kept);
  ctx.log.log("table.snapshot", {
    streamId: bucket.streamId,
    table: bucket.table,
    bucket: bucket.bucket,
    rows: ref.rows,
    bytes: ref.bytes,
    coveredPosition: position,
    durationMs: ctx.now() - startedMs,
    collected: deleted,
  });
  return { ok: true, value: ref };
}

/** The heartbeat's round: every due bucket, one after the other (a snapshot is CPU and store bandwidth). */
export async function snapshotDueBuckets(ctx: TableContext): Promise<number> {
  let taken = 0;
  for (const bucket of ctx.tables.all()) {
    if (!snapshotDue(ctx, bucket, ctx.now())) continue;
    const result = await snapshotBucket(ctx, bucket);
    if (result.ok) taken++;
  }
  return taken;
}
