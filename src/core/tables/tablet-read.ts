// Lookups, prefix scans and read-your-writes over the applied tablet only (docs/tables.md, table
// R): nothing here reads pending batches, so no read sees an unacknowledged row.
import { okResult, rejectResult, type Row, type TableResult } from "./changelog.ts";
import { compareKeys, type Tablet } from "./tablet.ts";

/** A bound on keys in one lookup request. */
export const MAX_LOOKUP_KEYS = 1_000;
/** A bound on rows in one page of a prefix scan. */
export const MAX_SCAN_LIMIT = 1_000;

/** R1-R2: one answer per requested key, in the order of the request (answer i is for key i), null when missing. */
export function lookup(tablet: Tablet, keys: readonly string[]): TableResult<readonly (Row | null)[]> {
  if (keys.length > MAX_LOOKUP_KEYS) {
    return rejectResult("too_large", "too many keys in one lookup", { limit: "MAX_LOOKUP_KEYS", max: MAX_LOOKUP_KEYS });
  }
  return okResult(keys.map((key) => tablet.rows.get(key) ?? null));
}

export interface ScanPage {
  readonly rows: readonly { readonly key: string; readonly row: Row }[];
  /** The `after` of the next page, or null when this page is the last. */
  readonly cursor: string | null;
}

/** R3-R6: rows whose encoded key starts with `prefix`, in key order, strictly after `after`, at most `limit`. */
export function prefixScan(tablet: Tablet, prefix: string, limit: number, after: string | null): TableResult<ScanPage> {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SCAN_LIMIT) {
    return rejectResult("invalid", `limit must be an integer from 1 to ${MAX_SCAN_LIMIT}`, { limit: "MAX_SCAN_LIMIT", max: MAX_SCAN_LIMIT });
  }
  const keys = [...tablet.rows.keys()]
    .filter((key) => key.startsWith(prefix) && (after === null || compareKeys(key, after) > 0))
    .sort(compareKeys);
  const page = keys.slice(0, limit);
  const rows = page.map((key) => ({ key, row: tablet.rows.get(key)! }));
  return okResult({ rows, cursor: keys.length > limit ? page[page.length - 1]! : null });
}

/** R7: a read with `minOffset` may answer once the bucket has applied every record below it. */
export function ready(appliedOffset: number, minOffset: number): boolean {
  return appliedOffset >= minOffset;
}
