// The record format of a bucket's stream (docs/tables.md, table C): one JSON message per record,
// `{"op": "+I" | "-U" | "+U" | "-D", "row": {...}}`. Log tables write `+I` only. The decoder is the gate for
// everything read back from a stream (replay after a restart, restore), so it refuses anything else.
import { domainError, type DomainError } from "../errors.ts";
import { isJsonObject, type JsonObject } from "../meta/json.ts";
import type { Result } from "../result.ts";

/** A row as this layer sees it: a JSON object already validated against its table by the caller. */
export type Row = JsonObject;

/** @public The closed set of changelog operations, as a value. */
export const CHANGE_OPS = ["+I", "-U", "+U", "-D"] as const;
type ChangeOp = (typeof CHANGE_OPS)[number];

export interface ChangeRecord {
  readonly op: ChangeOp;
  readonly row: Row;
}

/** A record with the encoded primary key it concerns (null in a log table, which has no key). The key is not
 * on the wire: a reader derives it from the row with the table's key encoding. */
export interface KeyedRecord {
  readonly key: string | null;
  readonly record: ChangeRecord;
}

/** A table rule's answer (src/core/result.ts). */
export type TableResult<T> = Result<T>;

export function okResult<T>(value: T): TableResult<T> {
  return { ok: true, value };
}

export function rejectResult<T>(
  code: DomainError["code"],
  message: string,
  details?: DomainError["details"],
): TableResult<T> {
  return { ok: false, error: domainError(code, message, details) };
}

function isChangeOp(value: unknown): value is ChangeOp {
  return typeof value === "string" && (CHANGE_OPS as readonly string[]).includes(value);
}

export function encodeChangeRecord(record: ChangeRecord): string {
  return JSON.stringify({ op: record.op, row: record.row });
}

/** C1-C5: a message is an object with exactly `op` (a known op) and `row` (a JSON object). */
export function decodeChangeRecord(message: unknown): TableResult<ChangeRecord> {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return rejectResult("invalid", "a changelog record is a JSON object");
  }
  const fields = Object.keys(message);
  if (fields.length !== 2 || !fields.includes("op") || !fields.includes("row")) {
    return rejectResult("invalid", "a changelog record has exactly the fields op and row");
  }
  const { op, row } = message as { op: unknown; row: unknown };
  if (!isChangeOp(op)) return rejectResult("invalid", "unknown changelog op", { op: String(op) });
  if (!isJsonObject(row)) return rejectResult("invalid", "a changelog row is a JSON object");
  return okResult({ op, row });
}

/** Decodes the text of one message (what a stream read hands back). */
export function parseChangeRecord(text: string): TableResult<ChangeRecord> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return rejectResult("invalid", "a changelog record is not JSON");
  }
  return decodeChangeRecord(parsed);
}
