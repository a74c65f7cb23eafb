// A bucket's changelog replayed by the checker, trusting nothing in mink: the images rules (a -U or -D
// carries the row its key held, a -U is followed by the +U of the same key, a +I only on a missing key)
// and the state of every key at every record boundary, so a read or a no-op answer can be placed.
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
