// The one-shot commands: one admin request each, then the server's JSON (--json) or a table / key-value
// block for people. The drain, which waits, is in drain.ts.
import type { StreamAnswer } from "./admin-answers.ts";
import type { AdminClient } from "./admin-client.ts";
import { parseSlots } from "./option-values.ts";
import { cell, count, formatKeyValues, formatTable } from "./format.ts";

export interface CommandContext {
  readonly client: AdminClient;
  readonly json: boolean;
  readonly out: (text: string) => void;
}

function printJson(context: CommandContext, body: unknown): void {
  context.out(`${JSON.stringify(body, null, 2)}\n`);
}

export async function nodesCommand(context: CommandContext): Promise<void> {
  const answer = await context.client.nodes();
  if (context.json) return printJson(context, answer);
  if (answer.nodes.length === 0) return context.out("no registered nodes\n");
  const lease = answer.coordinator;
  context.out(
    lease === null
      ? "coordinator: none yet\n"
      : `coordinator: ${lease.holder} at coordinator epoch ${lease.coordinatorEpoch}${lease.expired ? " (lease expired)" : ""}\n`,
  );
  context.out(
    formatTable(
      [
        { header: "NODE" },
        { header: "LIVE" },
        { header: "HEARTBEAT", align: "right" },
        { header: "ROLE" },
        { header: "SLOTS", align: "right" },
        { header: "DRAINING" },
        { header: "STREAMS", align: "right" },
        { header: "OPENED", align: "right" },
        { header: "BUCKETS", align: "right" },
        { header: "EPOCH", align: "right" },
        { header: "ADDRESS" },
      ],
      answer.nodes.map((node) => [
        node.id,
        cell(node.live),
        node.lastHeartbeatAgoMs === null ? "-" : `${(node.lastHeartbeatAgoMs / 1000).toFixed(1)}s`,
        node.coordinator ? "coordinator" : node.declaredDead !== null ? `dead,takeover:${node.declaredDead.takeoverBy ?? "pending"}` : "-",
        cell(node.slots),
        cell(node.draining),
        cell(node.streams),
        cell(node.openedStreams),
        node.tableBuckets === undefined ? "-" : cell(node.tableBuckets),
        cell(node.epoch),
        cell(node.address),
      ]),
    ),
  );
}

export async function slotsCommand(context: CommandContext, nodeId: string, slotsText: string): Promise<void> {
  const answer = await context.client.setSlots(nodeId, parseSlots(slotsText));
  if (context.json) return printJson(context, answer);
  const node = answer.node;
  context.out(
    formatKeyValues([
      ["node", node.id],
      ["slots", cell(node.slots)],
      ["draining", cell(node.draining)],
      ["epoch", cell(node.epoch)],
      ["address", cell(node.address)],
    ]),
  );
}

function streamLines(answer: StreamAnswer): Array<[string, string]> {
  const pending = answer.pendingTransfer;
  const lines: Array<[string, string]> = [
    ["name", answer.name],
    ["id", answer.id],
    ["owner", cell(answer.owner)],
    ["owner address", cell(answer.ownerAddress)],
    ["epoch", cell(answer.epoch)],
    ["ownership", cell(answer.ownership)],
    ["closed at epoch", cell(answer.closedAtEpoch)],
    ["pending transfer", pending === null ? "none" : `${pending.source} -> ${pending.target}${pending.targetAddress === null ? "" : ` (${pending.targetAddress})`}`],
  ];
  for (const [key, value] of Object.entries(answer.config ?? {})) lines.push([`config.${key}`, cell(value)]);
  lines.push(["log version", cell(answer.version)]);
  return lines;
}

export async function streamCommand(context: CommandContext, path: string): Promise<void> {
  const answer = await context.client.stream(path);
  if (context.json) return printJson(context, answer);
  context.out(formatKeyValues(streamLines(answer)));
}

export async function transferCommand(context: CommandContext, path: string, target: string): Promise<void> {
  const answer = await context.client.transfer(path, target);
  if (context.json) return printJson(context, answer);
  const { stream, transfer } = answer;
  const headline = answer.alreadyPending
    ? `transfer of ${stream.name} from ${transfer.source} to ${transfer.target} was already pending\n`
    : `transfer of ${stream.name} from ${transfer.source} to ${transfer.target} is pending\n`;
  context.out(headline);
  context.out(
    formatKeyValues([
      ["stream", stream.name],
      ["id", stream.id],
      ["source", transfer.source],
      ["target", transfer.target],
      ["epoch", cell(stream.epoch)],
      ["ownership", cell(stream.ownership)],
    ]),
  );
  context.out(`follow it with 'mink transfers' or 'mink stream ${stream.name}'\n`);
}

export async function transfersCommand(context: CommandContext): Promise<void> {
  const answer = await context.client.transfers();
  if (context.json) return printJson(context, answer);
  if (answer.transfers.length === 0) return context.out("no pending transfers\n");
  context.out(
    formatTable(
      [{ header: "STREAM" }, { header: "ID" }, { header: "SOURCE" }, { header: "TARGET" }, { header: "EPOCH", align: "right" }, { header: "OWNERSHIP" }],
      answer.transfers.map((row) => [row.name, row.streamId, row.source, row.target, cell(row.epoch), cell(row.ownership)]),
    ),
  );
}

export async function undrainCommand(context: CommandContext, nodeId: string): Promise<void> {
  const answer = await context.client.undrain(nodeId);
  if (context.json) return printJson(context, answer);
  context.out(
    `${answer.nodeId} is ${answer.draining ? "still draining" : "no longer draining"}: ${count(answer.remaining, "stream")} assigned, ${answer.transferring} transferring\n`,
  );
}
