// A mink table as an Apache Iceberg table (docs/tiering.md, table TS): its columns with Iceberg field ids and
// types, the two columns mink adds for itself (the bucket and the changelog offset of each row), the identity
// partition spec of a partitioned table, and the equality-delete key of a primary-key table. Pure: the
// definition in, JSON shapes of the Iceberg spec (format version 2) out.
import type { ColumnType, TableDefinition } from "../tables/definition.ts";

/** The Iceberg primitive types mink's columns map to (TS1). */
export type IcebergType = "string" | "long" | "double" | "boolean" | "int";

/** Where a tiered column's values come from. */
type ColumnSource =
  | { readonly kind: "column"; readonly name: string; readonly type: ColumnType }
  | { readonly kind: "bucket" }
  | { readonly kind: "offset" };

export interface TieredColumn {
  /** The Iceberg field id: user columns 1..n in definition order, then the bucket and the offset. */
  readonly id: number;
  readonly name: string;
  readonly type: IcebergType;
  readonly required: boolean;
  readonly source: ColumnSource;
}

/** The field id of the partition field (Iceberg numbers partition fields from 1000). */
export const PARTITION_FIELD_ID = 1000;

const ICEBERG_TYPE: Readonly<Record<ColumnType, IcebergType>> = {
  string: "string",
  int: "long",
  float: "double",
  bool: "boolean",
  // The JSON text: every engine reads a string, and the value round-trips exactly.
  json: "string",
};

/**
 * TS1-TS3: the table's columns, then `_bucket` (int) and `_offset` (long). A user column may itself be named
 * `_bucket` or `_offset` (names may start with `_`): mink's column then takes one more leading `_` until the
 * name is free, so a definition always maps to the same distinct names.
 */
export function tieredColumns(definition: TableDefinition): TieredColumn[] {
  const columns: TieredColumn[] = definition.columns.map((column, index) => ({
    id: index + 1,
    name: column.name,
    type: ICEBERG_TYPE[column.type],
    required: !column.nullable,
    source: { kind: "column", name: column.name, type: column.type },
  }));
  const taken = new Set(columns.map((column) => column.name));
  const free = (base: string): string => {
    let name = base;
    while (taken.has(name)) name = `_${name}`;
    taken.add(name);
    return name;
  };
  columns.push({ id: columns.length + 1, name: free("_bucket"), type: "int", required: true, source: { kind: "bucket" } });
  columns.push({ id: columns.length + 1, name: free("_offset"), type: "long", required: true, source: { kind: "offset" } });
  return columns;
}

/** The Iceberg schema (schema id 0); a primary-key table names its key as the identifier fields (TS4). */
export function icebergSchema(definition: TableDefinition): Record<string, unknown> {
  const columns = tieredColumns(definition);
  return {
    type: "struct",
    "schema-id": 0,
    fields: columns.map((column) => ({ id: column.id, name: column.name, required: column.required, type: column.type })),
    ...(definition.primaryKey === null ? {} : { "identifier-field-ids": equalityFieldIds(definition) }),
  };
}

/** TS4: the field ids an equality delete of a primary-key table matches on (its key columns); [] for a log table. */
export function equalityFieldIds(definition: TableDefinition): number[] {
  if (definition.primaryKey === null) return [];
  return definition.primaryKey.map((name) => definition.columns.findIndex((column) => column.name === name) + 1);
}

/** TS5: an identity partition on the partition column, or an unpartitioned spec (spec id 0 either way). */
export function partitionSpec(definition: TableDefinition): Record<string, unknown> {
  if (definition.partitionBy === null) return { "spec-id": 0, fields: [] };
  const sourceId = definition.columns.findIndex((column) => column.name === definition.partitionBy) + 1;
  return { "spec-id": 0, fields: [{ "source-id": sourceId, "field-id": PARTITION_FIELD_ID, name: definition.partitionBy, transform: "identity" }] };
}

/** The partition column's Iceberg type, or null for a table without partitions. */
export function partitionType(definition: TableDefinition): IcebergType | null {
  const column = definition.columns.find((c) => c.name === definition.partitionBy);
  return column === undefined ? null : ICEBERG_TYPE[column.type];
}
