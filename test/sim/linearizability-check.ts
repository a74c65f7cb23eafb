// The simulation's history as the linearizability checker (test/support/linearizability.ts) reads it, and
// its verdict as a violation (checker.ts calls it last). Time is the step: an operation is invoked at the
// step its first attempt was sent and answered at the step its answer reached the client. What the
// simulation's clients really do decides how each record becomes operations:
// - an acknowledged append (writer or producer, after any retries of the same (epoch, seq)) is one append
//   acknowledged at [start, end), between its first attempt and its acknowledgement;
// - an append without a definite answer may still take effect at any later step: unknown, never answered;
// - a producer's append answered as a duplicate is two operations: the attempt that took effect (unknown:
//   its own answer was lost), which took effect before the duplicate answer, and that answer;
// - an append refused with 404 took no effect and observed nothing the model judges: left out;
// - a read answered by a superseded incarnation (a zombie that has not noticed its successor) is left out:
//   it answers from its own older state, which the checker already tolerates as a notice (staleAnswer,
//   and a lost wake-up is not judged for one either); docs/architecture.md's invariants bound what a stale
//   view may do (misdirect, never lose or double data), not how old a zombie's read may be. The
//   acknowledgements of a zombie stay in: what it acknowledged landed and must be in the stream;
// - a read answered with Stream-Up-To-Date says its next offset was the tail when it was read;
// - an empty long-poll (204) says the tail was at its Stream-Next-Offset at some moment while it waited;
// - the final read's pages are marked final (its last page is up to date), so the checker may prune by it.
import { checkLinearizability, describeVerdict, type StreamOperation, type TimedOperation } from "../support/linearizability.ts";
import { superseded, type AppendRecord, type History } from "./history.ts";
import type { Violation } from "./violations.ts";

export function checkLinearizable(history: History, invariant: string): Violation[] {
  const operations = [...appendOperations(history), ...readOperations(history), ...pollOperations(history)];
  const verdict = checkLinearizability(operations);
  if (verdict.kind === "linearizable") return [];
  return [{ invariant, message: describeVerdict(verdict), focus: [verdict.stream] }];
}

function appendOperations(history: History): TimedOperation[] {
  const out: TimedOperation[] = [];
  for (const append of history.appends) {
    const timed = (respondedAt: number, outcome: Extract<StreamOperation, { kind: "append" }>["outcome"], label = `${append.token} ${append.outcome}`): TimedOperation => ({
      stream: append.stream,
      invokedAt: append.sentStep,
      respondedAt,
      op: { kind: "append", body: append.token, producer: append.producer, outcome },
      label: `${label} by ${append.client}`,
    });
    if (append.outcome === "acked" && append.ack !== undefined) out.push(timed(append.ack.step, { kind: "ok", start: append.ack.start, end: append.ack.end }));
    else if (append.outcome === "unknown") out.push(timed(Number.POSITIVE_INFINITY, { kind: "unknown" }));
    else if (append.outcome === "duplicate") out.push(...duplicateOperations(append, timed));
  }
  return out;
}

function duplicateOperations(
  append: AppendRecord,
  timed: (respondedAt: number, outcome: { kind: "unknown" } | { kind: "duplicate" }, label: string) => TimedOperation,
): TimedOperation[] {
  if (append.producer === null || append.duplicateStep === undefined) return [];
  const answered = append.duplicateStep;
  return [timed(answered, { kind: "unknown" }, `${append.token} (the attempt that landed)`), timed(answered, { kind: "duplicate" }, `${append.token} duplicate`)];
}

function readOperations(history: History): TimedOperation[] {
  return history.reads
    .filter((read) => !superseded(history, read.by, read.step))
    .map((read) => ({
      stream: read.stream,
      invokedAt: read.sentStep,
      respondedAt: read.step,
      op: { kind: "read", start: read.start, next: read.next, bytes: read.bytes, upToDate: read.upToDate, final: read.mode === "final" },
      label: `${read.mode} read of [${read.start}, ${read.next})${read.upToDate ? " up to date" : ""} by ${read.client}`,
    }));
}

function pollOperations(history: History): TimedOperation[] {
  return history.emptyPolls
    .filter((poll) => !superseded(history, poll.by, poll.answeredStep))
    .map((poll) => ({
      stream: poll.stream,
      invokedAt: poll.sentStep,
      respondedAt: poll.answeredStep,
      op: { kind: "read", start: poll.next, next: poll.next, bytes: "", upToDate: true },
      label: `empty long-poll at ${poll.offset} (told ${poll.next}) by ${poll.client}`,
    }));
}
