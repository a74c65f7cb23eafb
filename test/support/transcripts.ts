// The command blocks a newcomer runs from the README and the docs, as data, so a test can run them against
// `npm run dev` and compare each answer with the one the page shows (test/e2e/readme-transcripts.e2e.test.ts).
//
// In the pages a runnable block is a ```console block right after `<!-- transcript: <session> -->`, where
// the session names the `npm run dev` it runs against: `open` (as started) or `token` (`AUTH_MODE=token`).
// Inside it, a line starting with `$ ` is a command (a line ending in `\` continues it), and the lines up to
// the next command are what it prints, stdout and stderr together:
//
// | Expected line            | Matches                                                           |
// | ------------------------ | ----------------------------------------------------------------- |
// | `...` alone              | any number of lines, none included                                |
// | text with `...` inside   | one line, `...` standing for any text on it                       |
// | `[exit N]`, last line    | the command's exit status is N (without it, the status must be 0) |
// | anything else            | one line, equal once trailing spaces are dropped                  |
//
// Every other ```sh or ```console block in those pages must follow `<!-- not run: <why> -->`, so a new
// block is either run or says why it cannot be (a Cloudflare account, a command that never ends).

/** The pages a newcomer follows, in the order the transcripts run. */
export const TRANSCRIBED_PAGES = ["README.md", "docs/tables.md", "docs/access.md", "docs/deploy.md"] as const;

export interface TranscriptCommand {
  /** The command as bash gets it, continuation lines joined by newlines. */
  readonly command: string;
  readonly expected: readonly string[];
  readonly exitCode: number;
  /** 1-based line of the `$ ` in its page, for failure messages. */
  readonly line: number;
}

export interface Transcript {
  readonly page: string;
  readonly session: string;
  readonly commands: readonly TranscriptCommand[];
}

export interface UnmarkedBlock {
  readonly page: string;
  readonly line: number;
}

const FENCE = /^(\s*)```([a-z]*)\s*$/;
const TRANSCRIPT_MARKER = /^<!-- transcript: ([a-z]+) -->$/;
const NOT_RUN_MARKER = /^<!-- not run: .+ -->$/;
const EXIT_LINE = /^\[exit (\d+)\]$/;
const SHELL_LANGUAGES: ReadonlySet<string> = new Set(["sh", "bash", "console", "shell"]);

interface Fenced {
  readonly language: string;
  /** 1-based line of the first line inside the fence. */
  readonly firstLine: number;
  readonly lines: readonly string[];
  /** The last non-blank line before the fence. */
  readonly before: string;
}

function fencedBlocks(markdown: string): Fenced[] {
  const lines = markdown.split("\n");
  const blocks: Fenced[] = [];
  let before = "";
  for (let at = 0; at < lines.length; at++) {
    const open = FENCE.exec(lines[at]!);
    if (open === null) {
      if (lines[at]!.trim() !== "") before = lines[at]!.trim();
      continue;
    }
    // A block inside a list item is indented; its lines lose that indentation.
    const indent = open[1]!;
    const end = lines.findIndex((line, index) => index > at && line.trimStart().startsWith("```"));
    if (end < 0) throw new Error(`an unclosed code block at line ${at + 1}`);
    const inside = lines.slice(at + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line));
    blocks.push({ language: open[2]!, firstLine: at + 2, lines: inside, before });
    before = "";
    at = end;
  }
  return blocks;
}

function commandsOf(block: Fenced, page: string): TranscriptCommand[] {
  const commands: TranscriptCommand[] = [];
  let at = 0;
  while (at < block.lines.length) {
    const first = block.lines[at]!;
    if (!first.startsWith("$ ")) throw new Error(`${page}:${block.firstLine + at}: a transcript line before any command: ${first}`);
    const line = block.firstLine + at;
    const parts = [first.slice(2)];
    while (parts.at(-1)!.endsWith("\\") && at + 1 < block.lines.length) parts.push(block.lines[++at]!);
    at++;
    const expected: string[] = [];
    while (at < block.lines.length && !block.lines[at]!.startsWith("$ ")) expected.push(block.lines[at++]!);
    while (expected.length > 0 && expected.at(-1)!.trim() === "") expected.pop();
    const exit = expected.length > 0 ? EXIT_LINE.exec(expected.at(-1)!) : null;
    if (exit !== null) expected.pop();
    commands.push({ command: parts.join("\n"), expected, exitCode: exit === null ? 0 : Number(exit[1]), line });
  }
  return commands;
}

/** The page's transcripts in order, and its shell blocks that are neither a transcript nor marked as not run. */
export function readTranscripts(page: string, markdown: string): { transcripts: Transcript[]; unmarked: UnmarkedBlock[] } {
  const transcripts: Transcript[] = [];
  const unmarked: UnmarkedBlock[] = [];
  for (const block of fencedBlocks(markdown)) {
    const session = TRANSCRIPT_MARKER.exec(block.before)?.[1];
    if (session !== undefined) {
      if (block.language !== "console") throw new Error(`${page}:${block.firstLine - 1}: a transcript must be a \`\`\`console block`);
      transcripts.push({ page, session, commands: commandsOf(block, page) });
    } else if (SHELL_LANGUAGES.has(block.language) && !NOT_RUN_MARKER.test(block.before)) {
      unmarked.push({ page, line: block.firstLine - 1 });
    }
  }
  return { transcripts, unmarked };
}

function lineMatches(expected: string, actual: string): boolean {
  const pieces = expected.trimEnd().split("...");
  if (pieces.length === 1) return expected.trimEnd() === actual;
  const pattern = pieces.map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${pattern}$`, "s").test(actual);
}

/** Whether `actual` (already split into lines, trailing spaces dropped) is what `expected` shows. */
export function outputMatches(expected: readonly string[], actual: readonly string[]): boolean {
  const memo = new Map<string, boolean>();
  const from = (e: number, a: number): boolean => {
    const key = `${e},${a}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (e === expected.length) result = a === actual.length;
    else if (expected[e]!.trim() === "...") result = from(e + 1, a) || (a < actual.length && from(e, a + 1));
    else result = a < actual.length && lineMatches(expected[e]!, actual[a]!) && from(e + 1, a + 1);
    memo.set(key, result);
    return result;
  };
  return from(0, 0);
}

/** A command's output as the comparison sees it: lines without trailing spaces, no blank lines at the end. */
export function outputLines(text: string): string[] {
  const lines = text.replace(/\r/g, "").split("\n").map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines;
}
