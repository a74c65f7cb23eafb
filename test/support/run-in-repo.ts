// A command of this repository run for real (npm -> tsx), as a newcomer runs it: its exit code and its
// whole output, in a fresh state folder under .mink/ that is removed after, killed with its process group
// after `timeoutMs`. For the checks that refuse bad settings before anything starts.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `command` with `env` as its whole environment plus MINK_STATE_DIR, a fresh folder named after `label`. */
export async function runInRepo(
  command: readonly string[],
  env: Record<string, string | undefined>,
  options: { readonly label: string; readonly timeoutMs: number },
): Promise<{ code: number | null; output: string }> {
  mkdirSync(join(REPO_ROOT, ".mink"), { recursive: true });
  const stateDir = mkdtempSync(join(REPO_ROOT, ".mink", `${options.label}-`));
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, args, { cwd: REPO_ROOT, env: { ...env, MINK_STATE_DIR: stateDir }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  rmSync(stateDir, { recursive: true, force: true });
  return { code, output };
}
