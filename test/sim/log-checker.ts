// Every accepted metadata log entry checked against the state it was applied to, and the order in which a
// node's acknowledgements left it. These rules hold for each step, whatever the final outcome: where two
// defences stand in a row (a coordinator check behind a node-epoch check, a seal behind a self-lease), the
// final read-back still comes out right when one of them breaks, so only a rule per step notices.
//
// - coordinator: a coordinator command (DeclareDead, ReassignStreams, CreateTable, AddPartition) and a
//   RenewLease were accepted only from the lease holder, at its node epoch and coordinator epoch, before
//   the lease expired (at the entry's time);
// - node epochs: no entry lowers a registered node's epoch, and none forgets a node;
// - takeover: a CompleteTakeover of a dead incarnation (node, E) comes after a seal at epoch E + 1 landed on
//   that node's WAL chain (the seal is what fences the zombie; a takeover that replays without it could
//   miss what the zombie acknowledges after the replay);
// - acks in seq order: an incarnation acknowledges an append only once the WAL object holding it and every
//   object of its own below that one have landed (no acknowledgement above a hole).
// Invariant 6 (a completion names the epoch the stream closed at) and the proposer's node epoch are checked
// per entry in checker.ts.
import type { Command, LogEntry, MetaState } from "../../src/core/meta/index.ts";
import { parseWalKey } from "../../src/storage/keys.ts";
import { decodeWalObject } from "../../src/storage/wal-format.ts";
import { incarnationLabel, type History } from "./history.ts";
import type { Violation } from "./violations.ts";

const LOG_INVARIANT = {
  coordinator: "invariant 5 (only the lease holder coordinates, at its coordinator epoch)",
  epochs: "invariant 5 (epochs never decrease; stale epochs refused)",
  takeover: "invariant 1 (a takeover seals the dead chain before it completes)",
  ackOrder: "invariant 2 (an append is acknowledged only above a dense WAL chain)",
} as const;

export function checkLogEntries(history: History, out: Violation[]): void {
  for (let i = 0; i < history.journal.length; i++) {
    const { entry, before, step } = history.journal[i]!;
    checkCoordinatorCommand(entry, before, step, out);
    const after = history.journal[i + 1]?.before;
    if (after !== undefined) checkNodeEpochsKept(entry, before, after, step, out);
  }
  checkTakeoversSealed(history, out);
  checkAckOrder(history, out);
}

/** The coordinator a command claims to come from, with the lease it must hold. */
function coordinatorOf(command: Command): { nodeId: string; nodeEpoch: number; coordinatorEpoch: number } | null {
  if (command.type === "RenewLease") return command;
  const coordinated = command.type === "DeclareDead" || command.type === "ReassignStreams" || command.type === "CreateTable" || command.type === "AddPartition";
  return coordinated ? command.coordinator : null;
}

function checkCoordinatorCommand(entry: LogEntry, before: MetaState, step: number, out: Violation[]): void {
  const claimed = coordinatorOf(entry.command);
  if (claimed === null) return;
  const lease = before.lease;
  const holds =
    lease !== null &&
    lease.holder === claimed.nodeId &&
    lease.holderEpoch === claimed.nodeEpoch &&
    lease.coordinatorEpoch === claimed.coordinatorEpoch &&
    entry.nowMs < lease.expiresAtMs;
  if (holds) return;
  const label = incarnationLabel({ nodeId: claimed.nodeId, epoch: claimed.nodeEpoch });
  const held =
    lease === null
      ? "no lease"
      : `the lease held by ${incarnationLabel({ nodeId: lease.holder, epoch: lease.holderEpoch })} at coordinator epoch ${lease.coordinatorEpoch}, ` +
        `${entry.nowMs < lease.expiresAtMs ? "live" : "expired"}`;
  out.push({
    invariant: LOG_INVARIANT.coordinator,
    message: `log #${entry.index} (step ${step}) accepted ${entry.command.type} from ${label} at coordinator epoch ${claimed.coordinatorEpoch}, while the log had ${held}`,
    focus: [label, entry.command.type],
    step,
  });
}

function checkNodeEpochsKept(entry: LogEntry, before: MetaState, after: MetaState, step: number, out: Violation[]): void {
  for (const [nodeId, node] of before.nodes) {
    const now = after.nodes.get(nodeId);
    if (now !== undefined && now.epoch >= node.epoch) continue;
    out.push({
      invariant: LOG_INVARIANT.epochs,
      message:
        `log #${entry.index} (step ${step}, ${entry.command.type}) took ${nodeId} from epoch ${incarnationLabel({ nodeId, epoch: node.epoch })} ` +
        (now === undefined ? "to unregistered" : `down to ${incarnationLabel({ nodeId, epoch: now.epoch })}`),
      focus: [nodeId],
      step,
    });
  }
}

interface Seal {
  readonly epoch: number;
  readonly step: number;
}

function sealsByChain(history: History): Map<string, Seal[]> {
  const seals = new Map<string, Seal[]>();
  for (const write of history.writes) {
    if (!write.key.startsWith("wal/")) continue;
    const object = decodeWalObject(write.body, write.key);
    if (object.kind !== "seal") continue;
    const { nodeId } = parseWalKey(write.key);
    const list = seals.get(nodeId) ?? [];
    list.push({ epoch: object.sealEpoch, step: write.step });
    seals.set(nodeId, list);
  }
  return seals;
}

function checkTakeoversSealed(history: History, out: Violation[]): void {
  const seals = sealsByChain(history);
  for (const { entry, step } of history.journal) {
    const command = entry.command;
    if (command.type !== "CompleteTakeover") continue;
    const sealed = (seals.get(command.nodeId) ?? []).some((seal) => seal.epoch === command.nodeEpoch + 1 && seal.step <= step);
    if (sealed) continue;
    const dead = incarnationLabel({ nodeId: command.nodeId, epoch: command.nodeEpoch });
    out.push({
      invariant: LOG_INVARIANT.takeover,
      message: `log #${entry.index} (step ${step}) completed the takeover of ${dead} by ${incarnationLabel({ nodeId: command.by.nodeId, epoch: command.by.nodeEpoch })}, but no seal at its epoch + 1 had landed on wal/${command.nodeId}/`,
      focus: [dead, `wal/${command.nodeId}/`],
      step,
    });
  }
}

/** Where each landed data record is: its writer, stream name and end offset → the seq of its WAL object. */
function walSeqs(history: History): Map<string, number> {
  const seqs = new Map<string, number>();
  for (const write of history.writes) {
    for (const record of write.walData) {
      const key = `${write.owner} ${record.ownership.name ?? "?"} ${record.firstOffset + Buffer.byteLength(record.text, "utf8")}`;
      if (!seqs.has(key)) seqs.set(key, parseWalKey(write.key).seq);
    }
  }
  return seqs;
}

/** Per incarnation (label): the seq of the seal it started with, and the step each seq of its chain landed at. */
function chainsByIncarnation(history: History): Map<string, { startSeq: number; landed: Map<number, number> }> {
  const chains = new Map<string, { startSeq: number; landed: Map<number, number> }>();
  const landedByNode = new Map<string, Map<number, number>>();
  for (const write of history.writes) {
    if (!write.key.startsWith("wal/")) continue;
    const { nodeId, seq } = parseWalKey(write.key);
    const landed = landedByNode.get(nodeId) ?? new Map<number, number>();
    landedByNode.set(nodeId, landed);
    if (!landed.has(seq)) landed.set(seq, write.step);
    const object = decodeWalObject(write.body, write.key);
    const label = incarnationLabel({ nodeId, epoch: object.kind === "seal" ? object.sealEpoch : object.nodeEpoch });
    if (object.kind === "seal" && write.owner === label && !chains.has(label)) chains.set(label, { startSeq: seq, landed });
  }
  return chains;
}

/**
 * An append is acknowledged only once its WAL object and every object of its incarnation below it landed:
 * an acknowledgement above a hole is lost when a seal fills the hole (replay stops there). Checked at the
 * acknowledgement itself (the node's observers), not when the answer leaves: a subscription report may hold
 * the answer back until the hole is filled.
 */
function checkAckOrder(history: History, out: Violation[]): void {
  const seqs = walSeqs(history);
  const chains = chainsByIncarnation(history);
  for (const ack of history.acknowledged) {
    const label = incarnationLabel(ack.by);
    // A close, or a tail this incarnation did not write: no object of its own to compare.
    const seq = seqs.get(`${label} ${ack.stream} ${ack.tail}`);
    const chain = chains.get(label);
    if (seq === undefined || chain === undefined) continue;
    for (let below = chain.startSeq + 1; below <= seq; below++) {
      const landedStep = chain.landed.get(below);
      if (landedStep !== undefined && landedStep <= ack.step) continue;
      out.push({
        invariant: LOG_INVARIANT.ackOrder,
        message:
          `${label} acknowledged ${ack.stream} up to ${ack.tail} (WAL seq ${seq}) at step ${ack.step}, ` +
          `while its seq ${below} ${landedStep === undefined ? "never landed" : `landed only at step ${landedStep}`}`,
        focus: [label, ack.stream, `wal/${ack.by.nodeId}/`],
        step: ack.step,
      });
      break;
    }
  }
}
