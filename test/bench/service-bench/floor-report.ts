// bench:service --floor's tables: the runtime's floor for an append (append-floor.ts) beside mink and the
// reference server, on the medians of the same interleaved runs, and how far each is from the floor.
import { cellOf, figureRows, medianFigure, type FigureRow, type Runs } from "./report.ts";
import type { PhaseParams } from "./phases.ts";
import { printTable, type Cell, type Row } from "./table.ts";

/** A server's column: its title and its runs. */
export interface FloorColumn {
  readonly title: string;
  readonly runs: Runs;
}

/** A ratio column: `over`'s median over `under`'s, per figure. */
export interface RatioColumn {
  readonly title: string;
  readonly over: Runs;
  readonly under: Runs;
}

/** Rows the floor measures: the append phases, without mink's own counters (but with its S3 endpoint's CPU). */
const floorRow = (row: FigureRow): boolean => row.phase !== "sse" && (row.minkOnly !== true || row.figure === "s3CpuMsPerAppend");

/** Rows of the append phases, a column per server and per ratio; a latency row also in round trips when `latencyMs` is set. */
export function printFloor(params: PhaseParams, columns: readonly FloorColumn[], ratios: readonly RatioColumn[], latencyMs?: number): void {
  const figureRowsShown = figureRows(params).filter(floorRow);
  const rows: Row[] = figureRowsShown.map((row) => ({ label: row.label, key: `${row.phase}.${row.figure}` }));
  const cells = columns.map((column) => ({
    title: column.title,
    cells: new Map(figureRowsShown.map((row): [string, Cell] => {
      const cell = cellOf(column.runs, row);
      const median = medianFigure(column.runs, row.phase, row.figure);
      const trips = latencyMs !== undefined && row.roundTrips === true && median !== undefined && "text" in cell ? `, ${(median / latencyMs).toFixed(2)} RT` : "";
      return [`${row.phase}.${row.figure}`, "text" in cell ? { ...cell, text: cell.text + trips } : cell];
    })),
  }));
  const ratioCells = ratios.map((ratio) => ({
    title: ratio.title,
    cells: new Map(figureRowsShown.flatMap((row): [string, Cell][] => {
      const over = medianFigure(ratio.over, row.phase, row.figure);
      const under = medianFigure(ratio.under, row.phase, row.figure);
      if (row.noRatio === true || over === undefined || under === undefined || under === 0) return [];
      return [[`${row.phase}.${row.figure}`, { text: `x${(over / under).toFixed(2)}` }]];
    })),
  }));
  printTable(rows, [...cells, ...ratioCells]);
}
