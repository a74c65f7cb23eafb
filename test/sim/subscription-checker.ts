// The subscription invariants (docs/subscriptions.md), read from the history: the rows the MetaLog's
// subscription book wrote, the offers the consumers received and the data that landed in the store.
// - subscriptions 1, cursors: a link's acked offset never goes back and never passes its tail, its tail never
//   goes back, generations only grow, and a current wake has the newest generation;
// - subscriptions 2, durable data only: no tail is recorded or offered past the bytes of its stream that had
//   landed in a WAL object by then (a consumer is never offered data the stream has not made durable);
// - subscriptions 3, delivery: after the run the consumers caught up, and every acknowledged append to a
//   followed stream was offered to its consumer (an offer whose tail is at or after the append's end) and
//   acknowledged by it.
import type { History } from "./history.ts";
import type { LinkState, SubscriptionRowRecord } from "./subscription-history.ts";
import type { Violation } from "./violations.ts";

export const SUBSCRIPTION_INVARIANT = {
  cursors: "subscriptions 1 (acked offsets never go back or pass the tail; generations only grow)",
  durable: "subscriptions 2 (nothing offered past the stream's durable tail)",
  delivery: "subscriptions 3 (every acknowledged append to a followed stream is offered and acknowledged)",
} as const;

export function checkSubscriptions(history: History, out: Violation[]): void {
  const subs = history.subscriptions;
  if (subs.followed.length === 0) return;
  checkCursors(subs.rows, out);
  checkDurable(history, out);
  checkDelivery(history, out);
}

function checkCursors(rows: readonly SubscriptionRowRecord[], out: Violation[]): void {
  const last = new Map<string, SubscriptionRowRecord>();
  for (const row of rows) {
    const fail = (message: string, path = ""): void => {
      out.push({ invariant: SUBSCRIPTION_INVARIANT.cursors, message: `${row.id} at step ${row.step}: ${message}`, focus: [`subscription ${row.id}`, path], step: row.step });
    };
    if (row.wakeGeneration !== null && row.wakeGeneration !== row.generation) fail(`its wake has generation ${row.wakeGeneration}, the newest is ${row.generation}`);
    const before = last.get(row.id);
    last.set(row.id, row);
    if (before !== undefined && row.generation < before.generation) fail(`generation went back from ${before.generation} to ${row.generation}`);
    for (const link of row.links) {
      if (link.acked > link.tail) fail(`${link.path} acked ${link.acked} past its tail ${link.tail}`, link.path);
      const was = before?.links.find((l) => l.path === link.path);
      if (was === undefined) continue;
      if (link.acked < was.acked) fail(`${link.path} acked went back from ${was.acked} to ${link.acked}`, link.path);
      if (link.tail < was.tail) fail(`${link.path} tail went back from ${was.tail} to ${link.tail}`, link.path);
    }
  }
}

/** Per stream name: the steps at which its landed bytes grew, with the end they reached. */
function landedEnds(history: History): Map<string, Array<{ step: number; end: number }>> {
  const ends = new Map<string, Array<{ step: number; end: number }>>();
  const encoder = new TextEncoder();
  for (const write of history.writes) {
    for (const record of write.walData) {
      const name = record.ownership.name;
      if (name === null) continue;
      let list = ends.get(name);
      if (list === undefined) ends.set(name, (list = []));
      const end = record.firstOffset + encoder.encode(record.text).byteLength;
      if (end > (list.at(-1)?.end ?? 0)) list.push({ step: write.step, end });
    }
  }
  return ends;
}

function checkDurable(history: History, out: Violation[]): void {
  const ends = landedEnds(history);
  const landedBy = (path: string, step: number): number => {
    let end = 0;
    for (const grew of ends.get(path) ?? []) if (grew.step <= step) end = Math.max(end, grew.end);
    return end;
  };
  const check = (what: string, step: number, links: readonly LinkState[]): void => {
    for (const link of links) {
      if (link.tail === 0) continue;
      const landed = landedBy(link.path, step);
      if (link.tail <= landed) continue;
      out.push({
        invariant: SUBSCRIPTION_INVARIANT.durable,
        message: `${what} at step ${step} names ${link.path} up to ${link.tail}, but only ${landed} bytes of it had landed`,
        focus: [link.path, what],
        step,
      });
    }
  };
  for (const row of history.subscriptions.rows) check(`subscription ${row.id}`, row.step, row.links);
  for (const offer of history.subscriptions.offers) check(`${offer.via} to ${offer.subscription} g${offer.generation}`, offer.step, offer.streams);
}

function checkDelivery(history: History, out: Violation[]): void {
  const subs = history.subscriptions;
  if (subs.caughtUp === false) {
    out.push({ invariant: SUBSCRIPTION_INVARIANT.delivery, message: "the consumers did not catch up after the final read", focus: ["consumer"] });
  }
  const ackedEnd = new Map<string, number>();
  for (const append of history.appends) {
    if (append.ack === undefined) continue;
    ackedEnd.set(append.stream, Math.max(ackedEnd.get(append.stream) ?? 0, append.ack.end));
  }
  for (const followed of subs.followed) {
    const final = subs.rows.filter((row) => row.id === followed.id).at(-1);
    for (const [stream, end] of ackedEnd) {
      if (!followed.streams.includes(stream) && followed.pattern?.test(stream) !== true) continue;
      const link = final?.links.find((l) => l.path === stream);
      const offered = Math.max(0, ...subs.offers.filter((o) => o.subscription === followed.id).flatMap((o) => o.streams.filter((s) => s.path === stream).map((s) => s.tail)));
      if (link !== undefined && link.tail >= end && link.acked >= end && offered >= end) continue;
      out.push({
        invariant: SUBSCRIPTION_INVARIANT.delivery,
        message:
          `${stream}: appends were acknowledged up to ${end}, but ${followed.id} ends with ` +
          `${link === undefined ? "no link to it" : `tail ${link.tail}, acked ${link.acked}`} and was offered up to ${offered}`,
        focus: [stream, `subscription ${followed.id}`],
      });
    }
  }
}
