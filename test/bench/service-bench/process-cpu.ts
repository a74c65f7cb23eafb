// CPU time of process trees, from /proc (Linux): utime + stime of each process in clock ticks
// (`getconf CLK_TCK`). A side of the benchmark is a set of processes, chosen afresh at each snapshot (a tree
// under a PID, say); the CPU a side used in a phase is the sum, over the processes of the later snapshot, of
// their ticks then minus their ticks in the earlier one (0 for a process started in between). A process that
// exited in between is missed: none should, in a phase of a few seconds.
import { execFileSync } from "node:child_process";
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
