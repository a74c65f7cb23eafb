// Liveness of live reads, as measured properties rather than outcomes (a lost wake-up still ends within the
// long-poll timeout, so an outcome check never sees it):
// - a long-poll that returned data did so within WAKE_BOUND_MS of virtual time after the incarnation that
//   answered it, while the poll was waiting there, acknowledged an append covering its offset (it wakes its
//   waiting polls in the turn it acknowledges; the bound leaves room for the store reads a poll may make
//   after waking). A poll that waited at a transfer's target for the stream to arrive is not bounded here:
//   the data was acknowledged elsewhere (or before the stream left and came back), and a transfer takes
//   what it takes;
// - a long-poll that ran to its timeout although an append at its offset was acknowledged while it waited
//   is a lost wake-up, unless a newer incarnation of its node had started (a zombie answers from stale state).
import { incarnationLabel, superseded, type History, type ReadRecord } from "./history.ts";
import type { Violation } from "./violations.ts";

const LIVENESS_INVARIANT = {
  wakeUp: "liveness (a long-poll wakes when an append at its offset is acknowledged)",
  latency: "liveness (a long-poll returns data within the wake bound)",
} as const;

/**
 * Virtual time a woken long-poll may take to answer: a few store round trips, or a hand-off in progress, at
 * the simulation's latencies (the longest seen in seeds 1-150 was 298 ms, a poll held while its stream was
 * being handed off; p99 0 ms). A poll nobody wakes waits for its timeout or the node's lease, up to ~1 s.
 */
const WAKE_BOUND_MS = 500;

export interface LivenessOptions {
  readonly longPollTimeoutMs: number;
  /** The virtual time a step ran at (trace.ts). */
  readonly msAt: (step: number) => number;
}

export function checkLiveness(history: History, options: LivenessOptions, out: Violation[]): void {
  checkWakeUps(history, options.longPollTimeoutMs, out);
  for (const { read, waitedMs } of longPollWaits(history, options.msAt)) {
    if (waitedMs <= WAKE_BOUND_MS) continue;
    out.push({
      invariant: LIVENESS_INVARIANT.latency,
      message:
        `${read.client}'s long-poll of ${read.stream} at ${read.start} answered by ${incarnationLabel(read.by)} at step ${read.step} ` +
        `${waitedMs} ms after its data was acknowledged and the request had arrived (bound ${WAKE_BOUND_MS} ms)`,
      focus: [read.stream, read.client],
      step: read.step,
    });
  }
}

/** Each long-poll that returned data, with how long it took from the moment it could have answered. */
function longPollWaits(history: History, msAt: (step: number) => number): { read: ReadRecord; waitedMs: number }[] {
  const firstAck = firstAckSteps(history);
  const waits: { read: ReadRecord; waitedMs: number }[] = [];
  for (const read of history.reads) {
    if (read.mode !== "long-poll" || read.arrivedStep === null || superseded(history, read.by, read.step)) continue;
    const readyStep = firstAck(incarnationLabel(read.by), read.stream, read.start, read.arrivedStep);
    if (readyStep === null) continue;
    waits.push({ read, waitedMs: msAt(read.step) - msAt(readyStep) });
  }
  return waits;
}

/** The first step from `fromStep` on at which incarnation `by` acknowledged an append of `stream` ending past `offset`. */
function firstAckSteps(history: History): (by: string, stream: string, offset: number, fromStep: number) => number | null {
  const byStream = new Map<string, { tail: number; step: number }[]>();
  for (const ack of history.acknowledged) {
    const key = `${incarnationLabel(ack.by)} ${ack.stream}`;
    const list = byStream.get(key) ?? [];
    list.push({ tail: ack.tail, step: ack.step });
    byStream.set(key, list);
  }
  return (by, stream, offset, fromStep) => {
    let first: number | null = null;
    for (const ack of byStream.get(`${by} ${stream}`) ?? []) {
      if (ack.tail > offset && ack.step >= fromStep && (first === null || ack.step < first)) first = ack.step;
    }
    return first;
  };
}

function checkWakeUps(history: History, longPollTimeoutMs: number, out: Violation[]): void {
  const acked = history.appends.filter((append) => append.ack !== undefined);
  for (const poll of history.emptyPolls) {
    if (poll.answeredMs - poll.sentMs < longPollTimeoutMs) continue;
    if (superseded(history, poll.by, poll.answeredStep)) continue;
    const missed = acked.find(
      (append) => append.stream === poll.stream && append.ack!.start === poll.offset && append.ack!.step > poll.sentStep && append.ack!.step < poll.answeredStep,
    );
    if (missed === undefined) continue;
    out.push({
      invariant: LIVENESS_INVARIANT.wakeUp,
      message:
        `${poll.client}'s long-poll of ${poll.stream} at ${poll.offset} (steps ${poll.sentStep}-${poll.answeredStep}) timed out at ${incarnationLabel(poll.by)} ` +
        `although ${missed.token} was acknowledged there at step ${missed.ack!.step} by ${incarnationLabel(missed.ack!.by)}`,
      focus: [poll.stream, poll.client, missed.token],
      step: poll.answeredStep,
    });
  }
}
