// A bucket's changelog replayed by the checker, trusting nothing in mink: the images rules (a -U or -D
// carries the row its key held, a -U is followed by the +U of the same key, a +I only on a missing key)
// and the state of every key at every record boundary, so a read or a no-op answer can be placed; and the
// step by which each boundary was durable (every record below it in a WAL object that landed).
import type { ChangelogEntry, SimRow } from "./table-history.ts";

export interface Replay {
  /** Breaks of the images rules: the record's index and what is wrong. */
  readonly errors: readonly { readonly index: number; readonly message: string }[];
  /** `positions[i]`: the stream position after the first i records (`positions[0]` is 0). */
  readonly positions: readonly number[];
  /** `states[i]`: every key's row after the first i records. */
  readonly states: readonly ReadonlyMap<string, SimRow>[];
}

/** Rows equal as JSON (field order ignored); null and undefined are both "no row". */
export function sameRow(a: SimRow | null | undefined, b: SimRow | null | undefined): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  return canonical(a) === canonical(b);
}

const canonical = (row: SimRow): string => JSON.stringify(Object.entries(row).sort(([x], [y]) => (x < y ? -1 : 1)));

export function replay(changelog: readonly ChangelogEntry[]): Replay {
  const errors: { index: number; message: string }[] = [];
  const positions = [0];
  let state = new Map<string, SimRow>();
  const states: Map<string, SimRow>[] = [state];
  changelog.forEach((entry, index) => {
    const error = imageError(changelog, index, state);
    if (error !== null) errors.push({ index, message: error });
    if (entry.op === "+I" || entry.op === "+U" || entry.op === "-D") {
      state = new Map(state);
      if (entry.op === "-D") state.delete(entry.row.id);
      else state.set(entry.row.id, entry.row);
    }
    positions.push(entry.end);
    states.push(state);
  });
  return { errors, positions, states };
}

function imageError(changelog: readonly ChangelogEntry[], index: number, state: ReadonlyMap<string, SimRow>): string | null {
  const entry = changelog[index]!;
  const held = state.get(entry.row.id) ?? null;
  const holds = held === null ? "nothing" : JSON.stringify(held);
  switch (entry.op) {
    case "+I":
      return held === null ? null : `+I of ${JSON.stringify(entry.row)} while ${entry.row.id} held ${holds}`;
    case "-U": {
      if (!sameRow(held, entry.row)) return `-U carries ${JSON.stringify(entry.row)} while ${entry.row.id} held ${holds}`;
      const next = changelog[index + 1];
      return next?.op === "+U" && next.row.id === entry.row.id ? null : `-U of ${entry.row.id} is not followed by its +U`;
    }
    case "+U": {
      const before = changelog[index - 1];
      return before?.op === "-U" && before.row.id === entry.row.id ? null : `+U of ${JSON.stringify(entry.row)} does not follow a -U of its key`;
    }
    case "-D":
      return sameRow(held, entry.row) ? null : `-D carries ${JSON.stringify(entry.row)} while ${entry.row.id} held ${holds}`;
    default:
      return `unknown op ${entry.op}`;
  }
}

/** The boundaries i (positions[i] within [from, to]) at which `matches(states[i])` holds. */
export function boundariesWhere(replayed: Replay, from: number, to: number, matches: (state: ReadonlyMap<string, SimRow>) => boolean): number[] {
  const found: number[] = [];
  replayed.positions.forEach((position, i) => {
    if (position >= from && position <= to && matches(replayed.states[i]!)) found.push(i);
  });
  return found;
}

/** A WAL record of the bucket's stream that landed, at the step it landed. */
export interface LandedRecord {
  readonly step: number;
  readonly firstOffset: number;
  readonly text: string;
}

/**
 * `durable[i]`: the step by which the first i records had all landed in WAL objects (a record lands with its
 * whole batch). Only landed records that hold exactly the changelog's bytes count; a boundary past every
 * landed record is given step 0 (nothing to say about it).
 */
export function durableSteps(changelog: readonly ChangelogEntry[], replayed: Replay, landed: readonly LandedRecord[]): number[] {
  const text = (from: number, to: number): string =>
    changelog
      .filter((entry) => entry.start >= from && entry.end <= to)
      .map((entry) => `${JSON.stringify({ op: entry.op, row: entry.row })}\n`)
      .join("");
  const firstLanded = new Map<number, number>();
  for (const record of landed) {
    const end = record.firstOffset + Buffer.byteLength(record.text, "utf8");
    if (!replayed.positions.includes(record.firstOffset) || text(record.firstOffset, end) !== record.text) continue;
    firstLanded.set(end, Math.min(firstLanded.get(end) ?? Infinity, record.step));
  }
  const ends = [...firstLanded.keys()].sort((a, b) => a - b);
  const prefix: number[] = [];
  let latest = 0;
  for (const end of ends) prefix.push((latest = Math.max(latest, firstLanded.get(end)!)));
  return replayed.positions.map((position) => {
    if (position === 0) return 0;
    const i = ends.findIndex((end) => end >= position);
    return i < 0 ? 0 : prefix[i]!;
  });
}
