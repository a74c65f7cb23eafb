// JSON values (stream configuration is opaque JSON to the log) and a structural equality that ignores key
// order, so "create again with the same configuration" compares meaning, not spelling.

export type JsonValue = null | boolean | number | string | JsonArray | JsonObject;

// Interfaces, not type aliases: the recursion stays lazy, which keeps RPC stub types (Rpc.Provider) shallow.
type JsonArray = readonly JsonValue[];

export interface JsonObject {
  readonly [key: string]: JsonValue;
}

export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  if (depth > 32) return false;
  if (value === null || typeof value === "boolean" || typeof value === "string") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (typeof value === "object") {
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return false;
    return Object.values(value).every((item) => isJsonValue(item, depth + 1));
  }
  return false;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && isJsonValue(value);
}

export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item: JsonValue, i: number) => jsonEqual(item, b[i] as JsonValue));
  }
  const aObject = a as JsonObject;
  const bObject = b as JsonObject;
  const aKeys = Object.keys(aObject);
  if (aKeys.length !== Object.keys(bObject).length) return false;
  return aKeys.every((key) => key in bObject && jsonEqual(aObject[key] as JsonValue, bObject[key] as JsonValue));
}
