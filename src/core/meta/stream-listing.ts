// The stream listing (GET /admin/streams, `mink streams`; docs/operations.md): which names one page of the
// metadata log's streams holds, decided over the names in code-unit order (JavaScript's `<` on strings)
// that the state's stream table yields from a starting name (an index in SQLite, a sorted copy in memory),
// so a page reads its own names and the one after it, never the whole list.
import { fail, ok, type Parsed } from "../protocol/parsed.ts";
import { RESERVED_SEGMENT } from "../protocol/headers.ts";
import { MAX_STREAM_NAME_LENGTH } from "../protocol/stream-name.ts";
import type { MetaState } from "./state.ts";
import { streamView, type StreamView } from "./view.ts";

const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/** One page asked for: names starting with `prefix` ("" = every name), after `after` (exclusive; null: from the first). */
export interface StreamListQuery {
  readonly prefix: string;
  readonly after: string | null;
  readonly limit: number;
}

export interface NamePage {
  readonly names: readonly string[];
  /** The `after` of the next page: the page's last name when a matching name follows it, else null. */
  readonly next: string | null;
}

/** One listed stream: its record with the pending transfer inlined, and its owner's address. */
export interface ListedStream {
  readonly stream: StreamView;
  readonly ownerAddress: string | null;
}

export interface StreamListing {
  readonly version: number;
  readonly streams: readonly ListedStream[];
  readonly next: string | null;
}

/**
 * Table LQ — the query string of GET /admin/streams (each value already percent-decoded; null: absent):
 * | row | input                                                          | result                   |
 * | LQ1 | prefix absent or ""                                            | prefix "" (every stream) |
 * | LQ2 | prefix or after longer than MAX_STREAM_NAME_LENGTH, or with a control character | invalid |
 * | LQ3 | after absent or ""                                             | after null (from the first) |
 * | LQ4 | limit absent                                                   | DEFAULT_LIST_LIMIT       |
 * | LQ5 | limit not decimal digits, or outside 1..MAX_LIST_LIMIT         | invalid                  |
 */
export function parseStreamListQuery(raw: { readonly prefix: string | null; readonly after: string | null; readonly limit: string | null }): Parsed<StreamListQuery> {
  for (const [field, value] of [
    ["prefix", raw.prefix],
    ["after", raw.after],
  ] as const) {
    if (value === null) continue;
    if (value.length > MAX_STREAM_NAME_LENGTH) return fail("invalid", `${field} must be at most ${MAX_STREAM_NAME_LENGTH} characters`);
    if (/[\u0000-\u001f\u007f]/.test(value)) return fail("invalid", `${field} must not contain control characters`);
  }
  let limit = DEFAULT_LIST_LIMIT;
  if (raw.limit !== null) {
    limit = /^\d{1,7}$/.test(raw.limit) ? Number(raw.limit) : NaN;
    if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) return fail("invalid", `limit must be a whole number from 1 to ${MAX_LIST_LIMIT} (got '${raw.limit}')`);
  }
  return ok({ prefix: raw.prefix ?? "", after: raw.after === null || raw.after === "" ? null : raw.after, limit });
}

/** Names in code-unit order from a starting name on (a StreamTable is one). */
export interface NameSource {
  namesFrom(from: string): Iterable<string>;
}

/**
 * Table LS — one page over the names of `source` (distinct, in code-unit order):
 * | row | rule                                                                                   |
 * | LS1 | only names that start with `prefix` (every name for "")                                |
 * | LS2 | only names > `after` (exclusive: the name `after` itself is never on the page)         |
 * | LS3 | the first `limit` such names, in order                                                 |
 * | LS4 | `next` is the page's last name when another matching name follows it, else null: a page of exactly the last `limit` names ends the listing |
 * | LS5 | `after` outside the prefix's range: before it starts at the range's first name, after it the page is empty (next null) |
 * | LS6 | names under the reserved first segment `__ds/` (table buckets) are never listed (isListedName) |
 * Names with a prefix are contiguous in sorted order, so the page starts at max(prefix, after) and stops
 * at the first name without the prefix: it reads at most `limit` + 1 listed names, and the reserved ones
 * in between.
 */
export function pageOfNames(source: NameSource, query: StreamListQuery): NamePage {
  if (!Number.isSafeInteger(query.limit) || query.limit < 1) throw new RangeError("limit must be a positive integer");
  const from = query.after !== null && query.after > query.prefix ? query.after : query.prefix;
  const names: string[] = [];
  for (const name of source.namesFrom(from)) {
    if (!name.startsWith(query.prefix)) break;
    if (name === query.after || !isListedName(name)) continue;
    if (names.length === query.limit) return { names, next: names.at(-1) ?? null };
    names.push(name);
  }
  return { names, next: null };
}

/** LS6: a table bucket's stream (`__ds/table/...`) is the table's, not a stream of the stream API. */
function isListedName(name: string): boolean {
  return !name.startsWith(`${RESERVED_SEGMENT}/`);
}

/** Code-unit order (what `<` on strings means); never locale order. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One page of the state's streams: the names (table LS) and their records. */
export function listStreams(state: MetaState, query: StreamListQuery): StreamListing {
  const page = pageOfNames(state.streams, query);
  const streams: ListedStream[] = [];
  for (const name of page.names) {
    const id = state.streams.idByName(name);
    const record = id === undefined ? undefined : state.streams.get(id);
    if (record === undefined) throw new Error(`the stream table lists ${name}, which it does not hold`);
    const owner = record.owner === null ? undefined : state.nodes.get(record.owner);
    streams.push({ stream: streamView(state, record), ownerAddress: owner?.addr ?? null });
  }
  return { version: state.version, streams, next: page.next };
}
