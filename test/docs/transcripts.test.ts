// The transcript format (test/support/transcripts.ts) row by row, and the rule that keeps the newcomer's
// pages honest: every shell block in them is either run by test/e2e/readme-transcripts.e2e.test.ts or says
// why it cannot be.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { outputLines, outputMatches, readTranscripts, TRANSCRIBED_PAGES } from "../support/transcripts.ts";

const ROOT = new URL("../../", import.meta.url);

describe("transcript output matching", () => {
  const rows: [string, string[], string[], boolean][] = [
    ["equal lines match", ["201"], ["201"], true],
    ["a different line does not", ["201"], ["404"], false],
    ["a missing line does not", ["201", "done"], ["201"], false],
    ["an extra line does not", ["201"], ["201", "more"], false],
    ["`...` inside a line stands for any text", ["204 ..._0000000000000007"], ["204 0000000000000000_0000000000000007"], true],
    ["`...` inside a line is not a regular expression", ["a.c ..."], ["abc x"], false],
    ["`...` alone matches no line", ["a", "...", "b"], ["a", "b"], true],
    ["`...` alone matches many lines", ["a", "...", "b"], ["a", "x", "y", "b"], true],
    ["`...` alone still needs what follows it", ["a", "...", "b"], ["a", "x"], false],
    ["trailing spaces in the page do not count", ["201  "], ["201"], true],
  ];
  it.each(rows)("%s", (_name, expected, actual, matches) => {
    expect(outputMatches(expected, actual)).toBe(matches);
  });

  it("output lines drop trailing spaces, carriage returns and blank lines at the end", () => {
    expect(outputLines("a  \r\n\nb\n\n\n")).toEqual(["a", "", "b"]);
  });
});

describe("transcript parsing", () => {
  const page = [
    "<!-- transcript: open -->",
    "```console",
    "$ B=http://x",
    "$ curl -s \\",
    "    $B/a",
    "hello",
    "...",
    "$ false",
    "[exit 1]",
    "```",
    "",
    "```sh",
    "never run",
    "```",
    "<!-- not run: needs a Cloudflare account -->",
    "```sh",
    "wrangler deploy",
    "```",
    "```ts",
    "const x = 1;",
    "```",
    "1. In a list:",
    "   ```sh",
    "   indented, never run",
    "   ```",
  ].join("\n");

  it("reads commands, continuation lines, expected output and exit codes", () => {
    const { transcripts } = readTranscripts("p.md", page);
    expect(transcripts).toHaveLength(1);
    expect(transcripts[0]!.session).toBe("open");
    expect(transcripts[0]!.commands).toEqual([
      { command: "B=http://x", expected: [], exitCode: 0, line: 3 },
      { command: "curl -s \\\n    $B/a", expected: ["hello", "..."], exitCode: 0, line: 4 },
      { command: "false", expected: [], exitCode: 1, line: 8 },
    ]);
  });

  it("reports each shell block that is neither run nor marked as not run, indented ones too, and only those", () => {
    expect(readTranscripts("p.md", page).unmarked).toEqual([
      { page: "p.md", line: 12 },
      { page: "p.md", line: 23 },
    ]);
  });
});

describe("the newcomer's pages", () => {
  it.each(TRANSCRIBED_PAGES)("every shell block in %s is a transcript or says why it is not run", (path) => {
    const { unmarked } = readTranscripts(path, readFileSync(new URL(path, ROOT), "utf8"));
    expect(unmarked).toEqual([]);
  });

  it("the README's first session, tables and access control are transcripts, in both modes", () => {
    const { transcripts } = readTranscripts("README.md", readFileSync(new URL("README.md", ROOT), "utf8"));
    expect(new Set(transcripts.map((transcript) => transcript.session))).toEqual(new Set(["open", "token"]));
  });
});
