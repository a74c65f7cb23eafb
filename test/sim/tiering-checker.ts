// The exactly-once rule of tiering (docs/tiering.md, tables MD and TC), checked after the run settled and
// the final reader read every bucket's changelog back, from the store as it is then and the writes the
// history recorded landing:
// - versions: each `v<N>.metadata.json` landed once (the commit is create-only); versions 1..N all there,
//   N the latest `readLatestVersion` finds; each version extends the one before (its snapshots are the
//   earlier ones unchanged and at most one more, whose parent is the earlier current snapshot): the
//   versions are one history, so no committed snapshot is ever dropped or rewritten; and
//   `mink.coordinator-epoch` never decreases from one version to the next;
// - snapshots: each one's offsets (`mink.offsets`) are at or past its parent's for every bucket stream (no
//   two snapshots cover the same records), and name record boundaries of the bucket's changelog (the byte
//   position of exactly that many records);
// - rows: every snapshot, read by icebird (tiering-rows.ts), holds exactly each bucket's state after its
//   changelog up to the snapshot's offsets, every row once, with the offset of the record that wrote it.
// The simulated table is a primary-key table (table-clients.ts), so the rows are judged merge-on-read.
import { tieredOffsetsOf, type IcebergMetadata, type TieredOffsets } from "../../src/core/tiering/iceberg-metadata.ts";
import { tieredMetadataKey } from "../../src/storage/keys.ts";
import type { MemoryStore } from "../../src/storage/memory-store.ts";
import { readLatestVersion } from "../../src/tiering/iceberg-store.ts";
import type { Violation } from "./violations.ts";
import type { History } from "./history.ts";
import { SIM_TABLE, type TableWorld } from "./table-clients.ts";
import { compareRows, type TieredBucket } from "./tiering-rows.ts";

export const TIERING_INVARIANT = "tiering (every changelog record tiered by exactly one snapshot; versions fenced by the coordinator epoch)";

const VERSION_KEY = new RegExp(`^tiered/${SIM_TABLE}/metadata/v(\\d+)\\.metadata\\.json$`);
const decoder = new TextDecoder();

type Snapshot = IcebergMetadata["snapshots"][number];

export async function checkTiering(history: History, store: MemoryStore, world: TableWorld): Promise<Violation[]> {
  const out: Violation[] = [];
  const fail = (message: string, step?: number): void => {
    out.push({ invariant: TIERING_INVARIANT, message, focus: [`tiered/${SIM_TABLE}/metadata/v`, "tiering round"], ...(step === undefined ? {} : { step }) });
  };
  const landed = history.writes.filter((write) => VERSION_KEY.test(write.key));
  const byKey = new Map<string, typeof landed>();
  for (const write of landed) byKey.set(write.key, [...(byKey.get(write.key) ?? []), write]);
  for (const [key, writes] of byKey) {
    if (writes.length > 1) fail(`${key} landed ${writes.length} times (${writes.map((w) => `step ${w.step} by ${w.owner}`).join(", ")}): a version is created once`, writes[1]!.step);
  }
  const latest = await readLatestVersion(store, SIM_TABLE);
  if (latest === null) {
    if (landed.length > 0) fail(`${landed.length} versions landed, yet readLatestVersion finds none`);
    return out;
  }
  const highest = Math.max(0, ...landed.map((write) => Number(VERSION_KEY.exec(write.key)![1])));
  if (highest !== latest.version) fail(`the latest version read is v${latest.version}, the highest that landed v${highest}`);
  const versions: IcebergMetadata[] = [];
  for (let version = 1; version <= latest.version; version++) {
    const metadata = await readMetadata(store, version);
    if (metadata === null) {
      fail(`v${version} is missing below the latest version v${latest.version}`);
      return out;
    }
    versions.push(metadata);
  }
  const stepOf = (version: number): number | undefined => byKey.get(tieredMetadataKey(SIM_TABLE, version))?.[0]?.step;
  for (let i = 1; i < versions.length; i++) {
    for (const problem of extensionProblems(versions[i - 1]!, versions[i]!)) fail(`v${i + 1} after v${i}: ${problem}`, stepOf(i + 1));
  }
  const buckets = readBack(history, world);
  const chain = latest.metadata.snapshots;
  chain.forEach((snapshot, i) => {
    for (const problem of offsetProblems(latest.metadata, snapshot, i === 0 ? null : chain[i - 1]!, buckets)) fail(`snapshot ${snapshot["snapshot-id"]}: ${problem}`);
  });
  if (!history.tables.existsAtEnd) return out;
  const unread = (partition: string, bucket: string): boolean =>
    !world.buckets.some((b) => (b.partition === null ? "" : String(b.partition)) === partition && String(b.id.bucket) === bucket && history.tables.final.has(b.text));
  // Each snapshot's rows, at the first version that has it as its current one.
  const readAt = new Map<number, number>();
  versions.forEach((metadata, i) => {
    const current = metadata["current-snapshot-id"];
    if (current !== undefined && !readAt.has(current)) readAt.set(current, i + 1);
  });
  for (const [snapshotId, version] of readAt) {
    const offsets = offsetsOf(versions[version - 1]!, snapshotId);
    const { problems, rows } = await compareRows(store, version, offsets, buckets, unread);
    history.count("tiering snapshot checked");
    history.counts.set("tiering row checked", (history.counts.get("tiering row checked") ?? 0) + rows);
    for (const problem of problems.slice(0, 5)) fail(`snapshot ${snapshotId} (v${version}): ${problem}`, stepOf(version));
  }
  return out;
}

async function readMetadata(store: MemoryStore, version: number): Promise<IcebergMetadata | null> {
  try {
    return JSON.parse(decoder.decode((await store.get(tieredMetadataKey(SIM_TABLE, version))).body)) as IcebergMetadata;
  } catch {
    return null;
  }
}

const EPOCH = "mink.coordinator-epoch";
const epochOf = (metadata: IcebergMetadata): number => Number(metadata.properties[EPOCH] ?? 0);

/** How `next` fails to extend `previous`: one history of snapshots, the coordinator epoch never going back. */
function extensionProblems(previous: IcebergMetadata, next: IcebergMetadata): string[] {
  const problems: string[] = [];
  if (epochOf(next) < epochOf(previous)) problems.push(`written at coordinator epoch ${epochOf(next)}, below ${epochOf(previous)}`);
  const before = previous.snapshots;
  const after = next.snapshots;
  const kept = before.every((snapshot, i) => after[i] !== undefined && JSON.stringify(after[i]) === JSON.stringify(snapshot));
  if (!kept || after.length > before.length + 1) {
    problems.push(`its snapshots [${after.map((s) => s["snapshot-id"]).join(", ")}] are not those of the version before [${before.map((s) => s["snapshot-id"]).join(", ")}] and at most one more`);
    return problems;
  }
  const added = after[before.length];
  if (added === undefined) {
    if (next["current-snapshot-id"] !== previous["current-snapshot-id"]) problems.push(`it adds no snapshot yet moves the current one to ${next["current-snapshot-id"]}`);
    return problems;
  }
  if (added["parent-snapshot-id"] !== previous["current-snapshot-id"]) problems.push(`snapshot ${added["snapshot-id"]}'s parent is ${added["parent-snapshot-id"]}, not the current ${previous["current-snapshot-id"]}`);
  if (added["sequence-number"] !== previous["last-sequence-number"] + 1) problems.push(`snapshot ${added["snapshot-id"]} has sequence number ${added["sequence-number"]} after ${previous["last-sequence-number"]}`);
  if (next["current-snapshot-id"] !== added["snapshot-id"]) problems.push(`it adds snapshot ${added["snapshot-id"]} but its current one is ${next["current-snapshot-id"]}`);
  return problems;
}

/** A snapshot's offsets (MD4, read as if it were the current one). */
function offsetsOf(metadata: IcebergMetadata, snapshotId: number): TieredOffsets {
  return tieredOffsetsOf({ ...metadata, "current-snapshot-id": snapshotId });
}

/** The buckets read back, by stream id, with their changelogs. */
function readBack(history: History, world: TableWorld): Map<string, TieredBucket> {
  const byStream = new Map<string, TieredBucket>();
  for (const bucket of world.buckets) {
    const final = history.tables.final.get(bucket.text);
    if (final !== undefined) byStream.set(final.streamId, { bucket, final });
  }
  return byStream;
}

/** A snapshot's offsets go back from its parent's, or name no record boundary of the changelog read back. */
function offsetProblems(metadata: IcebergMetadata, snapshot: Snapshot, parent: Snapshot | null, buckets: ReadonlyMap<string, TieredBucket>): string[] {
  const problems: string[] = [];
  const offsets = offsetsOf(metadata, snapshot["snapshot-id"]);
  if (parent !== null && snapshot["parent-snapshot-id"] !== parent["snapshot-id"]) problems.push(`its parent is ${snapshot["parent-snapshot-id"]}, not the snapshot before it, ${parent["snapshot-id"]}`);
  const before = parent === null ? {} : offsetsOf(metadata, parent["snapshot-id"]);
  for (const [streamId, was] of Object.entries(before)) {
    const now = offsets[streamId];
    if (now === undefined || now.offset < was.offset || now.position < was.position) {
      problems.push(`stream ${streamId} tiered up to ${now === undefined ? "nothing" : `offset ${now.offset} (position ${now.position})`}, behind its parent's offset ${was.offset} (position ${was.position}): records tiered twice`);
    }
  }
  for (const [streamId, { offset, position }] of Object.entries(offsets)) {
    const known = buckets.get(streamId);
    if (known === undefined) continue;
    const { changelog } = known.final;
    const positions = [0, ...changelog.map((entry) => entry.end)];
    if (offset > changelog.length) problems.push(`stream ${streamId} (bucket ${known.bucket.text}) tiered up to offset ${offset}; its changelog has ${changelog.length} records`);
    else if (positions[offset] !== position) problems.push(`stream ${streamId} (bucket ${known.bucket.text}) tiered up to offset ${offset} at position ${position}; record ${offset} of its changelog starts at ${positions[offset]}`);
  }
  return problems;
}
