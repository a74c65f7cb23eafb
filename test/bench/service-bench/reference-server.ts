// Starts the reference server (reference-server-child.ts) as a child process and stops it by PID.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sleep } from "./stats.ts";

export interface ReferenceServer {
  baseUrl: string;
  pid: number;
  dataDir: string;
  stop(): Promise<void>;
}

const CHILD_ENTRY = fileURLToPath(new URL("./reference-server-child.ts", import.meta.url));
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export async function startReferenceServer(longPollTimeoutMs: number): Promise<ReferenceServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "mink-bench-reference-"));
  const child = spawn(process.execPath, ["--import", "tsx", CHILD_ENTRY, dataDir, String(longPollTimeoutMs)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) {
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error("spawning the reference server failed (no pid)");
  }
  // If this process exits without stop(), take the child with it.
  const killOnExit = (): void => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.on("exit", killOnExit);

  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    process.off("exit", killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const gone = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
      if (!gone) {
        child.kill("SIGKILL");
        await exited;
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reference server not ready in ${READY_TIMEOUT_MS} ms\n${output}`)), READY_TIMEOUT_MS);
      child.stdout.on("data", (chunk: Buffer) => {
        if (output.length < 64 * 1024) output += chunk.toString("utf8");
        const match = /READY (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.stderr.on("data", (chunk: Buffer) => {
        if (output.length < 64 * 1024) output += chunk.toString("utf8");
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`reference server exited (${code ?? signal}) before it was ready\n${output}`));
      });
    });
    return { baseUrl, pid, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
