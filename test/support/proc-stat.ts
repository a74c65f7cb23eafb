// Every process on this machine as /proc/<pid>/stat describes it (Linux only): the e2e service checks that
// a killed process group is gone, the benchmarks add up CPU time over process trees.
import { readdirSync, readFileSync } from "node:fs";

export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** One letter: R, S, D, Z (a zombie holds no port or file), ... */
  readonly state: string;
  /** The executable's name, as /proc shows it (e.g. "node", "workerd"). */
  readonly comm: string;
  /** utime + stime, in clock ticks. */
  readonly ticks: number;
}

export function readProcStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // "pid (comm) state ppid pgrp ... utime(14) stime(15) ...": comm may hold spaces and parentheses, so
    // split after the last ")".
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    stats.push({
      pid: Number(entry),
      state: fields[0] ?? "",
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      comm: stat.slice(stat.indexOf("(") + 1, close),
      ticks: Number(fields[11]) + Number(fields[12]),
    });
  }
  return stats;
}
