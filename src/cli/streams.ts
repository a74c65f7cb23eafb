// `mink streams [prefix]`: the streams by name through GET /admin/streams, one page (the command for the
// next one printed last), or with --all every page, bounded.
import type { StreamRow, StreamsPage } from "./admin-answers.ts";
import { MAX_STREAMS_LIMIT, MAX_STREAMS_PAGES } from "./limits.ts";
import type { StreamsListing } from "./option-values.ts";
import type { CommandContext } from "./commands.ts";
import { CommandFailed } from "./errors.ts";
import { cell, formatTable } from "./format.ts";

/** A word as the shell reads it back: as it is when it is only safe characters, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command line that lists the page after `next` with the same prefix, page size and --all. */
function nextCommand(list: StreamsListing, next: string): string {
  const words = ["mink streams"];
  if (list.prefix !== "") words.push(shellWord(list.prefix));
  words.push("--after", shellWord(next));
  if (list.limit !== undefined) words.push("--limit", String(list.limit));
  if (list.all) words.push("--all");
  return words.join(" ");
}

function stateCell(row: StreamRow): string {
  return row.pendingTransfer === null ? row.ownership : `${row.ownership} -> ${row.pendingTransfer.target}`;
}

function tailCell(row: StreamRow): string {
  if (row.tail === null) return "-";
  return row.tail.closed ? `${row.tail.offset} (closed)` : row.tail.offset;
}

function formatStreams(rows: readonly StreamRow[]): string {
  return formatTable(
    [{ header: "NAME" }, { header: "OWNER" }, { header: "EPOCH", align: "right" }, { header: "STATE" }, { header: "BYTES", align: "right" }, { header: "TAIL" }],
    rows.map((row) => [row.name, cell(row.owner), cell(row.epoch), stateCell(row), cell(row.tail?.bytes), tailCell(row)]),
  );
}

export async function streamsCommand(context: CommandContext, list: StreamsListing): Promise<void> {
  const limit = list.limit ?? (list.all ? MAX_STREAMS_LIMIT : undefined);
  const pages: StreamsPage[] = [];
  let after = list.after;
  do {
    const page = await context.client.streams({ prefix: list.prefix, after, limit });
    pages.push(page);
    after = page.next;
  } while (list.all && after !== null && pages.length < MAX_STREAMS_PAGES);
  const last = pages.at(-1);
  const rows = pages.flatMap((page) => page.streams);
  const next = last?.next ?? null;
  if (context.json) {
    // One page: the server's answer as it came; every page: their streams in one, with the last page's version and next.
    context.out(`${JSON.stringify(list.all ? { version: last?.version ?? 0, streams: rows, next } : last, null, 2)}\n`);
  } else if (rows.length === 0) {
    context.out(list.prefix === "" ? "no streams\n" : `no streams under ${shellWord(list.prefix)}\n`);
  } else {
    context.out(formatStreams(rows));
  }
  if (next === null) return;
  if (list.all) {
    throw new CommandFailed(`more streams than ${MAX_STREAMS_PAGES} pages of ${limit ?? ""}: listed the first ${rows.length}; the rest: ${nextCommand(list, next)}`);
  }
  if (!context.json) context.out(`more streams follow: ${nextCommand(list, next)}\n`);
}
