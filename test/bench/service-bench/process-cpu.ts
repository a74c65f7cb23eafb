// CPU time of process trees, from /proc (Linux): utime + stime of each process in clock ticks
// (`getconf CLK_TCK`). A side of the benchmark is a set of processes, chosen afresh at each snapshot (a tree
// under a PID, say); the CPU a side used in a phase is the sum, over the processes of the later snapshot, of
// their ticks then minus their ticks in the earlier one (0 for a process started in between). A process that
// exited in between is missed: none should, in a phase of a few seconds.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readProcStats } from "../../support/proc-stat.ts";

export interface ProcessStat {
  pid: number;
  ppid: number;
  /** The executable's name, as /proc shows it (e.g. "node", "workerd"). */
  comm: string;
  /** utime + stime, in clock ticks. */
  ticks: number;
}

let ticksPerSecond: number | undefined;

function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const value = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    if (!Number.isInteger(value) || value <= 0) throw new Error(`getconf CLK_TCK: not a tick rate: ${value}`);
    ticksPerSecond = value;
  }
  return ticksPerSecond;
}

/** Every process now, by PID. */
function processTable(): Map<number, ProcessStat> {
  if (process.platform !== "linux") throw new Error("CPU accounting reads /proc: Linux only");
  const table = new Map<number, ProcessStat>();
  for (const { pid, ppid, comm, ticks } of readProcStats()) table.set(pid, { pid, ppid, comm, ticks });
  return table;
}

/** `roots` and all their descendants that are in `table`. */
export function treeOf(table: ReadonlyMap<number, ProcessStat>, roots: readonly number[]): Set<number> {
  const children = new Map<number, number[]>();
  for (const stat of table.values()) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat.pid]);
  const tree = new Set<number>();
  const queue = roots.filter((pid) => table.has(pid));
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    if (tree.has(pid)) continue;
    tree.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** The processes named `comm` (e.g. "workerd") among `root` and its descendants, now. */
export function descendantsNamed(root: number, comm: string): Set<number> {
  const table = processTable();
  return new Set([...treeOf(table, [root])].filter((pid) => table.get(pid)?.comm === comm));
}

/** A side's processes, picked from a fresh table at each snapshot: PID -> a label for the report. */
export type ProcessPicker = (table: ReadonlyMap<number, ProcessStat>) => Map<number, string>;

export interface CpuSnapshot {
  stats: Map<number, ProcessStat & { label: string }>;
}

export function cpuSnapshot(pick: ProcessPicker): CpuSnapshot {
  const table = processTable();
  const stats = new Map<number, ProcessStat & { label: string }>();
  for (const [pid, label] of pick(table)) {
    const stat = table.get(pid);
    if (stat !== undefined) stats.set(pid, { ...stat, label });
  }
  return { stats };
}

export interface CpuUsage {
  seconds: number;
  /** Per process, largest first. */
  processes: { pid: number; label: string; seconds: number }[];
}

export function cpuUsed(before: CpuSnapshot, after: CpuSnapshot): CpuUsage {
  const hz = clockTicksPerSecond();
  const processes = [...after.stats.values()].map((stat) => ({
    pid: stat.pid,
    label: stat.label,
    seconds: (stat.ticks - (before.stats.get(stat.pid)?.ticks ?? 0)) / hz,
  }));
  processes.sort((a, b) => b.seconds - a.seconds);
  return { seconds: processes.reduce((sum, p) => sum + p.seconds, 0), processes };
}

/**
 * Waits until the processes `pick` chooses used less than `belowCores` of a core over a window of
 * `windowMs` (background work after a heavy phase: compaction, a disk flush), at most `maxMs`; returns the
 * time waited and whether they went quiet.
 */
export async function waitForQuiet(pick: ProcessPicker, options: { belowCores: number; windowMs: number; maxMs: number }): Promise<{ waitedMs: number; quiet: boolean }> {
  const started = performance.now();
  let before = cpuSnapshot(pick);
  while (performance.now() - started < options.maxMs) {
    await new Promise((resolve) => setTimeout(resolve, options.windowMs));
    const after = cpuSnapshot(pick);
    if (cpuUsed(before, after).seconds < (options.belowCores * options.windowMs) / 1000) return { waitedMs: performance.now() - started, quiet: true };
    before = after;
  }
  return { waitedMs: performance.now() - started, quiet: false };
}

/** CPU seconds the whole machine has been busy, every core together (/proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest time is inside user)
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / clockTicksPerSecond();
}
