// Issue 23's rule above dependency-cruiser's file-level one: no import cycle between folders. A folder is
// `src/<name>` (its subfolders included), `durable-objects`, or a top file of src/ (`src/index.ts`,
// `src/env.ts`) on its own; an import from one to another is an edge, and the graph of edges must be
// acyclic, so each folder can be read, and changed, knowing only the folders below it.
//
//   npx tsx scripts/check-folder-cycles.ts     # part of npm run check:deps; exit 1 naming each cycle
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const ROOTS = ["src", "durable-objects"];
const IMPORT = /(?:import|export)\s[^"';]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) return filesUnder(path);
    return /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The folder a repository path belongs to, or null outside the checked code. */
function folderOf(path: string): string | null {
  const parts = path.split("/");
  if (parts[0] === "durable-objects") return "durable-objects";
  if (parts[0] !== "src") return null;
  return parts.length === 2 ? path : `src/${parts[1]}`;
}

function folderGraph(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const file of ROOTS.flatMap(filesUnder)) {
    const from = folderOf(file)!;
    const targets = edges.get(from) ?? new Set<string>();
    edges.set(from, targets);
    for (const match of readFileSync(join(ROOT, file), "utf8").matchAll(IMPORT)) {
      const target = folderOf(relative(ROOT, normalize(join(ROOT, dirname(file), match[1] ?? match[2]!))));
      if (target !== null && target !== from) targets.add(target);
    }
  }
  return edges;
}

/** Strongly connected components with more than one folder (Tarjan): each is a cycle. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop()!; ; top = stack.pop()!) {
      component.push(top);
      if (top === node) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = folderGraph();
const found = cycles(graph);
for (const component of found) {
  const links = component.flatMap((from) => [...(graph.get(from) ?? [])].filter((to) => component.includes(to)).map((to) => `${from} -> ${to}`));
  console.error(`folders importing each other: ${component.join(", ")}\n  ${links.join("\n  ")}`);
}
if (found.length > 0) process.exit(1);
console.log(`no import cycle between ${graph.size} folders`);
