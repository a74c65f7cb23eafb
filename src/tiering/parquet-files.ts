// Parquet files of a tiering round (docs/tiering.md), written with hyparquet-writer: a data file of tiered
// rows, and an equality-delete file of primary-key values. Every column carries its Iceberg field id (engines
// match Parquet columns to the table schema by id) and the file names its Iceberg schema in
// `iceberg.schema`, as Iceberg's own writers do. Snappy-compressed, the library's default.
import { ByteWriter, parquetWrite } from "hyparquet-writer";
import type { TieredColumn } from "../core/tiering/iceberg-schema.ts";
import type { TieredRow } from "../core/tiering/round-rows.ts";
import type { Row } from "../core/tables/changelog.ts";

type ParquetValue = string | number | bigint | boolean | null;
type SchemaElement = NonNullable<Parameters<typeof parquetWrite>[0]["schema"]>[number];

const PARQUET_TYPE: Readonly<Record<TieredColumn["type"], Pick<SchemaElement, "type" | "converted_type">>> = {
  string: { type: "BYTE_ARRAY", converted_type: "UTF8" },
  long: { type: "INT64" },
  double: { type: "DOUBLE" },
  boolean: { type: "BOOLEAN" },
  int: { type: "INT32" },
};

/** A column's value in a row as Parquet takes it: a json column as its JSON text, a long as a bigint. */
function cellOf(column: TieredColumn, row: TieredRow): ParquetValue {
  const source = column.source;
  if (source.kind === "bucket") return row.bucket;
  if (source.kind === "offset") return BigInt(row.offset);
  return cellOfValue(column, row.values[source.name]);
}

function cellOfValue(column: TieredColumn, value: unknown): ParquetValue {
  if (value === undefined || value === null) return null;
  if (column.source.kind === "column" && column.source.type === "json") return JSON.stringify(value);
  if (column.type === "long") return BigInt(value as number);
  return value as ParquetValue;
}

async function write(columns: readonly TieredColumn[], data: ParquetValue[][], icebergSchema: unknown): Promise<Uint8Array> {
  const writer = new ByteWriter();
  await parquetWrite({
    writer,
    columnData: columns.map((column, i) => ({ name: column.name, data: data[i]!, nullable: !column.required })),
    schema: [
      { name: "table", num_children: columns.length },
      ...columns.map((column) => ({
        name: column.name,
        ...PARQUET_TYPE[column.type],
        repetition_type: column.required ? ("REQUIRED" as const) : ("OPTIONAL" as const),
        field_id: column.id,
      })),
    ],
    kvMetadata: [{ key: "iceberg.schema", value: JSON.stringify(icebergSchema) }],
    createdBy: "mink tiering (hyparquet-writer)",
  });
  return new Uint8Array(writer.getBuffer());
}

/** A data file: every tiered column of every row. */
export function dataFile(columns: readonly TieredColumn[], rows: readonly TieredRow[], icebergSchema: unknown): Promise<Uint8Array> {
  return write(columns, columns.map((column) => rows.map((row) => cellOf(column, row))), icebergSchema);
}

/** An equality-delete file: the key columns (`keyColumns`, a subset of the schema's) of each deleted key. */
export function equalityDeleteFile(keyColumns: readonly TieredColumn[], keys: readonly Row[], icebergSchema: unknown): Promise<Uint8Array> {
  return write(keyColumns, keyColumns.map((column) => keys.map((key) => cellOfValue(column, key[column.name]))), icebergSchema);
}
