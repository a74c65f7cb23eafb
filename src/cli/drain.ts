// `mink drain <node>`: start the drain, then follow it until the server says done. Each round reads the
// progress and, when streams on the node are not moving (one that landed there after the drain began: a
// transfer to it was pending then), asks for the drain again, which is idempotent and plans them too. On a
// terminal the progress is one line redrawn in place (a bar); otherwise one plain line whenever the counts
// change, so logs stay readable. --no-wait returns after starting it. The wait is unbounded while the drain
// can go on (the drain is the server's work, and interrupting the CLI stops only the watching); a drain
// whose streams have nowhere to go fails at once, saying why.
import type { DrainStarted, DrainStatus } from "./admin-answers.ts";
import type { CommandContext } from "./commands.ts";
import { CommandFailed } from "./errors.ts";
import { count, drainProgressLine, ProgressPrinter, type DrainSnapshot } from "./format.ts";

export interface DrainOptions {
  readonly noWait: boolean;
  /** stdout is a terminal: draw a bar. */
  readonly tty: boolean;
  readonly intervalMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Warnings go here (stderr), so --json output stays one document. */
  readonly warn: (text: string) => void;
}

function startedLine(started: DrainStarted): string {
  return `${started.nodeId} is draining: ${count(started.remaining, "stream")} to move (${started.begun} transfers begun, ${started.transferring} transferring, ${started.unplaceable} with no other node to go to)\n`;
}

/** One round's view of the drain: the GET status, or the answer of the drain asked again. */
interface Round {
  readonly draining: boolean;
  readonly remaining: number;
  readonly transferring: number;
  readonly incoming: number;
  readonly done: boolean;
}

function roundOf(answer: DrainStarted | DrainStatus): Round {
  const incoming = answer.incoming ?? 0;
  // A server older than `incoming` sends no `done` with a drain: nothing placed there is all it knew.
  const done = answer.done ?? (answer.draining && answer.remaining === 0);
  return { draining: answer.draining, remaining: answer.remaining, transferring: answer.transferring, incoming, done };
}

/** A drain answer that says the drain cannot go on: its streams have no node to go to. */
function failIfUnplaceable(nodeId: string, answer: DrainStarted): void {
  if (answer.stalled?.reason !== "unplaceable") return;
  throw new CommandFailed(
    `the drain of ${nodeId} cannot finish: ${answer.stalled.message}; ${nodeId} stays draining ('mink undrain ${nodeId}' ends it)`,
  );
}

export async function drainCommand(context: CommandContext, nodeId: string, options: DrainOptions): Promise<void> {
  const started = await context.client.startDrain(nodeId);
  // Waiting, a drain stuck on them fails below with the reason instead.
  if (started.unplaceable > 0 && (options.noWait || started.stalled?.reason !== "unplaceable")) {
    options.warn(
      `mink: warning: ${started.unplaceable} of ${nodeId}'s streams have no other node to go to (no node with slots that is not draining); add a node or raise a node's slots\n`,
    );
  }
  if (options.noWait) {
    if (context.json) return context.out(`${JSON.stringify(started, null, 2)}\n`);
    return context.out(startedLine(started));
  }
  if (!context.json) context.out(startedLine(started));

  let total = started.remaining;
  const progress = new ProgressPrinter(context.out, options.tty);
  let last: DrainStarted | DrainStatus = started;
  let warnedRefused = false;
  try {
    for (let poll = 0; ; poll += 1) {
      if (poll > 0) {
        await options.sleep(options.intervalMs);
        const status = await context.client.drainStatus(nodeId);
        // Read first, so a drain ended meanwhile ('mink undrain') is reported, not started again.
        if (!status.draining) {
          throw new CommandFailed(`${nodeId} is no longer draining (undrained meanwhile?) with ${count(status.remaining, "stream")} still assigned`);
        }
        last = status;
        // Streams on the node that are not moving: they landed after the drain was planned, or could not
        // move then. The drain again plans them (idempotent: what is moving already is left alone).
        if (status.remaining > status.transferring) last = await context.client.startDrain(nodeId);
      }
      const round = roundOf(last);
      total = Math.max(total, round.remaining);
      const snapshot: DrainSnapshot = { nodeId, total, remaining: round.remaining, transferring: round.transferring, incoming: round.incoming };
      if (!context.json) progress.show(drainProgressLine(snapshot, options.tty));
      if (round.done) break;
      if ("begun" in last) {
        failIfUnplaceable(nodeId, last);
        if (last.stalled?.reason === "refused" && !warnedRefused) {
          warnedRefused = true;
          options.warn(`mink: warning: ${last.stalled.message}; still waiting\n`);
        }
      }
    }
  } finally {
    progress.end();
  }
  if (context.json) return context.out(`${JSON.stringify(last, null, 2)}\n`);
  context.out(`${nodeId} is drained: ${count(total, "stream")} moved\n`);
}
