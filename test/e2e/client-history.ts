// What the end-to-end clients (the SIGKILL rounds, the failover writers) did and heard, recorded for the
// linearizability checker (test/support/linearizability.ts): each operation with the moment it was invoked
// and the moment its answer arrived (performance.now(), one clock for the whole test process), and its
// outcome. An append without a definite answer (a dropped connection, a timeout, an error that may follow
// a landed write) is unknown and never answered: it may take effect at any later moment. Offsets are
// mink's (parseOffset: the byte position); bodies are ASCII, so a string's length is its byte length.
import { parseOffset } from "../../src/core/protocol/offsets.ts";
import { checkLinearizability, describeVerdict, type StreamOperation, type TimedOperation } from "../support/linearizability.ts";

type Producer = { readonly id: string; readonly epoch: number; readonly seq: number };

export class ClientHistory {
  private readonly operations: TimedOperation[] = [];

  /** The clock every invocation and answer is read from. */
  now(): number {
    return performance.now();
  }

  /** An append answered 2xx with `nextOffset`: acknowledged at [next - length, next). */
  acked(stream: string, body: string, producer: Producer | null, invokedAt: number, nextOffset: string): void {
    const end = position(nextOffset);
    this.add(stream, invokedAt, this.now(), { kind: "append", body, producer, outcome: { kind: "ok", start: end - body.length, end } }, `${label(body)} acked`);
  }

  /** An append with no definite answer: it may take effect at any moment after `invokedAt`, or never. */
  unknown(stream: string, body: string, producer: Producer | null, invokedAt: number): void {
    this.add(stream, invokedAt, Number.POSITIVE_INFINITY, { kind: "append", body, producer, outcome: { kind: "unknown" } }, `${label(body)} unknown`);
  }

  /**
   * A producer's retry answered as a duplicate (204): an earlier attempt, sent at `firstSentAt`, took effect
   * before this answer (two operations: that attempt, whose own answer was lost, and this one).
   */
  duplicate(stream: string, body: string, producer: Producer, firstSentAt: number, invokedAt: number): void {
    const now = this.now();
    this.add(stream, firstSentAt, now, { kind: "append", body, producer, outcome: { kind: "unknown" } }, `${label(body)} (the attempt that landed)`);
    this.add(stream, invokedAt, now, { kind: "append", body, producer, outcome: { kind: "duplicate" } }, `${label(body)} duplicate`);
  }

  /** A catch-up read from `offset` ("-1": the start) that answered `bytes` up to `nextOffset`. */
  read(stream: string, offset: string, invokedAt: number, answer: { bytes: string; nextOffset: string; upToDate: boolean }, final: boolean): void {
    const start = offset === "-1" ? 0 : position(offset);
    const op: StreamOperation = { kind: "read", start, next: position(answer.nextOffset), bytes: answer.bytes, upToDate: answer.upToDate, final };
    this.add(stream, invokedAt, this.now(), op, `${final ? "final " : ""}read [${start}, ${op.next})${answer.upToDate ? " up to date" : ""}`);
  }

  /** The checker's verdict as one line; it starts with "linearizable" only when every stream is. */
  verdict(): string {
    return describeVerdict(checkLinearizability(this.operations));
  }

  private add(stream: string, invokedAt: number, respondedAt: number, op: StreamOperation, what: string): void {
    this.operations.push({ stream, invokedAt, respondedAt, op, label: what });
  }
}

function position(offset: string): number {
  const at = parseOffset(offset);
  if (at === null) throw new Error(`not an offset mink issues: ${offset}`);
  return at;
}

/** A body as explanations name it: its first bytes. */
function label(body: string): string {
  return body.length <= 24 ? body : `${body.slice(0, 20)}...`;
}
