// The checker: reads a run's history and the final content of every stream, and names what went wrong
// after the invariant it breaks (docs/architecture.md, "Invariants"). Checked here: 1 (one writer), 2 (no acknowledged
// append lost or reordered; idempotent appends once), 3 (offsets increase, never reused; every reader
// saw the final bytes), 5 (node epochs never decrease; no stale epoch accepted, by the log or the store)
// and 6 (a transfer completion applies only to the close it names); 5 is in epoch-checker.ts. A final read that never completed
// is a liveness failure. A long-poll that timed out although an append at its offset was acknowledged
// while it waited is reported as a notice (a lost wake-up), not a failure. The table invariants are in
// table-checker.ts, the subscription invariants in subscription-checker.ts.
import type { MetaState } from "../../src/core/meta/index.ts";
import { incarnationLabel, superseded, type AppendRecord, type History, type StoreWrite, type WalDataRecord } from "./history.ts";
import { checkEpochs, checkZombieManifestWrites } from "./epoch-checker.ts";
import { checkLiveness, type LivenessOptions } from "./liveness-checker.ts";
import { checkLogEntries } from "./log-checker.ts";
import { checkLinearizable } from "./linearizability-check.ts";
import { checkSubscriptions } from "./subscription-checker.ts";
import { checkTables } from "./table-checker.ts";
import { describeOwnership, INVARIANT, type CheckResult, type Violation } from "./violations.ts";

export function check(history: History, options: LivenessOptions): CheckResult {
  const violations: Violation[] = [];
  const notices: Violation[] = [];
  checkOneWriter(history, violations);
  checkEpochs(history, violations);
  checkTransfers(history, violations);
  checkLogEntries(history, violations);
  if (history.fatal !== null) {
    // The run stopped at the corrupt object: the rules of every step so far hold or not, but nothing was
    // read back, so the checks of the final state would only repeat that the run did not finish.
    violations.unshift({ invariant: INVARIANT.fatal, message: history.fatal.message, focus: history.fatal.focus, step: history.fatal.step });
    return { violations, notices };
  }
  checkFinalContent(history, violations);
  checkProducerAnswers(history, violations, notices);
  checkOffsets(history, violations);
  checkZombieManifestWrites(history, notices);
  checkLiveness(history, options, violations);
  checkTables(history, violations, notices);
  checkSubscriptions(history, violations);
  violations.push(...checkLinearizable(history, INVARIANT.linearizable));
  return { violations, notices };
}

/**
 * 1: a stream's data lands only in the WAL of the incarnation the log has it opened by, at the epoch it
 * opened it at, at the moment the object lands (the point of acknowledgement: the answer itself may come
 * later, held by observers, when the stream may already be closed). One exception, the zombie's (seed
 * 002): an incarnation declared dead whose stream was re-led away may still write it at its epoch until
 * its chain is sealed; the takeover replays everything below the seal, and nobody opens it before.
 * And every acknowledged append is in a WAL object of the incarnation that acknowledged it.
 */
function checkOneWriter(history: History, out: Violation[]): void {
  // Every landing of each record: a fenced writer's garbage (objects above the seal that fenced it, which
  // replay passes over) may hold an append that a client's retry then had acknowledged by the new owner.
  const landed = new Map<string, { write: StoreWrite; record: WalDataRecord }[]>();
  for (const write of history.writes) {
    for (const record of write.walData) {
      const key = `${record.streamId} ${record.firstOffset} ${record.text}`;
      landed.set(key, [...(landed.get(key) ?? []), { write, record }]);
      const { ownership } = record;
      const opener = ownership.opener;
      const byOpener = opener !== null && incarnationLabel(opener) === write.owner && ownership.epoch === record.streamEpoch;
      const orphaned =
        ownership.ownership === "placed" && ownership.orphanOf?.node === opener?.nodeId && ownership.orphanOf?.nodeEpoch === opener?.epoch;
      const ok = byOpener && ((ownership.ownership === "opened" && ownership.owner === opener.nodeId) || orphaned);
      if (!ok) {
        out.push({
          invariant: INVARIANT.oneWriter,
          message:
            `${write.key} (step ${write.step}, by ${write.owner}) holds ${record.text} for ${ownership.name ?? "?"} (${record.streamId}) at ${record.firstOffset}, ` +
            `epoch ${record.streamEpoch}, while the log had it ${describeOwnership(ownership)}`,
          focus: [write.key, record.text, write.owner, ...(opener === null ? [] : [`node ${incarnationLabel(opener)}`, `by=${incarnationLabel(opener)}`])],
          step: write.step,
        });
      }
    }
  }
  for (const append of history.appends) {
    const ack = append.ack;
    if (ack === undefined) continue;
    const landings = landed.get(`${ack.ownership.streamId ?? "-"} ${ack.start} ${append.token}`) ?? [];
    const found = landings.find((landing) => landing.write.owner === incarnationLabel(ack.by)) ?? landings[0];
    if (found === undefined || found.write.owner !== incarnationLabel(ack.by)) {
      out.push({
        invariant: INVARIANT.oneWriter,
        message:
          `${append.token} to ${append.stream} was acknowledged at [${ack.start}, ${ack.end}) by ${incarnationLabel(ack.by)} at step ${ack.step}, ` +
          (found === undefined ? "but no WAL object holds it there" : `but it landed in ${found.write.key}, written by ${found.write.owner}`),
        focus: [append.stream, append.token, incarnationLabel(ack.by)],
        step: ack.step,
      });
    }
  }
}

const TOKEN = /\[[^\]]+\]/g;

/** 2 (and 3's "no bytes nobody wrote"): the final content holds every acknowledged append where it was acknowledged. */
function checkFinalContent(history: History, out: Violation[]): void {
  const byStream = groupBy(history.appends, (append) => append.stream);
  const createdAcked = new Set(history.creates.filter((c) => c.status === 201 || c.status === 200).map((c) => c.stream));
  for (const [stream, reason] of history.unreadable) {
    out.push({ invariant: INVARIANT.liveness, message: `${stream} could not be read back after the run settled: ${reason}`, focus: [stream] });
  }
  for (const stream of new Set([...byStream.keys(), ...createdAcked])) {
    if (history.unreadable.has(stream)) continue;
    const content = history.finalContent.get(stream);
    const appends = byStream.get(stream) ?? [];
    if (content === undefined) {
      out.push({ invariant: INVARIANT.liveness, message: `${stream} was never read back`, focus: [stream] });
      continue;
    }
    if (content === null) {
      if (createdAcked.has(stream) || appends.some((a) => a.outcome === "acked" || a.outcome === "duplicate")) {
        out.push({ invariant: INVARIANT.noLoss, message: `${stream} does not exist at the end, but its create was acknowledged`, focus: [stream] });
      }
      continue;
    }
    const sent = new Map(appends.map((append) => [append.token, append]));
    const counts = new Map<string, number>();
    let at = 0;
    for (const match of content.matchAll(TOKEN)) {
      if (match.index !== at) {
        out.push({ invariant: INVARIANT.offsets, message: `${stream} holds bytes no client sent at ${at}: ${JSON.stringify(content.slice(at, match.index))}`, focus: [stream] });
      }
      at = match.index + match[0].length;
      counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
      if (!sent.has(match[0])) {
        out.push({ invariant: INVARIANT.offsets, message: `${stream} holds ${match[0]} at ${match.index}, which no client sent to it`, focus: [stream, match[0]] });
      }
    }
    if (at !== content.length) {
      out.push({ invariant: INVARIANT.offsets, message: `${stream} ends with bytes no client sent: ${JSON.stringify(content.slice(at, at + 80))}`, focus: [stream] });
    }
    for (const append of appends) {
      const count = counts.get(append.token) ?? 0;
      if (append.outcome === "acked" && append.ack !== undefined) {
        const found = content.slice(append.ack.start, append.ack.end);
        if (found !== append.token) {
          const where = content.indexOf(append.token);
          out.push({
            invariant: INVARIANT.noLoss,
            message:
              `${append.token} was acknowledged at [${append.ack.start}, ${append.ack.end}) of ${stream} by ${incarnationLabel(append.ack.by)} ` +
              `at step ${append.ack.step}; the final content has ${JSON.stringify(found)} there` +
              (where < 0 ? " and the token nowhere" : ` and the token at ${where}`),
            focus: [stream, append.token],
            step: append.ack.step,
          });
        }
      }
      if ((append.outcome === "acked" || append.outcome === "duplicate") && count !== 1) {
        out.push({ invariant: INVARIANT.noLoss, message: `${append.token} (${append.outcome}) appears ${count} times in ${stream}`, focus: [stream, append.token] });
      } else if (count > 1) {
        out.push({ invariant: INVARIANT.noLoss, message: `${append.token} (${append.outcome}) appears ${count} times in ${stream}`, focus: [stream, append.token] });
      }
    }
    checkProducerOrder(stream, content, appends, out);
  }
}

/** 2: a producer told its seq skips ahead (or its epoch is stale) means an acknowledged append was lost. */
function checkProducerAnswers(history: History, out: Violation[], notices: Violation[]): void {
  for (const anomaly of history.producerAnomalies) {
    const stale = superseded(history, anomaly.by, anomaly.step);
    const by = anomaly.by === null ? "?" : incarnationLabel(anomaly.by);
    (stale ? notices : out).push({
      invariant: stale ? INVARIANT.staleAnswer : INVARIANT.noLoss,
      message: `producer ${anomaly.client} on ${anomaly.stream} at step ${anomaly.step}, answered by ${by}${stale ? " (superseded)" : ""}: ${anomaly.detail}`,
      focus: [anomaly.stream, anomaly.client],
      step: anomaly.step,
    });
  }
}

/** A producer's appends that made it into the stream are in (epoch, seq) order. */
function checkProducerOrder(stream: string, content: string, appends: readonly AppendRecord[], out: Violation[]): void {
  const byProducer = groupBy(
    appends.filter((append) => append.producer !== null),
    (append) => append.producer!.id,
  );
  for (const [producer, list] of byProducer) {
    let previous: { token: string; at: number } | null = null;
    const ordered = [...list].sort((a, b) => a.producer!.epoch - b.producer!.epoch || a.producer!.seq - b.producer!.seq);
    for (const append of ordered) {
      const at = content.indexOf(append.token);
      if (at < 0) continue;
      if (previous !== null && at < previous.at) {
        out.push({ invariant: INVARIANT.noLoss, message: `producer ${producer}: ${append.token} is before ${previous.token} in ${stream}`, focus: [stream, append.token, previous.token] });
      }
      previous = { token: append.token, at };
    }
  }
}

/**
 * 3: acknowledged ranges of a stream never overlap (offsets are never reused), and an append sent after
 * another's acknowledgement reached its client lies after it (real-time order; concurrent appends may be
 * answered in any order). Every read matches the final bytes.
 */
function checkOffsets(history: History, out: Violation[]): void {
  const acked = history.appends.filter((append) => append.ack !== undefined);
  for (const [stream, list] of groupBy(acked, (append) => append.stream)) {
    const byStart = [...list].sort((a, b) => a.ack!.start - b.ack!.start);
    for (let i = 1; i < byStart.length; i++) {
      const before = byStart[i - 1]!;
      const after = byStart[i]!;
      if (after.ack!.start < before.ack!.end) {
        out.push({
          invariant: INVARIANT.offsets,
          message: `${stream}: ${after.token} acknowledged at [${after.ack!.start}, ${after.ack!.end}) overlaps ${before.token} at [${before.ack!.start}, ${before.ack!.end})`,
          focus: [stream, after.token, before.token],
          step: after.ack!.step,
        });
      }
    }
    const byAck = [...list].sort((a, b) => a.ack!.step - b.ack!.step);
    for (const later of list) {
      for (const earlier of byAck) {
        if (earlier.ack!.step >= later.sentStep) break;
        if (later.ack!.start < earlier.ack!.end) {
          out.push({
            invariant: INVARIANT.offsets,
            message:
              `${stream}: ${later.token}, sent at step ${later.sentStep}, was acknowledged at [${later.ack!.start}, ${later.ack!.end}), ` +
              `before ${earlier.token} at [${earlier.ack!.start}, ${earlier.ack!.end}) whose acknowledgement came at step ${earlier.ack!.step}`,
            focus: [stream, later.token, earlier.token],
            step: later.ack!.step,
          });
          break;
        }
      }
    }
  }
  for (const read of history.reads) {
    const content = history.finalContent.get(read.stream);
    if (content === undefined || content === null) continue;
    const expected = content.slice(read.start, read.next);
    if (read.next > content.length || expected !== read.bytes || read.next - read.start !== read.bytes.length) {
      out.push({
        invariant: INVARIANT.offsets,
        message:
          `${read.client} read [${read.start}, ${read.next}) of ${read.stream} from ${incarnationLabel(read.by)} at step ${read.step}: ` +
          `${JSON.stringify(read.bytes.slice(0, 120))}; the final content has ${JSON.stringify(expected.slice(0, 120))} (length ${content.length})`,
        focus: [read.stream, read.client],
        step: read.step,
      });
    }
  }
  for (const poll of history.emptyPolls) {
    const content = history.finalContent.get(poll.stream);
    if (typeof content === "string" && poll.next > content.length) {
      out.push({ invariant: INVARIANT.offsets, message: `${poll.client} was told ${poll.stream} ends at ${poll.next}; it ends at ${content.length}`, focus: [poll.stream, poll.client] });
    }
  }
}

/** 6: every accepted CompleteTransfer found its stream closed at exactly the epoch it names, with a transfer pending. */
function checkTransfers(history: History, out: Violation[]): void {
  for (const { entry, before, step } of history.journal) {
    const command = entry.command;
    if (command.type !== "CompleteTransfer") continue;
    const stream = before.streams.get(command.streamId);
    const pending = before.transfers.get(command.streamId);
    if (stream === undefined || pending === undefined || stream.ownership !== "closed" || stream.closedAtEpoch !== command.closedEpoch) {
      out.push({
        invariant: INVARIANT.transfers,
        message:
          `log #${entry.index} (step ${step}) completed the transfer of ${command.streamId} at epoch ${command.closedEpoch}, while it was ` +
          `${describeStream(before, command.streamId)}${pending === undefined ? " with no transfer pending" : ""}`,
        focus: [`streamId="${command.streamId}"`, ` ${command.streamId} `],
        step,
      });
    }
  }
}

function describeStream(state: MetaState, streamId: string): string {
  const stream = state.streams.get(streamId);
  if (stream === undefined) return "unknown";
  return `${stream.ownership}${stream.closedAtEpoch === undefined ? "" : ` at ${stream.closedAtEpoch}`} (epoch ${stream.epoch}, owner ${stream.owner ?? "-"})`;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list === undefined) groups.set(k, [item]);
    else list.push(item);
  }
  return groups;
}
