// bench:tiering, the writer alone (docs/tiering.md): one tiering round after another over the in-memory
// store, in Node, from changelogs held in memory, until every record is tiered: rows per second of the
// round (folding, Parquet, Avro, the commit) and the bytes of Parquet it wrote. No node, no HTTP: what the
// tiering code costs by itself, the floor under the end-to-end figure.
import { definitionOf } from "../../support/parse-definition.ts";
import type { ChangeRecord } from "../../../src/core/tables/changelog.ts";
import { MemoryStore } from "../../../src/storage/memory-store.ts";
import { listAll } from "../../../src/storage/object-store.ts";
import { resolveRetry } from "../../../src/storage/retry-policy.ts";
import { tierTable, type TieringBucket } from "../../../src/tiering/tiering-round.ts";

export type TableKind = "log" | "primary-key";

export interface WriterResult {
  readonly rows: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly parquetBytes: number;
  readonly deleteBytes: number;
}

const BUCKETS = 4;
const PAYLOAD = "x".repeat(64);

export function benchDefinition(kind: TableKind): unknown {
  return {
    columns: [{ name: "id", type: "int" }, { name: "payload", type: "string" }, { name: "score", type: "float" }, { name: "ok", type: "bool" }],
    ...(kind === "primary-key" ? { primaryKey: ["id"] } : {}),
    buckets: BUCKETS,
  };
}

/** About 100 B of JSON a row: {"id", "payload" (64 characters), "score", "ok"}. */
export function benchRow(id: number): ChangeRecord["row"] {
  return { id, payload: `${PAYLOAD.slice(0, 58)}${String(id).padStart(6, "0").slice(-6)}`, score: id / 7, ok: id % 2 === 0 };
}

export async function runWriter(kind: TableKind, rows: number, maxRoundBytes: number): Promise<WriterResult> {
  const definition = definitionOf(benchDefinition(kind));
  const logs: { records: ChangeRecord[]; bytes: number[] }[] = Array.from({ length: BUCKETS }, () => ({ records: [], bytes: [] }));
  for (let id = 0; id < rows; id++) {
    const record: ChangeRecord = { op: "+I", row: benchRow(id) };
    const log = logs[id % BUCKETS]!;
    log.records.push(record);
    log.bytes.push(JSON.stringify(record).length + 1);
  }
  const buckets: TieringBucket[] = logs.map((_, bucket) => ({ streamId: `s${bucket}`, partition: null, bucket }));
  const store = new MemoryStore();
  let names = 0;
  let ids = 0;
  const port = {
    store,
    retry: resolveRetry(),
    storeUri: "s3://mink",
    coordinatorEpoch: 1,
    heartbeat: async () => ({ ok: true as const, value: undefined }),
    readChangelog: async (bucket: TieringBucket, from: { position: number; offset: number }, maxBytes: number) => {
      const log = logs[bucket.bucket]!;
      let end = from.offset;
      let position = from.position;
      while (end < log.records.length && position - from.position < maxBytes) position += log.bytes[end++]!;
      return { ok: true as const, value: { records: log.records.slice(from.offset, end), end: { position, offset: end }, atTail: end === log.records.length } };
    },
    now: () => Date.now(),
    newName: () => (++names).toString(16).padStart(32, "0"),
    newSnapshotId: () => ++ids,
  };
  const started = performance.now();
  let rounds = 0;
  for (;;) {
    const round = await tierTable(port, { name: "bench", definition, buckets }, maxRoundBytes);
    if (!round.ok) throw new Error(`round ${rounds}: ${round.error.message}`);
    if (!round.value.committed) break;
    rounds++;
  }
  const seconds = (performance.now() - started) / 1000;
  let parquetBytes = 0;
  let deleteBytes = 0;
  for await (const object of listAll(store, "tiered/bench/data/")) {
    if (object.key.endsWith("-deletes.parquet")) deleteBytes += object.size;
    else parquetBytes += object.size;
  }
  return { rows, rounds, seconds, parquetBytes, deleteBytes };
}
