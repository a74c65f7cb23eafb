// Prints the benchmark's one table: a row per figure, a column per server; errors and failure details are
// footnoted below it in full rather than cut to fit.

export type Cell = { text: string; note?: string } | { error: string };

export interface Row {
  label: string;
  key: string;
}

export function printTable(rows: readonly Row[], columns: readonly { title: string; cells: ReadonlyMap<string, Cell> }[]): void {
  const notes: string[] = [];
  /** The footnote number of `text`, shared by cells with the same text. */
  const noteNumber = (text: string): number => {
    const index = notes.indexOf(text);
    return index >= 0 ? index + 1 : notes.push(text);
  };
  const render = (cell: Cell | undefined): string => {
    if (cell === undefined) return "-";
    if ("error" in cell) return `ERROR [${noteNumber(cell.error)}]`;
    return cell.note === undefined ? cell.text : `${cell.text} [${noteNumber(cell.note)}]`;
  };
  const lines: string[][] = [["", ...columns.map((column) => column.title)]];
  for (const row of rows) lines.push([row.label, ...columns.map((column) => render(column.cells.get(row.key)))]);
  const widths = lines[0]!.map((_, col) => Math.max(...lines.map((line) => line[col]!.length)));
  for (const line of lines) console.log(line.map((text, col) => text.padEnd(widths[col]!)).join("  ").trimEnd());
  notes.forEach((note, i) => console.log(`[${i + 1}] ${note}`));
}
