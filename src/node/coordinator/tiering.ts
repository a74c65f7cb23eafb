// The tiering worker's node side (docs/tiering.md): a round of one table, run by the lease holder at its
// coordinator epoch. It finds the table and its buckets in the metadata log, reads each bucket's changelog
// at the bucket's leader (this node, or another over its RPC), and hands the round to src/tiering. Its
// heartbeats are RenewLease at the round's epoch: a holder that lost the lease is refused at its next step.
import { domainError } from "../../core/errors.ts";
import { parseChangeRecord, type ChangeRecord } from "../../core/tables/changelog.ts";
import { parseTableDefinition } from "../../core/tables/definition.ts";
import type { TieredPosition } from "../../core/tiering/iceberg-metadata.ts";
import type { TierReport, TierTableAnswer } from "../../core/tiering/tier-report.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import type { ChangelogPageAnswer } from "../../ports/stream-node-client.ts";
import { resolveRetry } from "../../storage/retry-policy.ts";
import { tierTable, type ChangelogRead, type TieringBucket, type TieringPort } from "../../tiering/tiering-round.ts";
import type { TableContext } from "../tables/buckets.ts";
import { readBucketChangelog } from "../tables/changelog-pages.ts";

/** Another node's changelog reads (its RPC), by node id. */
export type ChangelogPeers = (nodeId: string) => {
  readBucketChangelog(table: string, partition: string | number | null, bucket: number, fromPosition: number, maxBytes: number): Promise<ChangelogPageAnswer>;
};

export interface TieringDeps {
  readonly meta: Pick<MetaLogClient, "lookupTable" | "propose">;
  readonly coordinatorEpoch: number;
  readonly peers: ChangelogPeers | null;
  /** `s3://<bucket>` of the node's object store. */
  readonly storeUri: string;
}

export async function tierTableHere(ctx: TableContext, deps: TieringDeps, name: string): Promise<TierTableAnswer> {
  const lookup = await deps.meta.lookupTable(name);
  if (lookup.table === null) return { ok: false, error: domainError("not_found", "no such table", { table: name }) };
  const definition = parseTableDefinition(lookup.table.definition);
  if (!definition.ok) return { ok: false, error: domainError("unavailable", "the table's recorded definition does not parse", { table: name }) };
  const leaders = new Map(lookup.buckets.map((bucket) => [bucket.streamId, bucket.leaderNode?.id ?? null]));
  const buckets: TieringBucket[] = lookup.buckets.map((bucket) => ({ streamId: bucket.streamId, partition: bucket.partition, bucket: bucket.bucket }));
  const port: TieringPort = {
    store: ctx.store,
    retry: resolveRetry(),
    storeUri: deps.storeUri,
    coordinatorEpoch: deps.coordinatorEpoch,
    heartbeat: async () => {
      const renewed = await deps.meta.propose({ type: "RenewLease", nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch, coordinatorEpoch: deps.coordinatorEpoch, ttlMs: ctx.settings.leaseTtlMs });
      return renewed.ok ? { ok: true, value: undefined } : { ok: false, error: renewed.error };
    },
    readChangelog: (bucket, from, maxBytes) => readAtLeader(ctx, deps.peers, name, leaders.get(bucket.streamId) ?? null, bucket, from, maxBytes),
    now: () => ctx.now(),
    newName: () => randomName(() => ctx.random()),
    newSnapshotId: () => 1 + Math.floor(ctx.random() * (Number.MAX_SAFE_INTEGER - 1)),
  };
  try {
    const report = await tierTable(port, { name, definition: definition.value, buckets }, ctx.settings.tieringMaxRoundBytes);
    if (!report.ok) return report;
    if (report.value.committed) await recordRound(ctx, deps, report.value);
    return { ok: true, report: report.value };
  } catch (error) {
    // The store kept failing (after its retries): nothing was committed; the round can run again.
    ctx.log.log("node.error", { during: "tiering_round", table: name }, error);
    return { ok: false, error: domainError("unavailable", `the tiering round failed: ${String(error)}; retry`, { table: name }) };
  }
}

/**
 * Records the committed round in the metadata log (table RT) for the table list. The commit already
 * happened (the store's version): a refusal (the lease moved) or a failure only leaves the list a round
 * behind, and the next round records again.
 */
async function recordRound(ctx: TableContext, deps: TieringDeps, report: TierReport): Promise<void> {
  if (report.snapshotId === null) return;
  const tiered = { version: report.version, snapshotId: report.snapshotId, tieredAtMs: ctx.now(), records: report.buckets.reduce((sum, bucket) => sum + bucket.toOffset, 0) };
  const coordinator = { nodeId: ctx.nodeId, nodeEpoch: ctx.nodeEpoch, coordinatorEpoch: deps.coordinatorEpoch };
  try {
    const recorded = await deps.meta.propose({ type: "RecordTiering", table: report.table, tiered, coordinator });
    if (!recorded.ok) ctx.log.log("table.tier_failed", { table: report.table, code: recorded.error.code, during: "record" }, recorded.error.message);
  } catch (error) {
    ctx.log.log("node.error", { during: "record_tiering", table: report.table }, error);
  }
}

async function readAtLeader(
  ctx: TableContext,
  peers: ChangelogPeers | null,
  table: string,
  leader: string | null,
  bucket: TieringBucket,
  from: TieredPosition,
  maxBytes: number,
): Promise<ChangelogRead> {
  if (leader === null) return { ok: false, error: domainError("unavailable", "the bucket has no leader now") };
  if (leader !== ctx.nodeId && peers === null) return { ok: false, error: domainError("unavailable", "this node cannot reach the bucket's leader") };
  let answer: ChangelogPageAnswer;
  try {
    if (leader === ctx.nodeId) {
      const page = await readBucketChangelog(ctx, { table, partition: bucket.partition, bucket: bucket.bucket }, from.position, maxBytes);
      answer = page.ok ? { ok: true, ...page.value } : page;
    } else {
      answer = await peers!(leader).readBucketChangelog(table, bucket.partition, bucket.bucket, from.position, maxBytes);
    }
  } catch (error) {
    // A leader that went away mid-call, or a store read that failed: this bucket waits for the next round,
    // the others are tiered now.
    return { ok: false, error: domainError("unavailable", `the bucket's leader did not answer: ${String(error)}`, { leader }) };
  }
  if (!answer.ok) return answer;
  const records: ChangeRecord[] = [];
  for (const message of answer.messages) {
    const record = parseChangeRecord(message);
    if (!record.ok) return record;
    records.push(record.value);
  }
  return { ok: true, value: { records, end: { position: answer.endPosition, offset: from.offset + records.length }, atTail: answer.atTail } };
}

/** 32 hex digits from the node's randomness: a file name no other round picks. */
function randomName(random: () => number): string {
  let name = "";
  for (let i = 0; i < 8; i++) name += Math.floor(random() * 0x10000).toString(16).padStart(4, "0");
  return name;
}

