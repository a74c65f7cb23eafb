// What a run reached: counts of the situations that matter (acknowledged, unknown and duplicate appends,
// reads, table writes by outcome, transfers completed, crashes, fenced writers, compactions...), summed over seeds by main.ts, so
// a change that quietly stops the simulation from reaching something shows up in its summary.
import type { History } from "./history.ts";
import { WAKE_STREAM } from "./subscription-consumers.ts";
import { walCoverage } from "./wal-coverage.ts";

const COUNTED: ReadonlySet<string> = new Set([
  "CompleteTransfer",
  "BeginTransfer",
  "OpenStream",
  "ClaimStream",
  "SetDraining",
  "AcquireLease",
  "DeclareDead",
  "ReassignStreams",
  "CompleteTakeover",
]);

export function coverage(history: History): Map<string, number> {
  const counts = new Map(history.counts);
  const add = (key: string, n = 1): void => {
    counts.set(key, (counts.get(key) ?? 0) + n);
  };
  for (const append of history.appends) add(`append ${append.producer === null ? "plain" : "producer"} ${append.outcome}`);
  for (const read of history.reads) if (read.mode !== "final") add(`read ${read.mode}`);
  add("long-poll timeout", history.emptyPolls.length);
  for (const write of history.tables.writes) add(`table write ${write.outcome}`);
  add("table lookup", history.tables.lookups.length);
  if (history.tables.partitioned) {
    add("table partitioned seed");
    add("table partitioned write acked", history.tables.writes.filter((write) => write.outcome === "acked").length);
  }
  for (const write of history.writes) if (/^tables\/[^/]+\/snapshots\//.test(write.key)) add("table snapshot");
  const subscriptions = history.subscriptions;
  if (subscriptions.followed.length > 0) {
    add("subscription seed");
    add("subscription offer", subscriptions.offers.length);
    if (subscriptions.caughtUp === true) add("subscription caught up");
    for (const write of history.writes) for (const record of write.walData) if (record.ownership.name === WAKE_STREAM) add("subscription wake event landed");
  }
  walCoverage(history, add);
  for (const { entry } of history.journal) {
    const type = entry.command.type;
    if (COUNTED.has(type)) add(`log ${type}`);
  }
  return counts;
}

export function mergeCounts(into: Map<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [key, n] of from) into.set(key, (into.get(key) ?? 0) + n);
}

export function formatCounts(counts: ReadonlyMap<string, number>): string {
  return [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, n]) => `${key} ${n}`)
    .join(", ");
}
