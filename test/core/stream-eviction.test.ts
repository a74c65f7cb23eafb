// docs/node.md, "Idle streams": one test per row of tables EV and RL in src/core/stream-eviction.ts, the
// stream phase table's eviction moves, and the property that eviction never lets go of a stream whose
// state the manifest would not hold (appends in flight, data outside stream objects, readers waiting).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evictionRow, evictionWriteRow, mayEvict, reloadRow, type EvictionPolicy, type EvictionView, type ReloadView } from "../../src/core/stream-eviction.ts";
import { canMove, type PhaseKind } from "../../src/core/stream-phase.ts";

const idleMs = 60_000;
const policy: EvictionPolicy = { nowMs: 1_000_000, idleMs, overResidentCap: false };

/** An idle, clean, plain stream: table EV evicts it (row EV8). */
function idle(overrides: Partial<EvictionView> = {}): EvictionView {
  return {
    phase: "opened",
    busy: false,
    lifecycle: "live",
    ttlSeconds: null,
    expiresAtMs: null,
    base: 0,
    forkCount: 0,
    bucketStream: false,
    tail: 120,
    eof: false,
    decidedTail: 120,
    decidedEof: false,
    compactedEnd: 120,
    readersWaiting: false,
    lastAccessMs: policy.nowMs - idleMs,
    ...overrides,
  };
}

describe("eviction (table EV)", () => {
  it("EV1 a stream being handed off, gone, or under a running step's lock stays", () => {
    for (const phase of ["handing-off", "moved-away", "removed", "evicted"] as const) expect(evictionRow(idle({ phase }), policy)).toBe("EV1");
    expect(evictionRow(idle({ busy: true }), policy)).toBe("EV1");
    expect(evictionRow(idle({ phase: "held" }), policy)).toBe("EV8");
  });

  it("EV2 a soft-deleted stream, or one with a TTL or an expiry time, stays: its clock is in memory", () => {
    expect(evictionRow(idle({ lifecycle: "soft-deleted" }), policy)).toBe("EV2");
    expect(evictionRow(idle({ ttlSeconds: 3600 }), policy)).toBe("EV2");
    expect(evictionRow(idle({ expiresAtMs: policy.nowMs + 1 }), policy)).toBe("EV2");
  });

  it("EV3 a fork, or a source forks read, stays", () => {
    expect(evictionRow(idle({ base: 40 }), policy)).toBe("EV3");
    expect(evictionRow(idle({ forkCount: 1 }), policy)).toBe("EV3");
  });

  it("EV4 a table's bucket stream stays: its leader holds the tablet", () => {
    expect(evictionRow(idle({ bucketStream: true }), policy)).toBe("EV4");
  });

  it("EV5 appends in flight or data not in stream objects keep the stream: the manifest would not hold it", () => {
    expect(evictionRow(idle({ decidedTail: 130 }), policy)).toBe("EV5");
    expect(evictionRow(idle({ decidedEof: true }), policy)).toBe("EV5");
    expect(evictionRow(idle({ compactedEnd: 100 }), policy)).toBe("EV5");
  });

  it("EV6 readers waiting at the tail keep the stream", () => {
    expect(evictionRow(idle({ readersWaiting: true }), policy)).toBe("EV6");
  });

  it("EV7 a stream touched within the idle time stays, unless the node is over its resident cap", () => {
    expect(evictionRow(idle({ lastAccessMs: policy.nowMs - idleMs + 1 }), policy)).toBe("EV7");
    expect(evictionRow(idle({ lastAccessMs: policy.nowMs }), { ...policy, overResidentCap: true })).toBe("EV8");
  });

  it("EV8 an idle, clean, plain stream goes, held or opened, closed or not", () => {
    expect(evictionRow(idle(), policy)).toBe("EV8");
    expect(evictionRow(idle({ eof: true, decidedEof: true }), policy)).toBe("EV8");
  });

  it("never evicts a stream whose manifest could not hold its state, at any age or cap (property)", () => {
    const phase = fc.constantFrom<PhaseKind>("held", "opened", "handing-off", "moved-away", "removed", "evicted");
    const view = fc.record({
      phase,
      busy: fc.boolean(),
      lifecycle: fc.constantFrom("live" as const, "soft-deleted" as const),
      ttlSeconds: fc.option(fc.nat(), { nil: null }),
      expiresAtMs: fc.option(fc.nat(), { nil: null }),
      base: fc.nat(10),
      forkCount: fc.nat(2),
      bucketStream: fc.boolean(),
      tail: fc.nat(10),
      eof: fc.boolean(),
      decidedTail: fc.nat(10),
      decidedEof: fc.boolean(),
      compactedEnd: fc.nat(10),
      readersWaiting: fc.boolean(),
      lastAccessMs: fc.nat(2_000_000),
    });
    fc.assert(
      fc.property(view, fc.boolean(), (stream, overResidentCap) => {
        if (!mayEvict(stream, { ...policy, overResidentCap })) return;
        expect(stream.decidedTail).toBe(stream.tail);
        expect(stream.decidedEof).toBe(stream.eof);
        expect(stream.compactedEnd).toBe(stream.tail);
        expect(stream.readersWaiting).toBe(false);
        expect(stream.busy).toBe(false);
        expect(["held", "opened"]).toContain(stream.phase);
        expect(stream.ttlSeconds ?? stream.expiresAtMs).toBeNull();
      }),
    );
  });
});

function reload(overrides: Partial<ReloadView> = {}, manifest: Partial<NonNullable<ReloadView["manifest"]>> = {}): ReloadView {
  return {
    ownedHere: true,
    logEpoch: 4,
    name: "chat/1",
    manifest: { epoch: 4, endOffset: 120, closed: false, session: { tail: 120, name: "chat/1" }, ...manifest },
    ...overrides,
  };
}

describe("the eviction's manifest write (table EW)", () => {
  const copy = { epoch: 4, tail: 120 };
  it("EW1 a close at this copy's epoch or later keeps the stream: a hand-off of it is under way, or a newer owner closed it", () => {
    expect(evictionWriteRow({ closed: { atEpoch: 4 }, endOffset: 120 }, copy)).toBe("EW1");
    expect(evictionWriteRow({ closed: { atEpoch: 5 }, endOffset: 100 }, copy)).toBe("EW1");
  });
  it("EW2 a manifest that ends past this copy's tail keeps the stream: the copy does not hold that data", () => {
    expect(evictionWriteRow({ endOffset: 121 }, copy)).toBe("EW2");
    expect(evictionWriteRow({ closed: { atEpoch: 3 }, endOffset: 121 }, copy)).toBe("EW2");
  });
  it("EW3 a close at an earlier epoch is the previous owner's (a transfer's or a takeover's): the session supersedes it", () => {
    expect(evictionWriteRow({ closed: { atEpoch: 3 }, endOffset: 120 }, copy)).toBe("EW3");
    expect(evictionWriteRow({ closed: { atEpoch: 0 }, endOffset: 80 }, copy)).toBe("EW3");
  });
  it("EW4 a manifest without a close, within the copy's tail, takes the session", () => {
    expect(evictionWriteRow({ endOffset: 120 }, copy)).toBe("EW4");
    expect(evictionWriteRow({ closed: undefined, endOffset: 0 }, copy)).toBe("EW4");
  });
});

describe("reload (table RL)", () => {
  it("RL1 a stream the log does not have opened here is routed as before", () => {
    expect(reloadRow(reload({ ownedHere: false }))).toBe("RL1");
  });

  it("RL2 no manifest, a closed one, or one without a session is not an eviction's", () => {
    expect(reloadRow(reload({ manifest: null }))).toBe("RL2");
    expect(reloadRow(reload({}, { closed: true }))).toBe("RL2");
    expect(reloadRow(reload({}, { session: null }))).toBe("RL2");
  });

  it("RL3 a session of another ownership (the manifest's epoch is not the log's) is not reloaded", () => {
    expect(reloadRow(reload({ logEpoch: 5 }))).toBe("RL3");
  });

  it("RL4 a session that ends where the data does not, or names another stream, is corrupt", () => {
    expect(reloadRow(reload({}, { endOffset: 130 }))).toBe("RL4");
    expect(reloadRow(reload({}, { session: { tail: 120, name: "chat/2" } }))).toBe("RL4");
  });

  it("RL5 the eviction's own session at the log's epoch is reloaded", () => {
    expect(reloadRow(reload())).toBe("RL5");
  });
});

describe("stream phases: eviction", () => {
  it("only a held or opened stream may be evicted, and an evicted copy never moves again", () => {
    expect(canMove("held", "evicted")).toBe(true);
    expect(canMove("opened", "evicted")).toBe(true);
    for (const from of ["handing-off", "moved-away", "removed"] as const) expect(canMove(from, "evicted")).toBe(false);
    for (const to of ["held", "opened", "handing-off", "moved-away", "removed"] as const) expect(canMove("evicted", to)).toBe(false);
  });
});
