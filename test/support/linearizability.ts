// A linearizability checker for client histories of durable streams (issue 24), shared by the simulation
// (test/sim/linearizability-check.ts) and the SIGKILL and failover end-to-end tests. Pure: no I/O.
//
// A history is a list of operations, each on one stream, with the time it was invoked and the time its
// response reached the client (+Infinity when no definite answer came). It is linearizable when every
// operation can be given one instant inside its interval such that, taken in that order, a sequential
// stream (the model below) gives every operation the answer the client heard. Operations on different
// streams never constrain each other, so each stream is checked alone (P-compositionality).
//
// The search is Wing & Gong's: walk the not-yet-linearized operations whose invocations come before the
// first pending response, try each as the next one, backtrack when a response is reached whose operation
// could not be placed. Lowe's memoisation prunes it: a (set of linearized operations, model state) pair
// already explored is never explored again. The model state is identified by the order of the operations
// that changed it (a 64-bit digest): the content, the producers' (epoch, seq) and the closed flag are all
// functions of that order.
//
// The model mirrors mink's append table (src/core/protocol/append.ts, producer.ts): appends go at the
// tail; a producer's (epoch, seq) appends when seq is last+1 in its epoch (or 0 for a new producer or a
// higher epoch), is a duplicate (no effect) when seq <= last in its epoch, and is refused otherwise
// (a stale epoch, a gap); a closed stream refuses appends, but still answers a producer's duplicate.
// Body strings stand for bytes: callers pass text whose length is its byte length (ASCII, or latin1).
import { initialState, modelStep, type ModelState, type StreamOperation } from "./stream-model.ts";

export type { StreamOperation } from "./stream-model.ts";

/** One client operation on one stream, with when it was invoked and answered (same clock for all). */
export interface TimedOperation {
  readonly stream: string;
  readonly invokedAt: number;
  /** +Infinity: no definite answer (the request may still take effect at any later time). */
  readonly respondedAt: number;
  readonly op: StreamOperation;
  /** How explanations name it (a token, a client and a step). */
  readonly label: string;
}

export type Verdict =
  | { readonly kind: "linearizable"; readonly streams: number; readonly steps: number }
  | {
      readonly kind: "violation";
      readonly stream: string;
      readonly explanation: string;
      /** The labels of the longest linearizable prefix the search found, in its order. */
      readonly linearized: readonly string[];
      /** The operation whose response came before it could be placed after that prefix, then its rivals. */
      readonly unplaced: readonly string[];
    }
  | { readonly kind: "undecided"; readonly stream: string; readonly explanation: string };

/** Model steps allowed per stream before the verdict is "undecided". */
const DEFAULT_BUDGET_STEPS = 2_000_000;
/** How many operations of the linearized prefix an explanation lists (the last ones). */
const EXPLAIN_PREFIX_OPS = 8;

/** Checks every stream of `history`; the first stream that is not linearizable (or undecided) decides. */
export function checkLinearizability(history: readonly TimedOperation[], budgetSteps = DEFAULT_BUDGET_STEPS): Verdict {
  const byStream = new Map<string, TimedOperation[]>();
  for (const operation of history) {
    if (!(operation.invokedAt <= operation.respondedAt)) throw new Error(`${operation.label} on ${operation.stream}: answered at ${operation.respondedAt}, before it was invoked at ${operation.invokedAt}`);
    const list = byStream.get(operation.stream);
    if (list === undefined) byStream.set(operation.stream, [operation]);
    else list.push(operation);
  }
  let steps = 0;
  for (const [stream, operations] of byStream) {
    const outcome = searchStream(stream, operations, budgetSteps);
    if (typeof outcome !== "number") return outcome;
    steps += outcome;
  }
  return { kind: "linearizable", streams: byStream.size, steps };
}

/** A human-readable line for a verdict (what the callers print and fail with). */
export function describeVerdict(verdict: Verdict): string {
  if (verdict.kind === "linearizable") return `linearizable (${verdict.streams} streams, ${verdict.steps} model steps)`;
  return `${verdict.stream}: ${verdict.kind === "violation" ? "not linearizable" : "undecided (search budget exhausted, counted as a failure)"}: ${verdict.explanation}`;
}

/**
 * The final content of a stream, when the history proves it: reads marked final, contiguous from 0, the
 * last one up to date, all invoked after every other operation with a definite answer responded, and every
 * operation without a definite answer an append or close of unknown outcome. Then (the soundness argument)
 * in any linearization the operations placed after the final reads are unknown-outcome appends and closes
 * only, nothing observes their effects, so taking each of them as "no effect" is a linearization too; in
 * it every effect precedes the final reads, so every append that takes effect at tail t has exactly the
 * bytes of the final content at t. The search may therefore refuse any other effect, and drop outright an
 * unknown-outcome append whose body is nowhere in the final content.
 */
function provenFinalContent(operations: readonly TimedOperation[]): string | null {
  const finals = operations.filter((o) => o.op.kind === "read" && o.op.final === true).sort((a, b) => a.invokedAt - b.invokedAt);
  if (finals.length === 0) return null;
  const firstFinalAt = finals[0]!.invokedAt;
  let content = "";
  for (const [i, { op }] of finals.entries()) {
    if (op.kind !== "read" || op.start !== content.length || (i === finals.length - 1) !== op.upToDate) return null;
    content += op.bytes;
  }
  for (const o of operations) {
    if (o.op.kind === "read" && o.op.final === true) continue;
    const unknown = (o.op.kind === "append" && o.op.outcome.kind === "unknown") || (o.op.kind === "close" && o.op.outcome === "unknown");
    if (o.respondedAt === Number.POSITIVE_INFINITY ? !unknown : o.respondedAt >= firstFinalAt) return null;
  }
  return content;
}

interface Entry {
  readonly op: number;
  readonly call: boolean;
  readonly time: number;
  prev: Entry | null;
  next: Entry | null;
  /** A call's return entry (a return's is itself). */
  match: Entry;
}

/** The call and return entries in time order (calls before returns at the same time: concurrent), linked after a head. */
function buildEntries(operations: readonly TimedOperation[]): Entry {
  const entries: Entry[] = [];
  operations.forEach((o, op) => {
    const ret: Entry = { op, call: false, time: o.respondedAt, prev: null, next: null, match: null as unknown as Entry };
    ret.match = ret;
    entries.push({ op, call: true, time: o.invokedAt, prev: null, next: null, match: ret }, ret);
  });
  entries.sort((a, b) => a.time - b.time || (a.call === b.call ? a.op - b.op : a.call ? -1 : 1));
  const head: Entry = { op: -1, call: false, time: Number.NEGATIVE_INFINITY, prev: null, next: null, match: null as unknown as Entry };
  let last = head;
  for (const entry of entries) {
    last.next = entry;
    entry.prev = last;
    last = entry;
  }
  return head;
}

function lift(call: Entry): void {
  call.prev!.next = call.next;
  if (call.next !== null) call.next.prev = call.prev;
  const ret = call.match;
  ret.prev!.next = ret.next;
  if (ret.next !== null) ret.next.prev = ret.prev;
}

function unlift(call: Entry): void {
  const ret = call.match;
  ret.prev!.next = ret;
  if (ret.next !== null) ret.next.prev = ret;
  call.prev!.next = call;
  if (call.next !== null) call.next.prev = call;
}

/** The set of linearized operations, as a compact string key. */
class OpSet {
  private readonly words: Uint16Array;
  constructor(size: number) {
    this.words = new Uint16Array(Math.ceil(size / 16) + 1);
  }
  set(op: number, on: boolean): void {
    const bit = 1 << (op & 15);
    const at = op >> 4;
    this.words[at] = on ? this.words[at]! | bit : this.words[at]! & ~bit;
  }
  key(): string {
    let out = "";
    for (let i = 0; i < this.words.length; i += 4096) out += String.fromCharCode(...this.words.subarray(i, i + 4096));
    return out;
  }
}

interface Frame {
  readonly call: Entry;
  readonly state: ModelState;
  readonly choice: number;
}

/** Wing & Gong with Lowe's cache over one stream: the number of model steps taken, or a verdict. */
function searchStream(stream: string, all: readonly TimedOperation[], budgetSteps: number): number | Verdict {
  const finalContent = provenFinalContent(all);
  const operations = finalContent === null ? all : all.filter((o) => !droppable(o.op, finalContent));
  const head = buildEntries(operations);
  const linearized = new OpSet(operations.length);
  const seen = new Set<string>();
  const stack: Frame[] = [];
  const deepest = { depth: -1, prefix: [] as number[], blocked: -1, pending: [] as number[] };
  let state = initialState(finalContent);
  let entry = head.next;
  let firstChoice = 0;
  let steps = 0;
  while (head.next !== null) {
    // Every call's return follows it in the list, and the walk stops at the first return: never past the end.
    if (entry === null) throw new Error("linearizability search walked past the last entry");
    if (entry.call) {
      const choices = modelStep(state, operations[entry.op]!.op, entry.op);
      steps++;
      let placed = false;
      for (let choice = firstChoice; choice < choices.length && !placed; choice++) {
        linearized.set(entry.op, true);
        const next = choices[choice]!;
        const key = `${linearized.key()}|${next.digest}`;
        if (seen.has(key)) {
          linearized.set(entry.op, false);
          continue;
        }
        seen.add(key);
        stack.push({ call: entry, state, choice });
        state = next;
        lift(entry);
        placed = true;
      }
      firstChoice = 0;
      entry = placed ? head.next : entry.next;
      if (steps > budgetSteps) return { kind: "undecided", stream, explanation: `no verdict after ${budgetSteps} model steps over ${operations.length} operations` };
      continue;
    }
    if (stack.length > deepest.depth) remember(deepest, stack, entry, head);
    const frame = stack.pop();
    if (frame === undefined) return violation(stream, operations, deepest, finalContent);
    linearized.set(frame.call.op, false);
    unlift(frame.call);
    state = frame.state;
    entry = frame.call;
    firstChoice = frame.choice + 1;
  }
  return steps;
}

/** An unknown-outcome append that cannot have taken effect, by the final content (see provenFinalContent). */
function droppable(op: StreamOperation, finalContent: string): boolean {
  return op.kind === "append" && op.outcome.kind === "unknown" && !finalContent.includes(op.body);
}

interface Deepest {
  depth: number;
  prefix: number[];
  blocked: number;
  pending: number[];
}

/** Keeps the longest linearized prefix seen, the operation whose response came unplaced, and its rivals. */
function remember(deepest: Deepest, stack: readonly Frame[], blocked: Entry, head: Entry): void {
  deepest.depth = stack.length;
  deepest.prefix = stack.map((frame) => frame.call.op);
  deepest.blocked = blocked.op;
  deepest.pending = [];
  for (let e = head.next; e !== null && e !== blocked; e = e.next) if (e.call && e.op !== blocked.op) deepest.pending.push(e.op);
}

function violation(stream: string, operations: readonly TimedOperation[], deepest: Deepest, finalContent: string | null): Verdict {
  const label = (op: number): string => operations[op]!.label;
  return {
    kind: "violation",
    stream,
    explanation: explain(operations, deepest, finalContent),
    linearized: deepest.prefix.map(label),
    unplaced: [deepest.blocked, ...deepest.pending].map(label),
  };
}

function explain(operations: readonly TimedOperation[], deepest: Deepest, finalContent: string | null): string {
  const name = (op: number): string => {
    const o = operations[op]!;
    return `${o.label} [${o.invokedAt}, ${o.respondedAt}]`;
  };
  const prefix = deepest.prefix.slice(-EXPLAIN_PREFIX_OPS).map(name);
  const skipped = deepest.prefix.length - prefix.length;
  return (
    `the longest linearizable prefix has ${deepest.prefix.length} of ${operations.length} operations` +
    (prefix.length === 0 ? "" : ` (${skipped > 0 ? `..., ` : ""}${prefix.join(", ")})`) +
    `; then ${name(deepest.blocked)} cannot be placed before its response` +
    (deepest.pending.length === 0 ? "" : `, nor first any of ${deepest.pending.slice(0, EXPLAIN_PREFIX_OPS).map(name).join(", ")}`) +
    (finalContent === null ? "" : ` (every effect held to the ${finalContent.length} bytes of the final read)`)
  );
}
