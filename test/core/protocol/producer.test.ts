// Rows PRD-* and APP-3..APP-5 of docs/protocol-rules.md, and the producer-state invariants as properties.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  EMPTY_PRODUCERS,
  checkProducer,
  commitProducer,
  parseProducerHeaders,
  pruneProducers,
  type ProducerCheck,
  type ProducerRequest,
  type ProducerTable,
} from "../../../src/core/protocol/producer.ts";

const NOW = 1_700_000_000_000;

function tableWith(producerId: string, epoch: number, lastSeq: number): ProducerTable {
  return commitProducer(EMPTY_PRODUCERS, producerId, { epoch, lastSeq, lastUpdatedMs: NOW });
}

function req(epoch: number, seq: number, producerId = "p"): ProducerRequest {
  return { producerId, epoch, seq };
}

describe("producer headers", () => {
  test("APP-3: no producer headers is a plain append", () => {
    expect(parseProducerHeaders(null, null, null)).toEqual({ ok: true, value: null });
  });

  test.each([
    ["p", null, null],
    [null, "0", null],
    ["p", "0", null],
    [null, "0", "0"],
  ])("APP-3: producer headers must come all together: %j %j %j", (id, epoch, seq) => {
    expect(parseProducerHeaders(id, epoch, seq)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("APP-4: an empty Producer-Id is refused", () => {
    expect(parseProducerHeaders("", "0", "0")).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test.each([
    ["0", "1abc"],
    ["0xyz", "0"],
    ["1e3", "0"],
    ["-1", "0"],
    ["0", ""],
    ["9007199254740992", "0"],
  ])("APP-5: epoch %j / seq %j is not a non-negative integer up to 2^53-1", (epoch, seq) => {
    expect(parseProducerHeaders("p", epoch, seq)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("APP-5: valid integers parse, up to 2^53-1", () => {
    expect(parseProducerHeaders("p", "9007199254740991", "0")).toEqual({
      ok: true,
      value: { producerId: "p", epoch: 9007199254740991, seq: 0 },
    });
  });
});

describe("checkProducer", () => {
  test("PRD-1: an unknown producer starting at seq 0 is accepted, in any epoch", () => {
    expect(checkProducer(EMPTY_PRODUCERS, req(0, 0), NOW)).toEqual({
      kind: "accept",
      state: { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW },
    });
    expect(checkProducer(EMPTY_PRODUCERS, req(7, 0), NOW)).toMatchObject({ kind: "accept", state: { epoch: 7 } });
  });

  test("PRD-2: an unknown producer starting past seq 0 is a gap expecting 0", () => {
    expect(checkProducer(EMPTY_PRODUCERS, req(0, 5), NOW)).toMatchObject({
      kind: "reject",
      error: { code: "producer_seq_gap", details: { expectedSeq: 0, receivedSeq: 5 } },
    });
  });

  test("PRD-3: an older epoch is fenced with the current epoch", () => {
    const table = tableWith("p", 2, 0);
    for (const request of [req(0, 0), req(1, 0), req(1, 9)]) {
      expect(checkProducer(table, request, NOW)).toMatchObject({
        kind: "reject",
        error: { code: "producer_stale_epoch", details: { currentEpoch: 2 } },
      });
    }
  });

  test("PRD-4: a newer epoch starting at seq 0 is accepted and resets the sequence", () => {
    expect(checkProducer(tableWith("p", 0, 5), req(1, 0), NOW)).toEqual({
      kind: "accept",
      state: { epoch: 1, lastSeq: 0, lastUpdatedMs: NOW },
    });
  });

  test("PRD-5: a newer epoch not starting at seq 0 is refused as invalid", () => {
    expect(checkProducer(tableWith("p", 0, 0), req(1, 5), NOW)).toMatchObject({
      kind: "reject",
      error: { code: "invalid", details: { reason: "new_epoch_seq_not_zero" } },
    });
  });

  test("PRD-6: a seq at or below the last accepted is a duplicate reporting the highest accepted seq", () => {
    const table = tableWith("p", 0, 2);
    expect(checkProducer(table, req(0, 2), NOW)).toEqual({ kind: "duplicate", epoch: 0, lastSeq: 2 });
    expect(checkProducer(table, req(0, 1), NOW)).toEqual({ kind: "duplicate", epoch: 0, lastSeq: 2 });
    expect(checkProducer(tableWith("p", 0, 0), req(0, 0), NOW)).toEqual({ kind: "duplicate", epoch: 0, lastSeq: 0 });
  });

  test("PRD-7: the next seq is accepted", () => {
    expect(checkProducer(tableWith("p", 3, 4), req(3, 5), NOW)).toEqual({
      kind: "accept",
      state: { epoch: 3, lastSeq: 5, lastUpdatedMs: NOW },
    });
  });

  test("PRD-8: a seq past the next is a gap carrying expected and received", () => {
    expect(checkProducer(tableWith("p", 0, 0), req(0, 2), NOW)).toMatchObject({
      kind: "reject",
      error: { code: "producer_seq_gap", details: { expectedSeq: 1, receivedSeq: 2 } },
    });
  });

  test("PRD-9: producers are independent", () => {
    const table = tableWith("A", 5, 9);
    expect(checkProducer(table, req(0, 0, "B"), NOW).kind).toBe("accept");
    expect(checkProducer(table, req(5, 10, "A"), NOW).kind).toBe("accept");
  });

  test("PRD-*: checking never changes the table it was given", () => {
    const table = tableWith("p", 1, 1);
    const before = new Map(table);
    checkProducer(table, req(1, 2), NOW);
    checkProducer(table, req(2, 0), NOW);
    expect(table).toEqual(before);
  });

  test("pruneProducers drops only producers idle for longer than the bound", () => {
    let table = commitProducer(EMPTY_PRODUCERS, "old", { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW - 10_000 });
    table = commitProducer(table, "fresh", { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW - 10 });
    const pruned = pruneProducers(table, NOW, 1_000);
    expect([...pruned.keys()]).toEqual(["fresh"]);
    expect(pruneProducers(pruned, NOW, 1_000)).toBe(pruned);
  });
});

// A model of the owner: apply a sequence of requests, committing accepted states.
function run(requests: readonly ProducerRequest[]): { table: ProducerTable; outcomes: ProducerCheck[] } {
  let table = EMPTY_PRODUCERS;
  const outcomes: ProducerCheck[] = [];
  for (const request of requests) {
    const outcome = checkProducer(table, request, NOW);
    outcomes.push(outcome);
    if (outcome.kind === "accept") table = commitProducer(table, request.producerId, outcome.state);
  }
  return { table, outcomes };
}

const requests = fc.array(
  fc.record({
    producerId: fc.constantFrom("a", "b"),
    epoch: fc.integer({ min: 0, max: 3 }),
    seq: fc.integer({ min: 0, max: 4 }),
  }),
  { maxLength: 60 },
);

describe("producer-state invariants (properties)", () => {
  test("a duplicate never advances state", () => {
    fc.assert(
      fc.property(requests, (list) => {
        let table = EMPTY_PRODUCERS;
        for (const request of list) {
          const outcome = checkProducer(table, request, NOW);
          if (outcome.kind !== "accept") continue;
          table = commitProducer(table, request.producerId, outcome.state);
          // Replaying the request just accepted is a duplicate that reports exactly this state.
          const replay = checkProducer(table, request, NOW + 1);
          expect(replay).toEqual({ kind: "duplicate", epoch: request.epoch, lastSeq: request.seq });
        }
      }),
    );
  });

  test("within an epoch, seqs are accepted strictly in order 0, 1, 2, ...", () => {
    fc.assert(
      fc.property(requests, (list) => {
        const { outcomes } = run(list);
        const lastAccepted = new Map<string, { epoch: number; seq: number }>();
        list.forEach((request, i) => {
          if (outcomes[i]?.kind !== "accept") return;
          const previous = lastAccepted.get(request.producerId);
          if (previous === undefined || request.epoch > previous.epoch) expect(request.seq).toBe(0);
          else {
            expect(request.epoch).toBe(previous.epoch);
            expect(request.seq).toBe(previous.seq + 1);
          }
          lastAccepted.set(request.producerId, { epoch: request.epoch, seq: request.seq });
        });
      }),
    );
  });

  test("a newer epoch resets the sequence and fences every older epoch", () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 5 }), (list, bump) => {
        const { table } = run(list);
        const current = table.get("a");
        const epoch = (current?.epoch ?? 0) + bump;
        const accepted = checkProducer(table, req(epoch, 0, "a"), NOW);
        expect(accepted).toMatchObject({ kind: "accept", state: { epoch, lastSeq: 0 } });
        if (accepted.kind !== "accept") return;
        const next = commitProducer(table, "a", accepted.state);
        for (let old = 0; old < epoch; old++) {
          expect(checkProducer(next, req(old, 0, "a"), NOW)).toMatchObject({
            kind: "reject",
            error: { code: "producer_stale_epoch", details: { currentEpoch: epoch } },
          });
        }
      }),
    );
  });
});
