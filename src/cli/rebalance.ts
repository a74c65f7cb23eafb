// `mink cluster rebalance`: with --dry-run, the plan as tables (orphans first, then moves, the mean load and
// the bands). Otherwise rounds of POST /admin/rebalance, each beginning the next moves of a fresh plan as
// earlier transfers finish (the server keeps at most --max-concurrent pending), until the server says
// done; progress is drawn the way `mink drain` draws it. It gives up, saying why, when a stream has no live
// node to go to or when nothing changed for a long time. --no-wait returns after the first round.
import type { RebalanceAnswer, RebalanceMove } from "./admin-answers.ts";
import type { CommandContext } from "./commands.ts";
import { CommandFailed } from "./errors.ts";
import { count, formatTable, load, ProgressPrinter, rebalanceProgressLine, type RebalanceSnapshot } from "./format.ts";

export interface RebalanceOptions {
  readonly dryRun: boolean;
  /** Undefined: the server's default (4). */
  readonly maxConcurrent: number | undefined;
  readonly noWait: boolean;
  /** stdout is a terminal: draw a bar. */
  readonly tty: boolean;
  readonly intervalMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
  /** Give up when no round changed anything for this long. */
  readonly stallTimeoutMs: number;
  /** Warnings go here (stderr), so --json output stays one document. */
  readonly warn: (text: string) => void;
}

function bandsLine(answer: RebalanceAnswer): string {
  const { meanLoad, bands } = answer.plan;
  return `mean load ${load(meanLoad)} streams per slot over the live nodes that take streams: sources above ${load(bands.above)}, targets below ${load(bands.below)}`;
}

function movesTable(moves: readonly RebalanceMove[]): string {
  return formatTable(
    [{ header: "STREAM" }, { header: "ID" }, { header: "FROM" }, { header: "TO" }],
    moves.map((move) => [move.name, move.streamId, move.from, move.to]),
  );
}

function unplaceableText(streams: number): string {
  return `no live node can take ${count(streams, "stream")} (orphans of nodes that are not live, and no live node has slots and is not draining): add a node or raise a node's slots`;
}

/** The plan of a dry run for people: orphans, then moves, then the mean load and the bands. */
function formatPlan(answer: RebalanceAnswer): string {
  const { orphans, moves, unplaceable } = answer.plan;
  const parts: string[] = [];
  if (orphans.length > 0) {
    parts.push(`orphans: ${count(orphans.length, "stream")} of nodes that are not live, re-led by the coordinator (no transfer)\n${movesTable(orphans)}`);
  }
  if (moves.length > 0) parts.push(`moves: ${count(moves.length, "transfer")}, at most ${answer.maxConcurrent} pending at a time\n${movesTable(moves)}`);
  if (unplaceable > 0) parts.push(`${unplaceableText(unplaceable)}\n`);
  if (orphans.length === 0 && moves.length === 0 && unplaceable === 0) parts.push("nothing to move: the cluster is balanced\n");
  parts.push(`${bandsLine(answer)}\n`);
  if (answer.pending > 0) parts.push(`${count(answer.pending, "transfer")} pending now (counted where they go)\n`);
  return parts.join("\n");
}

function firstLine(answer: RebalanceAnswer): string {
  const { orphans, moves } = answer.plan;
  const orphanText = orphans.length > 0 ? `, ${count(orphans.length, "orphan")} for the coordinator` : "";
  return `rebalance: ${count(moves.length, "move")} planned${orphanText}; ${answer.begun.length} transfers begun, at most ${answer.maxConcurrent} pending at a time\n`;
}

function snapshotOf(answer: RebalanceAnswer, begun: number): RebalanceSnapshot {
  return { begun, pending: answer.pending, toBegin: answer.plan.moves.length - answer.begun.length, orphans: answer.plan.orphans.length };
}

/** What a round says about the work left: a round that begins a transfer, or changes this, made progress. */
function workLeft(answer: RebalanceAnswer): string {
  return `${answer.pending}/${answer.plan.moves.length - answer.begun.length}/${answer.plan.orphans.length}`;
}

export async function rebalanceCommand(context: CommandContext, options: RebalanceOptions): Promise<void> {
  const ask = (dryRun: boolean): Promise<RebalanceAnswer> => context.client.rebalance({ dryRun, maxConcurrent: options.maxConcurrent });
  if (options.dryRun) {
    const plan = await ask(true);
    if (context.json) return context.out(`${JSON.stringify(plan, null, 2)}\n`);
    return context.out(formatPlan(plan));
  }

  let answer = await ask(false);
  if (options.noWait) {
    if (answer.plan.unplaceable > 0) options.warn(`mink: warning: ${unplaceableText(answer.plan.unplaceable)}\n`);
    if (context.json) return context.out(`${JSON.stringify(answer, null, 2)}\n`);
    context.out(firstLine(answer));
    if (!answer.done) context.out("run 'mink cluster rebalance' again to begin the next moves as these finish\n");
    return;
  }
  if (answer.done) {
    if (context.json) return context.out(`${JSON.stringify(answer, null, 2)}\n`);
    return context.out(`nothing to move: the cluster is balanced (${bandsLine(answer)})\n`);
  }
  if (!context.json) context.out(firstLine(answer));

  let begun = answer.begun.length;
  const progress = new ProgressPrinter(context.out, options.tty);
  let lastWork = workLeft(answer);
  let lastChangeMs = options.now();
  try {
    for (let round = 0; ; round += 1) {
      if (round > 0) {
        await options.sleep(options.intervalMs);
        answer = await ask(false);
        begun += answer.begun.length;
      }
      if (!context.json) progress.show(rebalanceProgressLine(snapshotOf(answer, begun), options.tty));
      if (answer.done) break;
      // No live node with slots means no band move either: nothing this command waits for can happen.
      if (answer.plan.unplaceable > 0) throw new CommandFailed(`the rebalance cannot finish: ${unplaceableText(answer.plan.unplaceable)}`);
      const work = workLeft(answer);
      if (work !== lastWork || answer.begun.length > 0) {
        lastWork = work;
        lastChangeMs = options.now();
      } else if (options.now() - lastChangeMs >= options.stallTimeoutMs) {
        const waiting = answer.plan.orphans.length > 0 ? `, ${count(answer.plan.orphans.length, "orphan")} waiting for the coordinator` : "";
        throw new CommandFailed(
          `the rebalance made no progress for ${Math.round(options.stallTimeoutMs / 1000)} s: ${count(answer.pending, "transfer")} pending, ` +
            `${count(answer.plan.moves.length - answer.begun.length, "move")} not begun${waiting}. Transfers already begun go on ('mink transfers' lists them); ` +
            "run 'mink cluster rebalance' again later",
        );
      }
    }
  } finally {
    progress.end();
  }
  if (context.json) return context.out(`${JSON.stringify(answer, null, 2)}\n`);
  context.out(`rebalanced: ${count(begun, "transfer")} completed; ${bandsLine(answer)}\n`);
}
