// apply(state, command, ctx) -> {state, result}: pure, total and deterministic (invariant 4, docs/architecture.md).
// Anything that is not a well-formed command is rejected as `invalid`; a rejection or a no-op returns the
// very state it was given; an accepted change returns a new state whose version is one higher (the index of
// the log entry that holds the command). Nothing is ever half-applied: rules build the next state and
// return it whole, or return the old one.
import { domainError } from "../errors.ts";
import type { AnyResult, ApplyContext, Command, CommandType, ResultOf } from "./commands.ts";
import { claimTakeover, completeTakeover, declareDead, reassignStreams } from "./failover-rules.ts";
import { acquireLease, renewLease } from "./lease-rules.ts";
import { registerNode, setDraining, setSlots } from "./node-rules.ts";
import type { Outcome } from "./outcome.ts";
import { placeStream } from "./placement.ts";
import type { MetaState } from "./state.ts";
import { claimStream } from "./claim-stream.ts";
import { closeStream, createStream, deleteStream, openStream } from "./stream-rules.ts";
import { addPartition, commitBucketSnapshot, createTable, dropTable } from "./table-rules.ts";
import { beginTransfer, completeTransfer } from "./transfer-rules.ts";
import { recordTiering } from "./tiering-rules.ts";
import { validateCommand } from "./validate.ts";

export interface Applied<T extends CommandType = CommandType> {
  readonly state: MetaState;
  readonly result: ResultOf<T>;
}

function dispatch(state: MetaState, command: Command, ctx: ApplyContext): Outcome<unknown> {
  switch (command.type) {
    case "RegisterNode":
      return registerNode(state, command);
    case "SetSlots":
      return setSlots(state, command);
    case "SetDraining":
      return setDraining(state, command);
    case "CreateStream":
      return createStream(state, command);
    case "ClaimStream":
      return claimStream(state, command);
    case "DeleteStream":
      return deleteStream(state, command);
    case "PlaceStream":
      return placeStream(state, command);
    case "OpenStream":
      return openStream(state, command);
    case "CloseStream":
      return closeStream(state, command);
    case "BeginTransfer":
      return beginTransfer(state, command);
    case "CompleteTransfer":
      return completeTransfer(state, command);
    case "AcquireLease":
      return acquireLease(state, command, ctx);
    case "RenewLease":
      return renewLease(state, command, ctx);
    case "DeclareDead":
      return declareDead(state, command, ctx.nowMs);
    case "ReassignStreams":
      return reassignStreams(state, command, ctx.nowMs);
    case "ClaimTakeover":
      return claimTakeover(state, command, ctx.nowMs);
    case "CompleteTakeover":
      return completeTakeover(state, command);
    case "CreateTable":
      return createTable(state, command, ctx.nowMs);
    case "AddPartition":
      return addPartition(state, command, ctx.nowMs);
    case "DropTable":
      return dropTable(state, command);
    case "CommitBucketSnapshot":
      return commitBucketSnapshot(state, command);
    case "RecordTiering":
      return recordTiering(state, command, ctx.nowMs);
  }
}

export function apply<C extends Command>(state: MetaState, command: C, ctx: ApplyContext): Applied<C["type"]>;
export function apply(state: MetaState, command: unknown, ctx: ApplyContext): Applied;
export function apply(state: MetaState, command: unknown, ctx: ApplyContext): Applied {
  const invalid = validateCommand(command);
  if (invalid !== null) return { state, result: { ok: false, error: invalid } };
  if (!Number.isSafeInteger(ctx.nowMs) || ctx.nowMs < 0) {
    return { state, result: { ok: false, error: domainError("invalid", "ctx.nowMs must be a non-negative integer") } };
  }
  const outcome = dispatch(state, command as Command, ctx);
  const result = outcome.result as AnyResult;
  if (!result.ok || !result.changed) return { state, result };
  return { state: { ...outcome.state, version: state.version + 1 }, result };
}

/** A log entry as MetaLog stores it: the command and the time it was accepted at. */
export interface LogEntry {
  readonly index: number;
  readonly command: Command;
  readonly nowMs: number;
}

/**
 * Replays entries in order. Every entry in a log changed the state when it was first applied, so it must
 * again: anything else means the log or the code is corrupt, and replay stops loudly instead of guessing.
 */
export function replay(state: MetaState, entries: Iterable<LogEntry>): MetaState {
  let current = state;
  for (const entry of entries) {
    if (entry.index !== current.version + 1) {
      throw new Error(`log entry ${entry.index} does not follow version ${current.version}`);
    }
    const { state: next, result } = apply(current, entry.command, { nowMs: entry.nowMs });
    if (!result.ok || !result.changed) {
      throw new Error(`log entry ${entry.index} (${entry.command.type}) did not apply on replay`);
    }
    current = next;
  }
  return current;
}
