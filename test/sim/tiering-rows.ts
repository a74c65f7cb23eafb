// The rows of a tiered snapshot against the changelogs read back after the run (tiering-checker.ts): what an
// outside reader (icebird, applying the equality deletes merge-on-read) finds in the snapshot must be
// exactly the state of each bucket after its changelog up to the offset the snapshot tiered it to, every
// row once, carrying its bucket (`_bucket`) and the offset of the changelog record that wrote it
// (`_offset`, TS2). icebird reads the simulation's store directly, outside virtual time.
import { tieredTablePrefix, tieredVersionHintKey } from "../../src/storage/keys.ts";
import type { MemoryStore } from "../../src/storage/memory-store.ts";
import { isStoreError } from "../../src/storage/object-store.ts";
import type { TieredOffsets } from "../../src/core/tiering/iceberg-metadata.ts";
import { readIcebergTable } from "../support/iceberg-reader.ts";
import type { SimBucket } from "./table-clients.ts";
import { SIM_TABLE } from "./table-clients.ts";
import type { BucketFinal } from "./table-history.ts";
import { TIERING_BUCKET } from "./tiering-peers.ts";

const encoder = new TextEncoder();

/** A bucket of the workload that was read back: its stream's changelog. */
export interface TieredBucket {
  readonly bucket: SimBucket;
  readonly final: BucketFinal;
}

/** What a row of the tiered table must hold, by its identity (partition, bucket, key). */
interface ExpectedRow {
  readonly v: number;
  readonly offset: number;
}

/** A row's identity: its partition value (empty when unpartitioned), its bucket and its key. */
const identity = (partition: string, bucket: string, id: string): string => `${partition}|${bucket}|${id}`;

/** Every row of the tables's state at `offsets` (streams the run did not read back are left out). */
function expectedRows(offsets: TieredOffsets, byStream: ReadonlyMap<string, TieredBucket>): Map<string, ExpectedRow> {
  const rows = new Map<string, ExpectedRow>();
  for (const [streamId, { offset }] of Object.entries(offsets)) {
    const known = byStream.get(streamId);
    if (known === undefined) continue;
    const state = new Map<string, ExpectedRow>();
    known.final.changelog.slice(0, offset).forEach((entry, at) => {
      if (entry.op === "+I" || entry.op === "+U") state.set(entry.row.id, { v: entry.row.v, offset: at });
      else if (entry.op === "-D") state.delete(entry.row.id);
    });
    const partition = known.bucket.partition === null ? "" : String(known.bucket.partition);
    for (const [id, row] of state) rows.set(identity(partition, String(known.bucket.id.bucket), id), row);
  }
  return rows;
}

/**
 * The differences between the rows icebird reads at version `version` (a version that added a snapshot)
 * and the state at that snapshot's offsets (none when they agree), and how many rows were judged. `unread`:
 * a bucket (partition, bucket) whose changelog the run did not read back (its rows are not judged).
 */
export async function compareRows(
  store: MemoryStore,
  version: number,
  offsets: TieredOffsets,
  byStream: ReadonlyMap<string, TieredBucket>,
  unread: (partition: string, bucket: string) => boolean,
): Promise<{ readonly problems: readonly string[]; readonly rows: number }> {
  let rows: Record<string, unknown>[];
  try {
    rows = await readVersion(store, version);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A table whose snapshots so far hold only deletes has no data manifest: icebird refuses to read it.
    if (!/No data manifest files found/.test(message)) return { problems: [`icebird could not read version ${version}: ${message}`], rows: 0 };
    rows = [];
  }
  const expected = expectedRows(offsets, byStream);
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    const partition = row["p"] === undefined ? "" : cell(row["p"]);
    const bucket = cell(row["_bucket"]);
    const id = cell(row["id"]);
    if (unread(partition, bucket)) continue;
    const key = identity(partition, bucket, id);
    const text = `${partition === "" ? "" : `p=${partition} `}bucket ${bucket} ${id}=${cell(row["v"])} at offset ${cell(row["_offset"])}`;
    if (seen.has(key)) problems.push(`${text}: a second row for this key`);
    seen.add(key);
    const want = expected.get(key);
    if (want === undefined) problems.push(`${text}: the changelog up to the tiered offset holds no row for this key`);
    else if (Number(row["v"]) !== want.v || Number(row["_offset"]) !== want.offset) problems.push(`${text}: the changelog up to the tiered offset has v=${want.v}, written at offset ${want.offset}`);
  }
  for (const [key, want] of expected) {
    if (!seen.has(key)) problems.push(`${key.replaceAll("|", " ")}=${want.v} (written at offset ${want.offset}) is missing`);
  }
  return { problems, rows: seen.size };
}

/** A value icebird read (ints as bigints), as text. */
function cell(value: unknown): string {
  return typeof value === "string" || typeof value === "number" || typeof value === "bigint" ? String(value) : JSON.stringify(value);
}

/** The rows of version `version`, read by icebird from the store (its hint made to name that version). */
function readVersion(store: MemoryStore, version: number): Promise<Record<string, unknown>[]> {
  const tableUri = `s3://${TIERING_BUCKET}/${tieredTablePrefix(SIM_TABLE).slice(0, -1)}`;
  return readIcebergTable(tableUri, async (bucket, key) => {
    if (bucket !== TIERING_BUCKET) return null;
    if (key === tieredVersionHintKey(SIM_TABLE)) return encoder.encode(String(version));
    try {
      return (await store.get(key)).body;
    } catch (error) {
      if (isStoreError(error, "not_found")) return null;
      throw error;
    }
  });
}
