// The README's client snippets are copies of the files in examples/, which the examples test runs against
// `npm run dev`: a code block right after a marker `<!-- example: <file>#<region> -->` must equal the
// lines between `#region <region>` and `#endregion <region>` in that file (or the whole file, without
// `#<region>`). A snippet edited in one place and not the other fails here.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), "utf8");

interface MarkedBlock {
  readonly file: string;
  readonly region: string | null;
  readonly code: string;
}

/** Every fenced block the README marks as a copy of an example. */
function markedBlocks(markdown: string): MarkedBlock[] {
  const marker = /<!-- example: ([^#\s]+)(?:#(\S+))? -->\n+```[a-z]*\n([\s\S]*?)```/g;
  return [...markdown.matchAll(marker)].map((match) => ({ file: match[1]!, region: match[2] ?? null, code: match[3]! }));
}

/** The lines strictly between `#region <name>` and `#endregion <name>` (a comment in any language). */
function region(source: string, name: string): string {
  const lines = source.split("\n");
  const start = lines.findIndex((line) => line.trim().endsWith(`#region ${name}`));
  const end = lines.findIndex((line) => line.trim().endsWith(`#endregion ${name}`));
  if (start < 0 || end < start) throw new Error(`no region ${name}`);
  return lines.slice(start + 1, end).join("\n") + "\n";
}

describe("README snippets", () => {
  const blocks = markedBlocks(read("README.md"));

  it("include the producer and the table client as marked copies of examples/", () => {
    const files = blocks.map((block) => block.file);
    expect(files).toContain("examples/producer.ts");
    expect(files).toContain("examples/table-client.ts");
  });

  it.each(blocks.map((block) => [`${block.file}#${block.region ?? ""}`, block] as const))("%s is a copy of the example", (_label, block) => {
    const source = read(block.file);
    expect(block.code).toBe(block.region === null ? source : region(source, block.region));
  });
});
