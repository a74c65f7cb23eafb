// The linearizability checker (test/support/linearizability.ts) on small hand-made histories: for each
// model operation a history it must reject, beside a close variant it must accept; then a property: a
// history drawn from a random sequential run of a stream, each operation given an interval around its
// instant, is accepted, and the same history with one response changed is rejected.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkLinearizability, describeVerdict, type StreamOperation, type TimedOperation } from "../support/linearizability.ts";

type Producer = { id: string; epoch: number; seq: number };

const timed = (invokedAt: number, respondedAt: number, op: StreamOperation, label = describeOp(op)): TimedOperation => ({ stream: "s", invokedAt, respondedAt, op, label });
const acked = (body: string, start: number, producer: Producer | null = null): StreamOperation => ({ kind: "append", body, producer, outcome: { kind: "ok", start, end: start + body.length } });
const unknown = (body: string, producer: Producer | null = null): StreamOperation => ({ kind: "append", body, producer, outcome: { kind: "unknown" } });
const duplicate = (body: string, producer: Producer): StreamOperation => ({ kind: "append", body, producer, outcome: { kind: "duplicate" } });
const refused = (body: string, reason: "closed" | "producer", producer: Producer | null = null): StreamOperation => ({ kind: "append", body, producer, outcome: { kind: "rejected", reason } });
const read = (start: number, bytes: string, upToDate: boolean, final = false): StreamOperation => ({ kind: "read", start, next: start + bytes.length, bytes, upToDate, final });
const close: StreamOperation = { kind: "close", outcome: "ok" };
const p = (seq: number, epoch = 0): Producer => ({ id: "p", epoch, seq });
const INF = Number.POSITIVE_INFINITY;

function describeOp(op: StreamOperation): string {
  if (op.kind === "read") return `read ${op.start}:${JSON.stringify(op.bytes)}`;
  if (op.kind === "close") return `close ${op.outcome}`;
  return `append ${op.body} ${op.outcome.kind}`;
}

const verdict = (history: TimedOperation[]): string => checkLinearizability(history).kind;

describe("the linearizability checker: appends acknowledged at an offset", () => {
  it("rejects two appends acknowledged at the same offset (an offset is never reused)", () => {
    expect(verdict([timed(0, 1, acked("a", 0)), timed(2, 3, acked("b", 0))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0)), timed(2, 3, acked("b", 1))])).toBe("linearizable");
  });

  it("rejects an append placed before one acknowledged before it was sent (real-time order)", () => {
    expect(verdict([timed(0, 1, acked("a", 1)), timed(2, 3, acked("b", 0))])).toBe("violation");
    expect(verdict([timed(0, 4, acked("a", 1)), timed(2, 3, acked("b", 0))])).toBe("linearizable");
  });

  it("rejects an acknowledgement that does not end where its body does", () => {
    const wrongEnd: StreamOperation = { kind: "append", body: "ab", producer: null, outcome: { kind: "ok", start: 0, end: 3 } };
    expect(verdict([timed(0, 1, wrongEnd)])).toBe("violation");
    expect(verdict([timed(0, 1, acked("ab", 0))])).toBe("linearizable");
  });
});

describe("the linearizability checker: appends of unknown outcome", () => {
  it("rejects an unknown append seen twice (it takes effect at most once)", () => {
    expect(verdict([timed(0, INF, unknown("a")), timed(1, 2, read(0, "aa", true))])).toBe("violation");
    expect(verdict([timed(0, INF, unknown("a")), timed(1, 2, read(0, "a", true))])).toBe("linearizable");
  });

  it("rejects an unknown append seen before it was sent", () => {
    expect(verdict([timed(0, 1, read(0, "a", false)), timed(2, INF, unknown("a"))])).toBe("violation");
    expect(verdict([timed(0, 3, read(0, "a", false)), timed(2, INF, unknown("a"))])).toBe("linearizable");
  });

  it("accepts an unknown append that took no effect, even when its attempt is known to have ended", () => {
    // Its response bound is finite (an attempt that ended without a definite answer), so it cannot be put off to the end.
    const history = [timed(0, 1, unknown("a")), timed(0.5, 3, acked("b", 0)), timed(4, 5, read(0, "b", true))];
    expect(verdict(history)).toBe("linearizable");
    // Nor can it take effect after that bound: here after an append sent once it had ended.
    expect(verdict([timed(0, 1, unknown("a")), timed(2, 3, acked("b", 0)), timed(4, 5, read(0, "ba", true))])).toBe("violation");
  });

  it("accepts an unknown append that never took effect, and rejects an acknowledged one the final read lacks", () => {
    expect(verdict([timed(0, INF, unknown("a")), timed(0, 1, acked("b", 0)), timed(2, 3, read(0, "b", true, true))])).toBe("linearizable");
    expect(verdict([timed(0, INF, unknown("a")), timed(0, 1, acked("b", 0)), timed(2, 3, read(0, "", true, true))])).toBe("violation");
  });
});

describe("the linearizability checker: idempotent producers", () => {
  it("rejects a duplicate of a (epoch, seq) that never took effect", () => {
    expect(verdict([timed(0, 1, duplicate("a", p(0)))])).toBe("violation");
    expect(verdict([timed(0, INF, unknown("a", p(0))), timed(0, 1, duplicate("a", p(0)))])).toBe("linearizable");
  });

  it("rejects a seq acknowledged after a gap, and accepts seq last+1", () => {
    expect(verdict([timed(0, 1, acked("a", 0, p(0))), timed(2, 3, acked("b", 1, p(2)))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0, p(0))), timed(2, 3, acked("b", 1, p(1)))])).toBe("linearizable");
  });

  it("rejects a stale epoch acknowledged, and accepts it refused", () => {
    expect(verdict([timed(0, 1, acked("a", 0, p(0, 1))), timed(2, 3, acked("b", 1, p(1, 0)))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0, p(0, 1))), timed(2, 3, refused("b", "producer", p(1, 0)))])).toBe("linearizable");
  });

  it("rejects a new epoch that does not start at seq 0", () => {
    expect(verdict([timed(0, 1, acked("a", 0, p(0))), timed(2, 3, acked("b", 1, p(1, 1)))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0, p(0))), timed(2, 3, acked("b", 1, p(0, 1)))])).toBe("linearizable");
  });

  it("rejects a producer refusal of an append the rules accept", () => {
    expect(verdict([timed(0, 1, refused("a", "producer", p(0)))])).toBe("violation");
    expect(verdict([timed(0, 1, refused("a", "producer", p(1)))])).toBe("linearizable");
  });

  it("rejects a retry acknowledged as new data after its first attempt took effect", () => {
    expect(verdict([timed(0, 1, acked("a", 0, p(0))), timed(2, 3, acked("a", 1, p(0)))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0, p(0))), timed(2, 3, duplicate("a", p(0)))])).toBe("linearizable");
  });
});

describe("the linearizability checker: reads", () => {
  it("rejects a read of bytes no append wrote", () => {
    expect(verdict([timed(0, 1, acked("a", 0)), timed(2, 3, read(0, "x", false))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0)), timed(2, 3, read(0, "a", false))])).toBe("linearizable");
  });

  it("rejects an up-to-date read that misses an append acknowledged before it began", () => {
    expect(verdict([timed(0, 1, acked("a", 0)), timed(2, 3, read(0, "", true))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0)), timed(0.5, 3, read(0, "", true))])).toBe("linearizable");
  });

  it("rejects a read that sees an append sent after the read was answered", () => {
    expect(verdict([timed(0, 1, read(0, "a", false)), timed(2, 3, acked("a", 0))])).toBe("violation");
    expect(verdict([timed(0, 2.5, read(0, "a", false)), timed(2, 3, acked("a", 0))])).toBe("linearizable");
  });

  it("rejects an up-to-date read older than one that answered before it began (no going back)", () => {
    const appends = [timed(0, 1, acked("a", 0)), timed(0, 10, acked("b", 1))];
    expect(verdict([...appends, timed(5, 6, read(0, "ab", true)), timed(7, 8, read(0, "a", true))])).toBe("violation");
    expect(verdict([...appends, timed(5, 6, read(0, "ab", true)), timed(4, 8, read(0, "a", true))])).toBe("linearizable");
  });
});

describe("the linearizability checker: close", () => {
  it("rejects an append acknowledged after the close was", () => {
    expect(verdict([timed(0, 1, close), timed(2, 3, acked("a", 0))])).toBe("violation");
    expect(verdict([timed(0, 1, close), timed(0.5, 3, acked("a", 0))])).toBe("linearizable");
  });

  it("rejects an append refused as closed when no close could precede it", () => {
    expect(verdict([timed(0, 1, refused("a", "closed")), timed(2, 3, close)])).toBe("violation");
    expect(verdict([timed(0, 1, refused("a", "closed")), timed(0.5, 3, close)])).toBe("linearizable");
  });

  it("a closed stream still answers a producer's duplicate, and refuses its next seq", () => {
    const before = [timed(0, 1, acked("a", 0, p(0))), timed(2, 3, close)];
    expect(verdict([...before, timed(4, 5, duplicate("a", p(0))), timed(6, 7, refused("b", "closed", p(1)))])).toBe("linearizable");
    expect(verdict([...before, timed(4, 5, duplicate("a", p(0))), timed(6, 7, acked("b", 1, p(1)))])).toBe("violation");
  });
});

describe("the linearizability checker: verdicts", () => {
  it("names the stream and the operation it could not place", () => {
    const result = checkLinearizability([timed(0, 1, acked("a", 0), "A"), timed(2, 3, acked("b", 0), "B"), timed(2.5, 4, acked("c", 5), "C")]);
    expect(result).toMatchObject({ kind: "violation", stream: "s", linearized: ["A"], unplaced: ["B", "C"] });
    expect(describeVerdict(result)).toMatch(/^s: not linearizable: the longest linearizable prefix has 1 of 3 operations \(A \[0, 1\]\); then B \[2, 3\] cannot be placed before its response, nor first any of C \[2.5, 4\]$/);
  });

  it("answers undecided, not linearizable, when the search budget runs out", () => {
    const history = Array.from({ length: 6 }, (_, i) => timed(0, INF, unknown(`u${i}`)));
    const result = checkLinearizability([...history, timed(1, 2, read(0, "", false))], 3);
    expect(result.kind).toBe("undecided");
    expect(describeVerdict(result)).toContain("undecided (search budget exhausted, counted as a failure)");
  });

  it("remembers what it explored: ten concurrent reads before an impossible append take about 2^10 steps, not 10!", () => {
    const reads = Array.from({ length: 10 }, () => timed(0, 10, read(0, "", false)));
    const result = checkLinearizability([...reads, timed(11, 12, acked("a", 5))], 20_000);
    expect(result.kind).toBe("violation");
  });

  it("refuses a history with an answer before its invocation (a recording bug, not a verdict)", () => {
    expect(() => checkLinearizability([timed(2, 1, acked("a", 0))])).toThrow(/answered at 1, before it was invoked at 2/);
  });

  it("checks each stream alone: a stream's history does not excuse another's", () => {
    const other = (o: TimedOperation): TimedOperation => ({ ...o, stream: "t" });
    expect(verdict([timed(0, 1, acked("a", 0)), other(timed(2, 3, acked("b", 1)))])).toBe("violation");
    expect(verdict([timed(0, 1, acked("a", 0)), other(timed(2, 3, acked("b", 0)))])).toBe("linearizable");
  });
});

/** One move of a random sequential run, drawn as plain numbers and read by `runOf`. */
interface Move {
  readonly kind: number;
  readonly x: number;
  readonly before: number;
  readonly after: number;
}

const moves = fc.array(fc.record({ kind: fc.nat(99), x: fc.nat(999), before: fc.nat(25), after: fc.nat(25) }), { minLength: 1, maxLength: 40 });

/**
 * A sequential run of a stream, written independently of the checker's model: move i happens at instant
 * 10·i and is given the interval [10·i - before, 10·i + after] (unknown outcomes: no end). It ends with a
 * final read of the whole stream after everything answered.
 */
function runOf(draws: readonly Move[]): TimedOperation[] {
  let content = "";
  let closed = false;
  const producers = new Map<string, { epoch: number; last: number }>();
  const history: TimedOperation[] = [];
  draws.forEach((move, i) => {
    const at = 10 * (i + 1);
    const add = (op: StreamOperation, known = true): void => void history.push(timed(at - move.before, known ? at + move.after : INF, op));
    const body = `<${i}>`;
    if (move.kind < 35) {
      // A plain append: acknowledged, unknown (with or without effect), or refused by a closed stream.
      if (closed) return add(refused(body, "closed"));
      const effect = move.x % 4 !== 0;
      if (effect) content += body;
      return add(move.x % 3 === 0 ? unknown(body) : effect ? acked(body, content.length - body.length) : unknown(body), effect && move.x % 3 !== 0);
    }
    if (move.kind < 60) {
      // A producer (one of two) appends its next seq, retries its last one, or starts a new epoch.
      const id = move.x % 2 === 0 ? "p" : "q";
      const state = producers.get(id);
      const producer = { id, epoch: state?.epoch ?? 0, seq: state === undefined ? 0 : state.last + 1 };
      if (state !== undefined && move.x % 5 === 0) return add(duplicate(`?${i}`, { ...producer, seq: state.last }));
      if (state !== undefined && move.x % 7 === 0) Object.assign(producer, { epoch: state.epoch + 1, seq: 0 });
      if (closed) return add(refused(body, "closed", producer));
      producers.set(id, { epoch: producer.epoch, last: producer.seq });
      content += body;
      return add(acked(body, content.length - body.length, producer));
    }
    if (move.kind < 95) {
      const start = move.x % (content.length + 1);
      const next = start + (move.before % (content.length - start + 1));
      return add(read(start, content.slice(start, next), next === content.length));
    }
    closed = true;
    return add(close);
  });
  const end = 10 * (draws.length + 100);
  // Half the runs mark it final, so the search also runs without the final content to prune by.
  history.push(timed(end, end + 1, read(0, content, true, draws.length % 2 === 0), "final read"));
  return history;
}

/** Changes one response so that no linearization can exist, or null when the history has nothing to change. */
function mutate(history: readonly TimedOperation[], which: number): TimedOperation[] | null {
  const final = history.at(-1)!;
  const content = final.op.kind === "read" ? final.op.bytes : "";
  const acks = history.filter((o) => o.op.kind === "append" && o.op.outcome.kind === "ok");
  const replace = (target: TimedOperation, op: StreamOperation): TimedOperation[] => history.map((o) => (o === target ? { ...o, op } : o));
  if (which === 0 && content.length > 0) {
    // A read answered with bytes the stream never had.
    return replace(final, { ...final.op, bytes: "#".repeat(content.length) } as StreamOperation);
  }
  if (which === 1 && acks.length >= 2) {
    // An acknowledgement at an offset another acknowledgement already holds.
    const [first, second] = acks.map((o) => o.op).filter((op): op is Extract<StreamOperation, { kind: "append" }> => op.kind === "append");
    const start = first!.outcome.kind === "ok" ? first!.outcome.start : 0;
    return replace(acks[1]!, { ...second!, outcome: { kind: "ok", start, end: start + second!.body.length } });
  }
  const last = acks.at(-1);
  if (last === undefined || last.op.kind !== "append" || last.op.outcome.kind !== "ok") return null;
  // The final read, up to date, misses an append acknowledged before it began.
  return replace(final, { ...final.op, next: last.op.outcome.start, bytes: content.slice(0, last.op.outcome.start) } as StreamOperation);
}

describe("the linearizability checker on random sequential runs", () => {
  it("accepts every history drawn from a sequential run of the stream", () => {
    fc.assert(
      fc.property(moves, (draws) => {
        const result = checkLinearizability(runOf(draws));
        expect(result.kind, describeVerdict(result)).toBe("linearizable");
      }),
      { numRuns: 300 },
    );
  });

  it("rejects the same history with one response changed", () => {
    fc.assert(
      fc.property(moves, fc.nat(2), (draws, which) => {
        const mutated = mutate(runOf(draws), which);
        if (mutated === null) return fc.pre(false);
        expect(checkLinearizability(mutated).kind).toBe("violation");
      }),
      { numRuns: 300 },
    );
  });
});
