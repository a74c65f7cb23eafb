// The package as someone outside this repository gets it: `npm pack` (whose prepack builds the CLI
// bundle), the tarball installed in an empty folder from the npm registry, then the installed `mink`
// answers --help and lists the three nodes of a real `npm run dev`, with no devDependency installed (no
// tsx: bin/mink.js runs the bundle).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_ADMIN_TOKEN, REPO_ROOT, run, startDev, type DevProcess } from "./dev-process.ts";

/** The registry fetch of the runtime dependencies, on a shared machine. */
const INSTALL_TIMEOUT_MS = 240_000;
const CLI_TIMEOUT_MS = 30_000;
const BUNDLE = join(REPO_ROOT, "dist", "cli", "mink.js");

let dev: DevProcess | undefined;
/** Whether a CLI bundle was there before `npm pack` built one: if not, the test removes it again. */
const hadBundle = existsSync(BUNDLE);
// Outside the repository, so nothing resolves from its node_modules.
const tempDir = mkdtempSync(join(tmpdir(), "mink-package-"));
const consumer = join(tempDir, "consumer");

/** npm's environment from an outer `npm run`, which would point the inner npm at this repository. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toLowerCase().startsWith("npm_") && !name.startsWith("MINK_")) env[name] = value;
  }
  return env;
}

async function mink(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run("npx", ["--no", "--", "mink", ...args], { cwd: consumer, env: cleanEnv(), timeoutMs: CLI_TIMEOUT_MS });
}

beforeAll(async () => {
  const packed = await run("npm", ["pack", "--json", "--pack-destination", tempDir], { env: cleanEnv(), timeoutMs: INSTALL_TIMEOUT_MS });
  expect(packed.code, packed.stderr).toBe(0);
  const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as [{ filename: string; files: { path: string }[] }];
  const tarball = join(tempDir, filename);
  const paths = files.map((file) => file.path);
  expect(paths).toEqual(expect.arrayContaining(["bin/mink.js", "dist/cli/mink.js", "package.json", "LICENSE", "README.md"]));
  expect(paths.filter((path) => path.startsWith("src/") || path.startsWith("test/"))).toEqual([]);

  mkdirSync(consumer);
  const installed = await run("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: consumer, env: cleanEnv(), timeoutMs: INSTALL_TIMEOUT_MS });
  expect(installed.code, installed.stderr).toBe(0);
  dev = await startDev();
}, INSTALL_TIMEOUT_MS * 2);

afterAll(async () => {
  await dev?.stop();
  rmSync(tempDir, { recursive: true, force: true });
  if (!hadBundle) rmSync(BUNDLE, { force: true });
});

describe("the packed mink package", () => {
  it("installs in an empty folder without its devDependencies", () => {
    expect(existsSync(join(consumer, "node_modules", "mink", "dist", "cli", "mink.js"))).toBe(true);
    expect(existsSync(join(consumer, "node_modules", "tsx"))).toBe(false);
  });

  it("runs `mink --help` with exit 0", async () => {
    const help = await mink("--help");
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("Usage: mink <command>");
  });

  it("runs `mink nodes` against npm run dev and lists its three live nodes", async () => {
    const nodes = await mink("nodes", "--url", dev!.baseUrl, "--token", DEV_ADMIN_TOKEN);
    expect(nodes.code, nodes.stderr).toBe(0);
    for (const node of ["node-0", "node-1", "node-2"]) expect(nodes.stdout).toMatch(new RegExp(`^${node}\\s+yes`, "m"));
  });
});
