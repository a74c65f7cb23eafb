// One tiering round of one table (docs/tiering.md), run by the coordinator (the lease holder): read each
// bucket's changelog from the offset the latest snapshot tiered it up to, write Parquet and Avro files, and
// commit the next Iceberg version with a create-only PUT. Fenced twice by the coordinator epoch: the round's
// heartbeats (RenewLease at its epoch) stop it as soon as the lease is lost, and it commits only over a
// version of its own epoch (table TC): a new holder writes a version of its epoch first, so a late commit of
// the old holder finds its version taken and changes nothing. A commit that loses the race is retried from
// the winner's offsets: a row is tiered exactly once.
import { domainError } from "../core/errors.ts";
import type { Result } from "../core/result.ts";
import type { ChangeRecord } from "../core/tables/changelog.ts";
import type { TableDefinition } from "../core/tables/definition.ts";
import { commitStep, currentManifests, newTableMetadata, tableUuidOf, tieredOffsetsOf, withEpoch, withSnapshot, type TieredPosition } from "../core/tiering/iceberg-metadata.ts";
import { bucketShareBytes, foldBucketRecords, type BucketRound } from "../core/tiering/round-rows.ts";
import type { BucketReport, TierReport } from "../core/tiering/tier-report.ts";
import { tieredTablePrefix, tieredMetadataKey } from "../storage/keys.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { ResolvedRetry } from "../storage/retry-policy.ts";
import { createVersion, readLatestVersion, writeVersionHint, type TableVersion } from "./iceberg-store.ts";
import { writeRoundFiles } from "./round-files.ts";
import { collectOrphans } from "./collect-orphans.ts";

/** A bucket of the table, as the metadata log names it. */
export interface TieringBucket {
  readonly streamId: string;
  readonly partition: string | number | null;
  readonly bucket: number;
}

/**
 * What a bucket's leader answered: the records from `from` on (at most a budget's worth, whole records),
 * where they end, and whether that was the bucket's tail when read.
 */
export type ChangelogRead = Result<{ readonly records: readonly ChangeRecord[]; readonly end: TieredPosition; readonly atTail: boolean }>;

/** The port a round reads changelogs through (the bucket's leader, reading its stream) and is fenced by. */
export interface TieringPort {
  readonly store: ObjectStore;
  readonly retry: ResolvedRetry;
  /** `s3://<bucket>`: the table's files are named by their URIs under it. */
  readonly storeUri: string;
  readonly coordinatorEpoch: number;
  /** RenewLease at the round's coordinator epoch: an error (`fenced`) ends the round. */
  heartbeat(): Promise<Result<void>>;
  readChangelog(bucket: TieringBucket, from: TieredPosition, maxBytes: number): Promise<ChangelogRead>;
  now(): number;
  /** A fresh unique name: 32 random hex digits. */
  newName(): string;
  /** A fresh snapshot id: a positive safe integer. */
  newSnapshotId(): number;
}

/** How many times a round starts over after another writer committed first. */
const MAX_COMMIT_ATTEMPTS = 3;

export async function tierTable(
  port: TieringPort,
  table: { readonly name: string; readonly definition: TableDefinition; readonly buckets: readonly TieringBucket[] },
  maxRoundBytes: number,
): Promise<Result<TierReport>> {
  const maxBytesPerBucket = bucketShareBytes(maxRoundBytes, table.buckets.length);
  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt++) {
    const current = await currentVersionAtEpoch(port, table.name, table.definition);
    if (!current.ok) return current;
    // Orphans (table OF) appear only once a newer epoch fenced the table: collect when this round did.
    if (current.value.fenced) await collectOrphansQuietly(port, table.name, current.value.latest);
    const outcome = await roundOver(port, table, current.value.latest, maxBytesPerBucket);
    if (outcome !== "lost_race") return outcome;
  }
  return { ok: false, error: domainError("unavailable", "another writer kept committing this tiered table first; retry", { table: table.name }) };
}

/**
 * The latest version once it is of this round's epoch (table TC: created or fenced first), and whether this
 * call wrote that version; or `fenced`.
 */
async function currentVersionAtEpoch(port: TieringPort, name: string, definition: TableDefinition): Promise<Result<{ latest: TableVersion; fenced: boolean }>> {
  let fenced = false;
  for (let step = 0; step < MAX_COMMIT_ATTEMPTS * 2; step++) {
    const beat = await port.heartbeat();
    if (!beat.ok) return beat;
    const latest = await readLatestVersion(port.store, name, port.retry);
    const next = commitStep(latest?.metadata ?? null, port.coordinatorEpoch);
    if (next.kind === "fenced") {
      return { ok: false, error: domainError("fenced", "a newer coordinator epoch wrote this tiered table", { table: name, coordinatorEpoch: next.latestEpoch }) };
    }
    if (next.kind === "commit" && latest !== null) return { ok: true, value: { latest, fenced } };
    const nowMs = port.now();
    const metadata =
      latest === null
        ? newTableMetadata({ definition, location: `${port.storeUri}/${tieredTablePrefix(name).slice(0, -1)}`, tableUuid: tableUuidOf(port.newName()), nowMs, coordinatorEpoch: port.coordinatorEpoch })
        : withEpoch(latest.metadata, port.coordinatorEpoch, nowMs);
    const version = (latest?.version ?? 0) + 1;
    if ((await createVersion(port.store, name, version, metadata, port.retry)) === "created") {
      fenced = true;
      await hintQuietly(port, name, version);
    }
  }
  return { ok: false, error: domainError("unavailable", "the tiered table kept changing under this round; retry", { table: name }) };
}

/** Reads, writes and commits one round over `latest`; `lost_race` when another writer took the next version. */
async function roundOver(
  port: TieringPort,
  table: { readonly name: string; readonly definition: TableDefinition; readonly buckets: readonly TieringBucket[] },
  latest: TableVersion,
  maxBytesPerBucket: number,
): Promise<Result<TierReport> | "lost_race"> {
  const offsets = { ...tieredOffsetsOf(latest.metadata) };
  const reports: BucketReport[] = [];
  const rounds: { partition: string | number | null; round: BucketRound }[] = [];
  let more = false;
  for (const bucket of table.buckets) {
    const from = offsets[bucket.streamId] ?? { position: 0, offset: 0 };
    const read = await port.readChangelog(bucket, from, maxBytesPerBucket);
    const folded = read.ok ? foldBucketRecords(table.definition, bucket.bucket, from.offset, read.value.records) : read;
    if (!read.ok || !folded.ok) {
      reports.push({ ...bucketOf(bucket), fromOffset: from.offset, toOffset: from.offset, error: folded.ok ? "unreadable" : folded.error.message });
      continue;
    }
    offsets[bucket.streamId] = read.value.end;
    if (!read.value.atTail) more = true;
    reports.push({ ...bucketOf(bucket), fromOffset: from.offset, toOffset: read.value.end.offset, error: null });
    if (folded.value.data.length > 0 || folded.value.deletes.length > 0) rounds.push({ partition: bucket.partition, round: folded.value });
  }
  const current = latest.metadata["current-snapshot-id"] ?? null;
  const unchanged = { table: table.name, snapshotId: current, committed: false, version: latest.version, metadataKey: tieredMetadataKey(table.name, latest.version), rows: 0, deletes: 0, more, buckets: reports };
  if (rounds.length === 0) return { ok: true, value: unchanged };

  const snapshotId = port.newSnapshotId();
  const sequenceNumber = latest.metadata["last-sequence-number"] + 1;
  const files = await writeRoundFiles(port.store, {
    table: table.name,
    definition: table.definition,
    storeUri: port.storeUri,
    buckets: rounds,
    snapshotId,
    coordinatorEpoch: port.coordinatorEpoch,
    sequenceNumber,
    parentSnapshotId: current,
    previousManifests: currentManifests(latest.metadata),
    newName: () => port.newName(),
    retry: port.retry,
  });
  // The last heartbeat before the commit: a holder that lost the lease while writing stops here.
  const beat = await port.heartbeat();
  if (!beat.ok) return beat;
  const next = withSnapshot(latest.metadata, { snapshotId, manifestList: files.manifestList, manifests: files.manifests, nowMs: port.now(), offsets, counts: files.counts, coordinatorEpoch: port.coordinatorEpoch });
  const version = latest.version + 1;
  if ((await createVersion(port.store, table.name, version, next, port.retry)) === "exists") return "lost_race";
  await hintQuietly(port, table.name, version);
  return {
    ok: true,
    value: { ...unchanged, snapshotId, committed: true, version, metadataKey: tieredMetadataKey(table.name, version), rows: files.counts.records, deletes: files.counts.deletes },
  };
}

/** Points readers at a committed version; a failure changes nothing committed (readers read on past a lagging hint). */
async function hintQuietly(port: TieringPort, table: string, version: number): Promise<void> {
  try {
    await writeVersionHint(port.store, table, version);
  } catch {
    // The next commit writes it again.
  }
}

/** The files of fenced rounds (table OF), deleted before this round writes; a failure only delays it. */
async function collectOrphansQuietly(port: TieringPort, table: string, latest: TableVersion): Promise<void> {
  try {
    await collectOrphans(port.store, table, latest.metadata, port.coordinatorEpoch);
  } catch {
    // The next round lists again.
  }
}

function bucketOf(bucket: TieringBucket): Pick<BucketReport, "partition" | "bucket" | "streamId"> {
  return { partition: bucket.partition, bucket: bucket.bucket, streamId: bucket.streamId };
}
