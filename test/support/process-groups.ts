// Child process groups started by tests and benchmarks (a service, `npm run dev`): each child is spawned
// detached, so it leads its own group and a signal to -pid reaches every process in it (npm, node, workerd).
// Killing only the leader would leave workerd serving. Groups registered here are SIGKILLed if this process
// exits or is interrupted first, so a crashed run leaks nothing; directories registered are removed then.
import { rmSync } from "node:fs";
import { readProcStats } from "./proc-stat.ts";
import { eventually } from "./eventually.ts";

/** Process groups started here and not yet reaped: killed synchronously if this process goes away. */
const liveGroups = new Set<number>();
/** Temporary directories made here and not yet removed: removed on exit too. */
const ownedDirs = new Set<string>();
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  const killAll = (): void => {
    for (const pgid of liveGroups) signalGroup(pgid, "SIGKILL");
    liveGroups.clear();
    for (const dir of ownedDirs) rmSync(dir, { recursive: true, force: true });
    ownedDirs.clear();
  };
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    // once: after cleaning up, re-raise so the default action (or the runner's own handler) still happens.
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

/** Kill the group `pgid` if this process exits before `stopGroup` reaped it. */
export function trackGroup(pgid: number): void {
  installExitHooks();
  liveGroups.add(pgid);
}

/** The group `pgid` is gone (it exited of itself): no longer killed on exit. */
export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** Remove `dir` if this process exits before `releaseDir`. */
export function trackDir(dir: string): void {
  installExitHooks();
  ownedDirs.add(dir);
}

/** `dir` is removed (or kept on purpose) by its owner now: no longer removed on exit. */
export function releaseDir(dir: string): void {
  ownedDirs.delete(dir);
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * True while any process of the group is alive. A killed child can linger as a zombie until its parent (or
 * PID 1, which may not reap in a container) collects it; a zombie holds no port or file, so it counts as gone.
 */
function groupAlive(pgid: number): boolean {
  if (process.platform !== "linux") {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return readProcStats().some((stat) => stat.pgrp === pgid && stat.state !== "Z");
}

async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  return eventually(() => !groupAlive(pgid), { timeoutMs, what: `process group ${pgid} to exit` }).then(
    () => true,
    () => false,
  );
}

/**
 * Stops the group: `signal` (SIGTERM by default), and SIGKILL if it outlives `graceMs`; then waits up to
 * `killMs` more. True once every process of the group is gone; the group is no longer tracked either way.
 */
export async function stopGroup(pgid: number, options: { graceMs: number; killMs: number; signal?: "SIGTERM" | "SIGKILL" }): Promise<boolean> {
  const signal = options.signal ?? "SIGTERM";
  signalGroup(pgid, signal);
  let gone = await waitForGroupExit(pgid, signal === "SIGTERM" ? options.graceMs : options.killMs);
  if (!gone && signal === "SIGTERM") {
    signalGroup(pgid, "SIGKILL");
    gone = await waitForGroupExit(pgid, options.killMs);
  }
  liveGroups.delete(pgid);
  return gone;
}
