// Rows APP-*, CLS-*, PRD-6/PRD-10 and SEQ-5/SEQ-6 of docs/protocol-rules.md (POST).
import { describe, expect, test } from "vitest";
import {
  decideAppend,
  parseAppendRequest,
  type AppendHeaders,
  type AppendRequest,
  type AppendTarget,
} from "../../../src/core/protocol/append.ts";
import { formatOffset } from "../../../src/core/protocol/offsets.ts";
import { EMPTY_PRODUCERS, commitProducer } from "../../../src/core/protocol/producer.ts";

const NOW = 1_700_000_000_000;
const MAX = 1024;
const NONE: AppendHeaders = {
  contentType: null,
  closed: null,
  streamSeq: null,
  producerId: null,
  producerEpoch: null,
  producerSeq: null,
};
const PRODUCER = { producerId: "p", producerEpoch: "0", producerSeq: "0" };

function parse(headers: Partial<AppendHeaders>, bodyLengthBytes: number): AppendRequest {
  const parsed = parseAppendRequest({ ...NONE, ...headers }, bodyLengthBytes, MAX);
  if (!parsed.ok) throw new Error(`unexpected refusal: ${parsed.error.message}`);
  return parsed.value;
}

const open: AppendTarget = {
  contentType: "text/plain",
  eof: false,
  tailPositionBytes: 12,
  producers: EMPTY_PRODUCERS,
  lastStreamSeq: null,
};
const closed: AppendTarget = { ...open, eof: true };
const json: AppendTarget = { ...open, contentType: "application/json" };
const withProducer = (epoch: number, lastSeq: number): AppendTarget => ({
  ...open,
  producers: commitProducer(EMPTY_PRODUCERS, "p", { epoch, lastSeq, lastUpdatedMs: 0 }),
});

function decide(target: AppendTarget, headers: Partial<AppendHeaders>, bodyLengthBytes: number, text: string | null = null) {
  return decideAppend(target, parse(headers, bodyLengthBytes), text, NOW);
}

describe("POST: stateless checks", () => {
  test("APP-1: a body over the limit is too large", () => {
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain" }, MAX + 1, MAX)).toMatchObject({
      ok: false,
      error: { code: "too_large", details: { maxBytes: MAX } },
    });
  });

  test("APP-2: an empty body without Stream-Closed is refused, with or without producer headers", () => {
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain" }, 0, MAX)).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain", ...PRODUCER }, 0, MAX)).toMatchObject({ ok: false });
    expect(parseAppendRequest({ ...NONE, closed: "false" }, 0, MAX)).toMatchObject({ ok: false });
  });

  test("APP-3 / APP-4 / APP-5: producer headers are checked before the stream", () => {
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain", producerId: "p" }, 1, MAX).ok).toBe(false);
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain", ...PRODUCER, producerId: "" }, 1, MAX).ok).toBe(false);
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain", ...PRODUCER, producerSeq: "1e3" }, 1, MAX).ok).toBe(false);
  });

  test("APP-6: a body without Content-Type is refused", () => {
    expect(parseAppendRequest({ ...NONE }, 4, MAX)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("APP-7: a malformed Content-Type is refused", () => {
    expect(parseAppendRequest({ ...NONE, contentType: "plain" }, 4, MAX)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("APP-8: an empty Stream-Seq is refused", () => {
    expect(parseAppendRequest({ ...NONE, contentType: "text/plain", streamSeq: "" }, 4, MAX)).toMatchObject({ ok: false });
  });

  test("APP-9: a close-only request ignores Content-Type, even a malformed one", () => {
    expect(parse({ closed: "true" }, 0)).toEqual({ bodyLengthBytes: 0, contentType: null, close: true, producer: null, streamSeq: null });
    expect(parse({ closed: "TRUE", contentType: "not a type" }, 0).contentType).toBeNull();
  });
});

describe("POST on a closed stream", () => {
  test("CLS-1: close-only without a producer is an idempotent success", () => {
    expect(decide(closed, { closed: "true" }, 0)).toEqual({ kind: "already-closed" });
  });

  test("CLS-2: any body without a producer is refused with the final offset", () => {
    const tail = formatOffset(closed.tailPositionBytes);
    for (const headers of [{ contentType: "text/plain" }, { contentType: "text/plain", closed: "true" }, { contentType: "application/json" }]) {
      expect(decide(closed, headers, 5)).toEqual({
        kind: "reject",
        error: expect.objectContaining({ code: "stream_closed", details: { tailOffset: tail } }) as unknown,
      });
    }
  });

  test("CLS-3: a producer duplicate (e.g. retrying the closing request, any body) succeeds as a duplicate", () => {
    const target = { ...withProducer(0, 0), eof: true };
    expect(decide(target, { contentType: "text/plain", closed: "true", ...PRODUCER }, 6)).toEqual({
      kind: "duplicate",
      epoch: 0,
      lastSeq: 0,
      eof: true,
    });
    expect(decide(target, { closed: "true", ...PRODUCER }, 0)).toMatchObject({ kind: "duplicate", eof: true });
  });

  test("CLS-4: a stale producer epoch is fenced (403), not reported as closed", () => {
    const target = { ...withProducer(1, 0), eof: true };
    expect(decide(target, { contentType: "text/plain", closed: "true", ...PRODUCER, producerSeq: "1" }, 5)).toMatchObject({
      kind: "reject",
      error: { code: "producer_stale_epoch", details: { currentEpoch: 1 } },
    });
  });

  test("CLS-5: any other producer request is refused as closed", () => {
    const target = { ...withProducer(0, 0), eof: true };
    for (const producer of [{ producerSeq: "1" }, { producerId: "other" }, { producerEpoch: "1" }, { producerSeq: "5" }]) {
      expect(decide(target, { contentType: "text/plain", ...PRODUCER, ...producer }, 5)).toMatchObject({
        kind: "reject",
        error: { code: "stream_closed" },
      });
    }
  });

  test("CLS-2: closure is checked before the content type", () => {
    expect(decide(closed, { contentType: "application/json" }, 2, "{}")).toMatchObject({
      error: { code: "stream_closed" },
    });
  });
});

describe("POST on an open stream", () => {
  test("APP-10: a different media type is a conflict; case and parameters do not matter", () => {
    expect(decide(open, { contentType: "application/json" }, 2, "{}")).toMatchObject({
      kind: "reject",
      error: { code: "conflict", details: { reason: "content_type", streamContentType: "text/plain" } },
    });
    expect(decide(open, { contentType: "TEXT/PLAIN" }, 4)).toMatchObject({ kind: "append" });
    expect(decide(json, { contentType: "application/json; charset=utf-8" }, 2, "{}")).toMatchObject({ kind: "append" });
  });

  test("APP-11: a JSON stream refuses invalid JSON and empty arrays, producer or not", () => {
    expect(decide(json, { contentType: "application/json" }, 16, "{ invalid json }")).toMatchObject({
      error: { code: "invalid", details: { reason: "invalid_json" } },
    });
    expect(decide(json, { contentType: "application/json", ...PRODUCER }, 2, "[]")).toMatchObject({
      error: { code: "invalid", details: { reason: "empty_array" } },
    });
    expect(decide(json, { contentType: "application/json" }, 2)).toMatchObject({ error: { code: "invalid" } });
  });

  test("APP-11 / JSN-2: a JSON append carries its messages", () => {
    expect(decide(json, { contentType: "application/json" }, 20, '[{"a": 1}, [2]]')).toEqual({
      kind: "append",
      close: false,
      messages: ['{"a":1}', "[2]"],
      producer: null,
      lastStreamSeq: null,
    });
  });

  test("APP-12 / PRD-6: a producer duplicate succeeds without appending and skips Stream-Seq", () => {
    const target = { ...withProducer(0, 2), lastStreamSeq: "app-seq-001" };
    expect(decide(target, { contentType: "text/plain", ...PRODUCER, producerSeq: "1", streamSeq: "app-seq-001" }, 3)).toEqual({
      kind: "duplicate",
      epoch: 0,
      lastSeq: 2,
      eof: false,
    });
  });

  test("APP-12: producer rejections come through with their details", () => {
    expect(decide(withProducer(0, 0), { contentType: "text/plain", ...PRODUCER, producerSeq: "2" }, 3)).toMatchObject({
      error: { code: "producer_seq_gap", details: { expectedSeq: 1, receivedSeq: 2 } },
    });
    expect(decide(withProducer(2, 0), { contentType: "text/plain", ...PRODUCER, producerEpoch: "1" }, 3)).toMatchObject({
      error: { code: "producer_stale_epoch", details: { currentEpoch: 2 } },
    });
    expect(decide(withProducer(0, 0), { contentType: "text/plain", ...PRODUCER, producerEpoch: "1", producerSeq: "5" }, 3)).toMatchObject({
      error: { code: "invalid" },
    });
  });

  test("APP-13: close-only closes the stream and records the producer", () => {
    expect(decide(open, { closed: "true" }, 0)).toEqual({ kind: "close", producer: null });
    expect(decide(withProducer(0, 0), { closed: "true", ...PRODUCER, producerSeq: "1" }, 0)).toEqual({
      kind: "close",
      producer: { producerId: "p", state: { epoch: 0, lastSeq: 1, lastUpdatedMs: NOW }, pruned: [] },
    });
    expect(decide(open, { closed: "true", ...PRODUCER }, 0)).toMatchObject({ kind: "close" });
  });

  test("APP-13: a close-only request that is a producer duplicate does not close", () => {
    expect(decide(withProducer(0, 0), { closed: "true", ...PRODUCER }, 0)).toEqual({
      kind: "duplicate",
      epoch: 0,
      lastSeq: 0,
      eof: false,
    });
  });

  test("APP-14 / SEQ-3: a Stream-Seq regression is a conflict", () => {
    const target = { ...open, lastStreamSeq: "002" };
    expect(decide(target, { contentType: "text/plain", streamSeq: "001" }, 1)).toMatchObject({
      error: { code: "conflict", details: { reason: "stream_seq", lastStreamSeq: "002" } },
    });
  });

  test("SEQ-6: Stream-Seq is ignored on a close-only request", () => {
    const target = { ...open, lastStreamSeq: "002" };
    expect(decide(target, { closed: "true", streamSeq: "001" }, 0)).toEqual({ kind: "close", producer: null });
  });

  test("APP-15: an accepted append returns what to commit with it", () => {
    expect(decide(open, { contentType: "text/plain", streamSeq: "001" }, 5)).toEqual({
      kind: "append",
      close: false,
      messages: null,
      producer: null,
      lastStreamSeq: "001",
    });
    expect(decide(open, { contentType: "text/plain", closed: "true", ...PRODUCER }, 5)).toEqual({
      kind: "append",
      close: true,
      messages: null,
      producer: { producerId: "p", state: { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW }, pruned: [] },
      lastStreamSeq: null,
    });
  });

  test("PRD-10 / SEQ-5: producer and Stream-Seq both apply; a Stream-Seq refusal commits no producer state", () => {
    const accepted = decide(open, { contentType: "text/plain", ...PRODUCER, streamSeq: "app-seq-001" }, 3);
    expect(accepted).toMatchObject({ kind: "append", producer: { producerId: "p" }, lastStreamSeq: "app-seq-001" });
    const refused = decide({ ...open, lastStreamSeq: "z" }, { contentType: "text/plain", ...PRODUCER, streamSeq: "a" }, 3);
    expect(refused).toMatchObject({ kind: "reject", error: { code: "conflict" } });
  });
});

describe("POST: producer bounds (PRD-11 and PRD-12)", () => {
  const bounded = (producers: AppendTarget["producers"]): AppendTarget => ({
    ...open,
    producers,
    producerLimits: { maxProducers: 1, idleMs: 1_000, maxEpochStep: 5 },
  });

  test("PRD-12: a new producer over MAX_PRODUCERS_PER_STREAM with none idle is refused before anything is appended", () => {
    const busy = commitProducer(EMPTY_PRODUCERS, "q", { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW });
    expect(decide(bounded(busy), { contentType: "text/plain", ...PRODUCER }, 3)).toMatchObject({
      kind: "reject",
      error: { code: "limit_reached", details: { limit: "MAX_PRODUCERS_PER_STREAM" } },
    });
  });

  test("PRD-12: the accepted append carries the idle producers it prunes", () => {
    const idle = commitProducer(EMPTY_PRODUCERS, "q", { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW - 1_000 });
    expect(decide(bounded(idle), { contentType: "text/plain", ...PRODUCER }, 3)).toMatchObject({
      kind: "append",
      producer: { producerId: "p", pruned: ["q"] },
    });
  });

  test("PRD-11: an epoch raise beyond MAX_PRODUCER_EPOCH_STEP is refused as invalid", () => {
    const known = commitProducer(EMPTY_PRODUCERS, "p", { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW });
    expect(decide(bounded(known), { contentType: "text/plain", ...PRODUCER, producerEpoch: "6" }, 3)).toMatchObject({
      kind: "reject",
      error: { code: "invalid", details: { reason: "epoch_step" } },
    });
  });
});
