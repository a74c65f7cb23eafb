// Rows PRD-* and APP-3..APP-5 of docs/protocol-rules.md, and the producer-state invariants as properties.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  EMPTY_PRODUCERS,
  admitProducer,
  producerBytes,
  checkProducer,
  commitProducer,
  parseProducerHeaders,
  pruneProducers,
  type ProducerCheck,
  type ProducerLimits,
  type ProducerState,
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

  test("pruneProducers keeps a producer idle for exactly the bound: only longer is dropped", () => {
    const table = commitProducer(EMPTY_PRODUCERS, "edge", { epoch: 0, lastSeq: 0, lastUpdatedMs: NOW - 1_000 });
    expect(pruneProducers(table, NOW, 1_000)).toBe(table);
    expect([...pruneProducers(table, NOW + 1, 1_000).keys()]).toEqual([]);
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

describe("producer bounds (MAX_PRODUCERS_PER_STREAM, MAX_PRODUCER_EPOCH_STEP)", () => {
  const limits = (over: Partial<ProducerLimits> = {}): ProducerLimits => ({ maxProducers: 2, idleMs: 1_000, maxEpochStep: 10, ...over });
  const table = (entries: [string, number][]): ProducerTable =>
    new Map(entries.map(([id, lastUpdatedMs]) => [id, { epoch: 0, lastSeq: 0, lastUpdatedMs }] as [string, ProducerState]));

  test("PRD-11: a known producer may raise its epoch by at most MAX_PRODUCER_EPOCH_STEP", () => {
    const known = tableWith("p", 5, 3);
    expect(checkProducer(known, req(15, 0), NOW, limits())).toMatchObject({ kind: "accept", state: { epoch: 15 } });
    expect(checkProducer(known, req(16, 0), NOW, limits())).toMatchObject({
      kind: "reject",
      error: { code: "invalid", details: { reason: "epoch_step", currentEpoch: 5, maxEpoch: 15, limit: "MAX_PRODUCER_EPOCH_STEP" } },
    });
  });

  test("PRD-11: nobody can fence a producer for good with Producer-Epoch 2^53-1", () => {
    const known = tableWith("p", 0, 0);
    const check = checkProducer(known, req(Number.MAX_SAFE_INTEGER, 0), NOW, limits({ maxEpochStep: 1_000_000 }));
    expect(check).toMatchObject({ kind: "reject", error: { code: "invalid" } });
    // The producer's own next epoch still works.
    expect(checkProducer(known, req(1, 0), NOW, limits())).toMatchObject({ kind: "accept" });
  });

  test("PRD-11: a new producer's first epoch is at most MAX_PRODUCER_EPOCH_STEP", () => {
    expect(checkProducer(EMPTY_PRODUCERS, req(10, 0), NOW, limits())).toMatchObject({ kind: "accept" });
    expect(checkProducer(EMPTY_PRODUCERS, req(11, 0), NOW, limits())).toMatchObject({
      kind: "reject",
      error: { code: "invalid", details: { reason: "epoch_step", currentEpoch: null, maxEpoch: 10 } },
    });
  });

  test("PRD-12: a known producer and a new one under MAX_PRODUCERS_PER_STREAM are admitted without pruning", () => {
    expect(admitProducer(table([["a", NOW]]), "b", NOW, limits())).toEqual({ kind: "admit", prune: [] });
    expect(admitProducer(table([["a", NOW], ["b", NOW]]), "a", NOW, limits())).toEqual({ kind: "admit", prune: [] });
  });

  test("MAX_NODE_PRODUCER_BYTES: a new id that would pass the node's producer bytes gets limit_reached; a known id never does", () => {
    const full = { held: 1_000, max: 1_000 + producerBytes("b") - 1 };
    expect(admitProducer(table([["a", NOW]]), "b", NOW, { ...limits(), nodeBytes: full })).toMatchObject({
      kind: "reject",
      error: { code: "limit_reached", details: { limit: "MAX_NODE_PRODUCER_BYTES", max: full.max } },
    });
    expect(admitProducer(table([["a", NOW]]), "a", NOW, { ...limits(), nodeBytes: full })).toEqual({ kind: "admit", prune: [] });
    expect(admitProducer(table([["a", NOW]]), "b", NOW, { ...limits(), nodeBytes: { ...full, max: full.max + 1 } })).toEqual({ kind: "admit", prune: [] });
  });

  test("PRD-12: a new producer over the cap with none idle gets limit_reached and nothing is pruned", () => {
    expect(admitProducer(table([["a", NOW - 999], ["b", NOW]]), "c", NOW, limits())).toMatchObject({
      kind: "reject",
      error: { code: "limit_reached", details: { limit: "MAX_PRODUCERS_PER_STREAM", max: 2, idleMs: 1_000 } },
    });
  });

  test("PRD-12: over the cap, the longest idle producer (ties by id) is pruned for the new one", () => {
    expect(admitProducer(table([["a", NOW - 1_000], ["b", NOW - 5_000]]), "d", NOW, limits())).toEqual({ kind: "admit", prune: ["b"] });
    // Idle for exactly PRODUCER_IDLE_MS counts as idle.
    expect(admitProducer(table([["a", NOW - 1_000], ["c", NOW]]), "d", NOW, limits())).toEqual({ kind: "admit", prune: ["a"] });
    expect(admitProducer(table([["y", NOW - 2_000], ["x", NOW - 2_000]]), "z", NOW, limits())).toEqual({ kind: "admit", prune: ["x"] });
  });

  test("PRD-12: a table above a lowered cap prunes as many idle producers as it takes, or none", () => {
    const four = table([["a", NOW - 9_000], ["b", NOW - 8_000], ["c", NOW - 7_000], ["d", NOW]]);
    expect(admitProducer(four, "e", NOW, limits())).toEqual({ kind: "admit", prune: ["a", "b", "c"] });
    expect(admitProducer(four, "e", NOW - 7_500, limits())).toMatchObject({ kind: "reject" });
  });

  const tables = fc
    .uniqueArray(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e", "f"), fc.integer({ min: 0, max: 5_000 }), fc.nat(3), fc.nat(5)), {
      selector: ([id]) => id,
      maxLength: 6,
    })
    .map((entries) => new Map(entries.map(([id, ageMs, epoch, lastSeq]) => [id, { epoch, lastSeq, lastUpdatedMs: NOW - ageMs }] as [string, ProducerState])));

  test("property: pruning never changes the answer for a producer that is not idle", () => {
    fc.assert(
      fc.property(tables, fc.integer({ min: 1, max: 6 }), fc.constantFrom("a", "b", "c", "d", "e", "f", "new"), fc.nat(4), fc.nat(6), (before, maxProducers, newcomer, epoch, seq) => {
        const bounds = limits({ maxProducers, idleMs: 2_500 });
        const admission = admitProducer(before, newcomer, NOW, bounds);
        if (admission.kind === "reject") return;
        const after = new Map(before);
        for (const id of admission.prune) after.delete(id);
        for (const id of admission.prune) expect(NOW - before.get(id)!.lastUpdatedMs).toBeGreaterThanOrEqual(bounds.idleMs);
        for (const [id, state] of before) {
          if (NOW - state.lastUpdatedMs >= bounds.idleMs) continue;
          expect(checkProducer(after, req(epoch, seq, id), NOW, bounds)).toEqual(checkProducer(before, req(epoch, seq, id), NOW, bounds));
        }
      }),
    );
  });

  test("property: an admitted producer leaves the table within MAX_PRODUCERS_PER_STREAM", () => {
    fc.assert(
      fc.property(tables, fc.integer({ min: 1, max: 6 }), fc.constantFrom("a", "new"), (before, maxProducers, newcomer) => {
        const admission = admitProducer(before, newcomer, NOW, limits({ maxProducers, idleMs: 2_500 }));
        if (admission.kind === "reject") return before.size >= maxProducers && !before.has(newcomer);
        const size = before.size - admission.prune.length + (before.has(newcomer) ? 0 : 1);
        return before.has(newcomer) || size <= maxProducers;
      }),
    );
  });
});
