// `npm run dev` (scripts/dev.ts) for real, as a newcomer starts it, for the examples and package tests:
// on free ports (PORT, MINK_S3_PORT), with its state in a throwaway directory below the repository
// (MINK_STATE_DIR; below it because the Worker's build resolves miniflare from node_modules), in its own
// process group (npm -> tsx -> node -> workerd), so stop() can signal all of it by PID. Ready means the
// router answers and every node has registered and is live, within a deadline. Also here: running a
// command to completion with a deadline, for the examples and the installed CLI.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually, NotYet } from "../support/eventually.ts";
import { freePort } from "../support/free-port.ts";
import { signalGroup, stopGroup, trackGroup, untrackGroup } from "../support/process-groups.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The admin token `npm run dev` uses when ADMIN_TOKEN is not set. */
export const DEV_ADMIN_TOKEN = "mink-dev-admin";
const DEV_NODES = 3;
/** The first start builds the Worker (about 6 s alone, 15 s on 2 busy cores); below the e2e hookTimeout (180 s). */
const READY_TIMEOUT_MS = 150_000;
const STOP_TIMEOUT_MS = 15_000;

export interface DevProcess {
  /** `http://127.0.0.1:<port>`, the router. */
  readonly baseUrl: string;
  readonly logFile: string;
  /** SIGTERM the process group (SIGKILL if it outlives the deadline), then remove the state directory. */
  stop(): Promise<void>;
  logTail(lines?: number): string;
}

/** `env`: variables set for `npm run dev` after the newcomer's defaults, e.g. `{ AUTH_MODE: "token" }`. */
export async function startDev(options: { env?: Readonly<Record<string, string>> } = {}): Promise<DevProcess> {
  mkdirSync(join(REPO_ROOT, ".mink"), { recursive: true });
  const stateDir = mkdtempSync(join(REPO_ROOT, ".mink", "dev-e2e-"));
  const logFile = join(stateDir, "dev.log");
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), MINK_S3_PORT: String(await freePort()), MINK_STATE_DIR: stateDir };
  // The defaults a newcomer gets, whatever the test runner's environment says.
  for (const name of ["ADMIN_TOKEN", "AUTH_MODE", "MINK_NODES"]) delete env[name];
  Object.assign(env, options.env);
  const log = createWriteStream(logFile);
  const child = spawn("npm", ["run", "dev"], { cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("npm run dev did not start");
  trackGroup(pgid);
  let exited: number | null = null;
  child.on("exit", (code) => (exited = code ?? -1));

  const baseUrl = `http://127.0.0.1:${port}`;
  const logTail = (lines = 40): string => readFileSync(logFile, "utf8").split("\n").slice(-lines).join("\n");
  const stop = async (): Promise<void> => {
    await stopGroup(pgid, { graceMs: STOP_TIMEOUT_MS, killMs: STOP_TIMEOUT_MS });
    log.end();
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    await eventually(
      async () => {
        if (exited !== null) throw new Error(`npm run dev exited (${exited}):\n${logTail()}`);
        const live = await liveNodes(baseUrl);
        if (live < DEV_NODES) throw new NotYet(`${live} of ${DEV_NODES} nodes live`);
        return true;
      },
      { timeoutMs: READY_TIMEOUT_MS, what: "npm run dev to serve three live nodes" },
    );
  } catch (error) {
    const tail = logTail();
    await stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- npm run dev:\n${tail}`);
  }
  return { baseUrl, logFile, stop, logTail };
}

/** How many nodes `GET /admin/nodes` lists as live (throws while the Worker is not answering). */
async function liveNodes(baseUrl: string): Promise<number> {
  const response = await fetch(`${baseUrl}/admin/nodes`, { headers: { Authorization: `Bearer ${DEV_ADMIN_TOKEN}` } });
  if (response.status !== 200) throw new NotYet(`GET /admin/nodes: ${response.status}`);
  const { nodes } = (await response.json()) as { nodes: { live: boolean }[] };
  return nodes.filter((node) => node.live).length;
}

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end, killed (its process group) past `timeoutMs`. */
export async function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Finished> {
  const child = spawn(command, args, { cwd: options.cwd ?? REPO_ROOT, env: options.env ?? process.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pgid = child.pid;
  if (pgid !== undefined) trackGroup(pgid);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => {
    if (pgid !== undefined) signalGroup(pgid, "SIGKILL");
  }, options.timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode) => resolve(exitCode));
  });
  clearTimeout(timer);
  if (pgid !== undefined) untrackGroup(pgid);
  return { code, stdout, stderr };
}
