// `mink tables`, `mink table <name>` and `mink table snapshot <name>`: the tables through GET /admin/tables,
// GET /admin/tables/<name> and POST /admin/tables/<name>/snapshot (docs/tables.md), printed as tables for
// people or as the server's JSON. The definition is read defensively: the CLI imports nothing of the Worker.
import type { TableAnswer, TableSnapshotAnswer, TablesAnswer } from "./admin-answers.ts";
import type { CommandContext } from "./commands.ts";
import { CommandFailed } from "./errors.ts";
import { cell, count, formatKeyValues, formatTable } from "./format.ts";

/**
 * The error of a bucket whose leader holds no loaded tablet (no request since it took the bucket, or a log
 * table): nothing to snapshot there, which is not a failure.
 */
const NOT_LOADED = "not_loaded";
/** A log table keeps no tablet: nothing to snapshot in any bucket, which is not a failure either. */
const LOG_TABLE = "log_table";

function printJson(context: CommandContext, body: unknown): void {
  context.out(`${JSON.stringify(body, null, 2)}\n`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** `id int, name string, email string nullable`, or null when a column is not `{name, type, nullable?}`. */
function columnsText(columns: unknown): string | null {
  if (!Array.isArray(columns)) return null;
  const parts: string[] = [];
  for (const column of columns) {
    if (!isRecord(column) || typeof column["name"] !== "string" || typeof column["type"] !== "string") return null;
    parts.push(`${column["name"]} ${column["type"]}${column["nullable"] === true ? " nullable" : ""}`);
  }
  return parts.join(", ");
}

/**
 * The definition as key/value lines: name, kind, columns, keys, buckets, partitioning. A definition of
 * another shape (a newer server) is one line of its JSON rather than a guess.
 */
function definitionLines(name: string, definition: unknown): Array<[string, string]> {
  const columns = isRecord(definition) ? columnsText(definition["columns"]) : null;
  if (!isRecord(definition) || columns === null) return [["name", name], ["definition", cell(definition)]];
  const primaryKey = definition["primaryKey"];
  const bucketKey = definition["bucketKey"];
  const partitionBy = definition["partitionBy"];
  const lines: Array<[string, string]> = [
    ["name", name],
    ["kind", isStringList(primaryKey) ? "primary-key" : "log"],
    ["columns", columns],
    ["primary key", isStringList(primaryKey) ? primaryKey.join(", ") : "none (rows are appended)"],
    ["bucket key", isStringList(bucketKey) ? bucketKey.join(", ") : "none (a row's bucket is the hash of the whole row)"],
    ["buckets", cell(definition["buckets"])],
  ];
  if (partitionBy !== undefined && partitionBy !== null) lines.push(["partition by", cell(partitionBy)]);
  return lines;
}

/** A partitioned table's rows lead with the partition value. */
function partitionColumn(buckets: readonly { partition?: string | number }[]): { columns: { header: string }[]; cells: (b: { partition?: string | number }) => string[] } {
  if (!buckets.some((b) => b.partition !== undefined)) return { columns: [], cells: () => [] };
  return { columns: [{ header: "PARTITION" }], cells: (b) => [cell(b.partition)] };
}

/** `tiered`: the Iceberg copy's snapshot and how far it is behind (docs/tiering.md); nothing from an older server. */
function tieredLines(answer: TableAnswer): Array<[string, string]> {
  const tiered = answer.tiered;
  if (tiered === undefined) return [];
  if (tiered === null) return [["tiered", `never ('mink table tier ${answer.name}')`]];
  const snapshot = tiered.snapshotId === null ? "no snapshot yet" : `snapshot ${tiered.snapshotId}`;
  const lag =
    tiered.lagRecords === null ? "lag unknown (a leader did not answer)" : tiered.lagRecords === 0 ? "up to date" : `${count(tiered.lagRecords, "record")} behind${tiered.lagMs === null ? "" : `, for ${formatSeconds(tiered.lagMs)}`}`;
  return [
    ["tiered", `${snapshot} (version ${tiered.version}), ${lag}`],
    ["metadata", tiered.metadataKey],
  ];
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function bucketsTable(answer: TableAnswer): string {
  const partition = partitionColumn(answer.buckets);
  const tiered = answer.tiered !== undefined && answer.tiered !== null;
  return formatTable(
    [
      ...partition.columns,
      { header: "BUCKET", align: "right" },
      { header: "LEADER" },
      { header: "EPOCH", align: "right" },
      { header: "NEXT OFFSET" },
      { header: "ROWS", align: "right" },
      { header: "SNAPSHOT" },
      ...(tiered ? [{ header: "TIERED", align: "right" as const }] : []),
    ],
    answer.buckets.map((b) => [...partition.cells(b), cell(b.bucket), cell(b.leader), cell(b.leaderEpoch), cell(b.nextOffset), cell(b.rows), cell(b.snapshotOffset), ...(tiered ? [cell(b.tieredOffset ?? null)] : [])]),
  );
}

export async function tablesCommand(context: CommandContext): Promise<void> {
  const answer = await context.client.tables();
  if (context.json) return printJson(context, answer);
  if (answer.tables.length === 0) return context.out("no tables\n");
  // The partitions column only when some table is partitioned.
  const partitioned = answer.tables.some((table) => typeof table.partitions === "number");
  const partitions = partitioned ? [{ header: "PARTITIONS", align: "right" as const }] : [];
  // The tiering column only when some table was tiered (docs/tiering.md): its version and how long ago.
  const tiered = answer.tables.some((table) => table.tiered !== undefined && table.tiered !== null);
  const tieredCell = (table: TablesAnswer["tables"][number]): string => (table.tiered ? `v${table.tiered.version}, ${formatSeconds(table.tiered.ageMs)} ago` : "-");
  context.out(
    formatTable(
      [{ header: "NAME" }, { header: "KIND" }, { header: "BUCKETS", align: "right" }, ...partitions, ...(tiered ? [{ header: "TIERED" }] : [])],
      answer.tables.map((table) => [table.name, table.kind, cell(table.buckets), ...(partitioned ? [cell(table.partitions ?? null)] : []), ...(tiered ? [tieredCell(table)] : [])]),
    ),
  );
}

export async function tableCommand(context: CommandContext, name: string): Promise<void> {
  const answer = await context.client.table(name);
  if (context.json) return printJson(context, answer);
  context.out(formatKeyValues([...definitionLines(answer.name, answer.definition), ...tieredLines(answer)]));
  context.out("\n");
  context.out(bucketsTable(answer));
}

/** The buckets whose snapshot failed: an error other than NOT_LOADED or LOG_TABLE. */
function failedBuckets(answer: TableSnapshotAnswer): TableSnapshotAnswer["buckets"] {
  return answer.buckets.filter((b) => b.error !== null && b.error !== NOT_LOADED && b.error !== LOG_TABLE);
}

export async function tableTierCommand(context: CommandContext, name: string): Promise<void> {
  const answer = await context.client.tierTable(name);
  if (context.json) printJson(context, answer);
  else {
    const what = answer.committed ? `committed snapshot ${String(answer.snapshotId)}` : answer.snapshotId === null ? "nothing to tier yet" : `nothing new since snapshot ${String(answer.snapshotId)}`;
    context.out(`tiering of ${answer.table}: ${what} (${count(answer.rows, "row")}, ${count(answer.deletes, "delete")}); metadata ${answer.metadataKey}\n`);
    if (answer.more) context.out("more changelog than one round takes (TIERING_MAX_ROUND_BYTES): run it again\n");
    const buckets = answer.buckets.map((b) => ({ ...b, partition: b.partition ?? undefined }));
    const partition = partitionColumn(buckets);
    context.out(
      formatTable(
        [...partition.columns, { header: "BUCKET", align: "right" }, { header: "FROM", align: "right" }, { header: "TO", align: "right" }, { header: "ERROR" }],
        buckets.map((b) => [...partition.cells(b), cell(b.bucket), cell(b.fromOffset), cell(b.toOffset), cell(b.error)]),
      ),
    );
  }
  const failed = answer.buckets.filter((b) => b.error !== null);
  if (failed.length > 0) {
    throw new CommandFailed(`${count(failed.length, "bucket")} of ${answer.table} not read this round (${failed.map((b) => `bucket ${b.bucket}: ${b.error ?? ""}`).join(", ")})`);
  }
}

export async function tableSnapshotCommand(context: CommandContext, name: string): Promise<void> {
  const answer = await context.client.snapshotTable(name);
  if (context.json) printJson(context, answer);
  else {
    const taken = answer.buckets.filter((b) => b.coveredOffset !== null).length;
    context.out(`snapshot of ${answer.table}: ${taken} of ${count(answer.buckets.length, "bucket")} snapshotted\n`);
    context.out(
      formatTable(
        [...partitionColumn(answer.buckets).columns, { header: "BUCKET", align: "right" }, { header: "COVERED OFFSET" }, { header: "ERROR" }],
        answer.buckets.map((b) => [...partitionColumn(answer.buckets).cells(b), cell(b.bucket), cell(b.coveredOffset), cell(b.error)]),
      ),
    );
  }
  const failed = failedBuckets(answer);
  if (failed.length > 0) {
    const which = failed.map((b) => `bucket ${b.bucket}: ${b.error ?? ""}`).join(", ");
    throw new CommandFailed(`${count(failed.length, "bucket")} of ${answer.table} not snapshotted (${which})`);
  }
}
