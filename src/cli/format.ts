// Output for people: aligned tables, key/value blocks and the drain and rebalance progress. Pure string functions.

export interface Column {
  readonly header: string;
  /** Numbers read best right-aligned. */
  readonly align?: "left" | "right";
}

/** Columns padded to their widest cell, two spaces apart, no trailing spaces; one line per row. */
export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) => Math.max(column.header.length, ...rows.map((row) => (row[index] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? "";
        const width = widths[index] ?? 0;
        return column.align === "right" ? cell.padStart(width) : cell.padEnd(width);
      })
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...rows.map(line)].map((text) => `${text}\n`).join("");
}

/** `key:  value` lines with the values aligned. */
export function formatKeyValues(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([key]) => key.length + 1));
  return pairs.map(([key, value]) => `${`${key}:`.padEnd(width)}  ${value}\n`).join("");
}

/** A value for a table cell or a key/value line: null and undefined as `-`, objects as compact JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

/**
 * `[#########...........]  3/7`: `done` of `total` as a bar `width` characters wide inside the brackets.
 * A total of 0 is a full bar (nothing to do is done); `done` is clamped to [0, total].
 */
export function progressBar(done: number, total: number, width = 30): string {
  const safeTotal = Math.max(0, total);
  const safeDone = Math.min(Math.max(0, done), safeTotal);
  const filled = safeTotal === 0 ? width : Math.floor((safeDone / safeTotal) * width);
  const counter = `${safeDone}/${safeTotal}`.padStart(String(safeTotal).length * 2 + 1);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${counter}`;
}

export interface DrainSnapshot {
  readonly nodeId: string;
  /** Streams assigned to the node when the drain began (grows if more turn up). */
  readonly total: number;
  readonly remaining: number;
  readonly transferring: number;
  /** Transfers pending to the node (begun before it drained): they land there, then move away. */
  readonly incoming: number;
}

/** The progress line for a drain: the bar on a terminal, a plain sentence otherwise. */
export function drainProgressLine(snapshot: DrainSnapshot, tty: boolean): string {
  const moved = snapshot.total - snapshot.remaining;
  const arriving = snapshot.incoming > 0 ? `, ${snapshot.incoming} arriving` : "";
  if (tty) {
    return `draining ${snapshot.nodeId} ${progressBar(moved, snapshot.total)} streams moved, ${snapshot.transferring} transferring${arriving}`;
  }
  return `drain ${snapshot.nodeId}: ${moved}/${snapshot.total} streams moved, ${snapshot.remaining} remaining, ${snapshot.transferring} transferring${arriving}`;
}

export interface RebalanceSnapshot {
  /** Transfers the rebalance began so far. */
  readonly begun: number;
  /** Transfers pending in the cluster now (any cause). */
  readonly pending: number;
  /** Transfers of the current plan not begun yet. */
  readonly toBegin: number;
  /** Streams of nodes that are not live, waiting for the coordinator. */
  readonly orphans: number;
}

/**
 * The progress line for a rebalance: moves done of moves known (begun so far plus those still to begin). A
 * move is done once no transfer is pending for it; transfers pending for other reasons count as not done,
 * so the count is never ahead of the truth.
 */
export function rebalanceProgressLine(snapshot: RebalanceSnapshot, tty: boolean): string {
  const total = snapshot.begun + snapshot.toBegin;
  const done = Math.max(0, snapshot.begun - snapshot.pending);
  const orphans = snapshot.orphans > 0 ? `, ${count(snapshot.orphans, "orphan")} waiting for the coordinator` : "";
  if (tty) return `rebalancing ${progressBar(done, total)} moves done, ${snapshot.pending} transferring${orphans}`;
  return `rebalance: ${Math.min(done, total)}/${total} moves done, ${snapshot.pending} transferring, ${snapshot.toBegin} to begin${orphans}`;
}

/** A load (streams per slot) with two decimals. */
export function load(value: number): string {
  return value.toFixed(2);
}

/** Rewrites the current terminal line: carriage return, the text, then erase to the end of the line. */
export function overwriteLine(text: string): string {
  return `\r${text}\u001b[K`;
}

/**
 * The progress of a command that waits (drain, rebalance): on a terminal one line redrawn in place, else a
 * line each time it changes. `end` finishes a redrawn line.
 */
export class ProgressPrinter {
  private last = "";
  private drawn = false;

  constructor(
    private readonly out: (text: string) => void,
    private readonly tty: boolean,
  ) {}

  show(line: string): void {
    if (this.tty) {
      this.out(overwriteLine(line));
      this.drawn = true;
    } else if (line !== this.last) {
      this.out(`${line}\n`);
    }
    this.last = line;
  }

  end(): void {
    if (this.drawn) this.out("\n");
  }
}

/** `1 stream`, `3 streams`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
