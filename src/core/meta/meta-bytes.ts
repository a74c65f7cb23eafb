// The metadata bytes a MetaLog holds for the clients' strings (docs/limits.md, "Memory budgets"): every
// stream's name and configuration and every table's definition, as UTF-8. A stream's fixed cost (its
// record, map entries) is bounded by MAX_STREAMS; these strings are what a client chooses the size of, up to
// 1 KiB of name and 16 KiB of configuration a stream, so they have a budget of their own (MAX_META_BYTES).
// UTF-8 length is an upper bound on what V8 holds for the same text (one byte per Latin-1 code unit, two
// per other code unit, four per surrogate pair). Pure: the service keeps the running total.
import { utf8Length } from "../tables/checksum.ts";
import type { Touched } from "./view.ts";
import type { MetaState, StreamRecord } from "./state.ts";
import type { TableRecord } from "./table-records.ts";

/** A stream's name and configuration, in UTF-8 bytes. */
function streamMetaBytes(record: Pick<StreamRecord, "name" | "config">): number {
  return utf8Length(record.name) + utf8Length(JSON.stringify(record.config));
}

/** Definitions are immutable values shared between states: each is measured once. */
const definitionBytes = new WeakMap<object, number>();

/** A table's definition (its bucket streams are counted as streams), in UTF-8 bytes. */
function tableMetaBytes(table: TableRecord): number {
  const definition = table.definition;
  if (typeof definition !== "object" || definition === null) return utf8Length(JSON.stringify(definition));
  const known = definitionBytes.get(definition);
  if (known !== undefined) return known;
  const bytes = utf8Length(JSON.stringify(definition));
  definitionBytes.set(definition, bytes);
  return bytes;
}

/** Every table's definition bytes (at most MAX_TABLES of them: the caller may sum them on each CreateTable). */
export function tableDefinitionBytes(state: MetaState): number {
  let bytes = 0;
  for (const table of state.tables.values()) bytes += tableMetaBytes(table);
  return bytes;
}

/** Every stream's and table's bytes: once, when a log is loaded. */
export function metaBytesOf(state: MetaState): number {
  let bytes = 0;
  for (const record of state.streams.values()) bytes += streamMetaBytes(record);
  for (const table of state.tables.values()) bytes += tableMetaBytes(table);
  return bytes;
}

/** How the bytes changed from `before` to `after`, looking only at what the change touched. */
export function metaBytesDelta(before: MetaState, after: MetaState, touched: Touched): number {
  let delta = 0;
  for (const id of touched.streams ?? []) {
    const was = before.streams.get(id);
    const is = after.streams.get(id);
    if (was === is || (was?.name === is?.name && was?.config === is?.config)) continue;
    delta += (is === undefined ? 0 : streamMetaBytes(is)) - (was === undefined ? 0 : streamMetaBytes(was));
  }
  for (const name of touched.tables ?? []) {
    const was = before.tables.get(name);
    const is = after.tables.get(name);
    if (was?.definition === is?.definition) continue;
    delta += (is === undefined ? 0 : tableMetaBytes(is)) - (was === undefined ? 0 : tableMetaBytes(was));
  }
  return delta;
}
