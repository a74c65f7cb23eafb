// `mink drain <node>`: start the drain, then poll its progress until the server says done. On a terminal
// the progress is one line redrawn in place (a bar); otherwise one plain line whenever the counts change,
// so logs stay readable. --no-wait returns after starting it. The poll is unbounded: the drain is the
// server's work, and interrupting the CLI stops only the watching.
import type { DrainStarted, DrainStatus } from "./admin-client.ts";
import type { CommandContext } from "./commands.ts";
import { CommandFailed } from "./errors.ts";
import { count, drainProgressLine, overwriteLine, type DrainSnapshot } from "./format.ts";

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

export async function drainCommand(context: CommandContext, nodeId: string, options: DrainOptions): Promise<void> {
  const started = await context.client.startDrain(nodeId);
  if (started.unplaceable > 0) {
    options.warn(
      `mink: warning: ${started.unplaceable} of ${nodeId}'s streams have no other node to go to (no node with slots that is not draining); the drain waits for one\n`,
    );
  }
  if (options.noWait) {
    if (context.json) return context.out(`${JSON.stringify(started, null, 2)}\n`);
    return context.out(startedLine(started));
  }
  if (!context.json) context.out(startedLine(started));

  let total = started.remaining;
  let lastLine = "";
  let barDrawn = false;
  let status: DrainStatus;
  try {
    for (let poll = 0; ; poll += 1) {
      if (poll > 0) await options.sleep(options.intervalMs);
      status = await context.client.drainStatus(nodeId);
      if (!status.draining) {
        throw new CommandFailed(`${nodeId} is no longer draining (undrained meanwhile?) with ${count(status.remaining, "stream")} still assigned`);
      }
      total = Math.max(total, status.remaining);
      const snapshot: DrainSnapshot = { nodeId, total, remaining: status.remaining, transferring: status.transferring };
      if (!context.json) {
        const line = drainProgressLine(snapshot, options.tty);
        if (options.tty) {
          context.out(overwriteLine(line));
          barDrawn = true;
        } else if (line !== lastLine) {
          context.out(`${line}\n`);
        }
        lastLine = line;
      }
      if (status.done) break;
    }
  } finally {
    if (barDrawn) context.out("\n");
  }
  if (context.json) return context.out(`${JSON.stringify(status, null, 2)}\n`);
  context.out(`${nodeId} is drained: ${count(total, "stream")} moved\n`);
}
