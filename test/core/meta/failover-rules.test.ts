// Tables C, DD, RA, CK and CO (src/core/meta/failover-rules.ts) and the open gate of row OS3b, one test per
// row; then coordinator fencing, claims that expire, dead incarnations that replace one another, and the
// whole failover of one node end to end in the core.
import { describe, expect, it } from "vitest";
import {
  apply,
  deadToDeclare,
  planReassignments,
  type Command,
  type CommandOf,
  type Coordinator,
  type MetaState,
  type Proposer,
  type ReassignMove,
} from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectChange, expectNoop, expectRejected, NOW_MS, register } from "./fixtures.ts";

const TTL_MS = 30_000;
const LEASE_EXPIRES_MS = NOW_MS + TTL_MS;
/** Node a holds the lease from NOW_MS at coordinator epoch 1. */
const COORD: Coordinator = { nodeId: "a", nodeEpoch: 1, coordinatorEpoch: 1 };
const at = (nowMs: number) => ({ nowMs });
const by = (nodeId: string, nodeEpoch = 1): Proposer => ({ nodeId, nodeEpoch });

const acquire = (nodeId: string, nodeEpoch = 1): CommandOf<"AcquireLease"> => ({ type: "AcquireLease", nodeId, nodeEpoch, ttlMs: TTL_MS });
const declare = (nodeId: string, nodeEpoch = 1, coordinator: Coordinator = COORD): CommandOf<"DeclareDead"> => ({
  type: "DeclareDead",
  nodeId,
  nodeEpoch,
  coordinator,
});
const reassign = (moves: readonly ReassignMove[], coordinator: Coordinator = COORD): CommandOf<"ReassignStreams"> => ({
  type: "ReassignStreams",
  moves,
  coordinator,
});
const claim = (nodeId: string, nodeEpoch: number, claimer: Proposer, ttlMs = TTL_MS): CommandOf<"ClaimTakeover"> => ({
  type: "ClaimTakeover",
  nodeId,
  nodeEpoch,
  by: claimer,
  ttlMs,
});
const complete = (nodeId: string, nodeEpoch: number, claimer: Proposer): CommandOf<"CompleteTakeover"> => ({
  type: "CompleteTakeover",
  nodeId,
  nodeEpoch,
  by: claimer,
});
const open = (streamId: string, nodeId: string, nodeEpoch = 1): CommandOf<"OpenStream"> => ({ type: "OpenStream", streamId, nodeId, nodeEpoch });
const close = (streamId: string, nodeId: string, epoch: number, nodeEpoch = 1): CommandOf<"CloseStream"> => ({
  type: "CloseStream",
  streamId,
  nodeId,
  nodeEpoch,
  epoch,
});
const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });
const setSlots = (nodeId: string, slots: number): CommandOf<"SetSlots"> => ({ type: "SetSlots", nodeId, slots });

/**
 * Nodes a (the coordinator, no slots), b and c; s1 and s2 opened by b at stream epoch 1, s3 placed on b
 * (epoch 0). c had no slots while they were placed and has one now.
 */
function cluster(extra: readonly Command[] = []): MetaState {
  return build([
    register("a", 1, 0),
    register("b"),
    register("c", 1, 0),
    acquire("a"),
    create("x"),
    create("y"),
    create("z"),
    place("s1"),
    place("s2"),
    place("s3"),
    open("s1", "b"),
    open("s2", "b"),
    setSlots("c", 1),
    ...extra,
  ]);
}

/** The cluster with b declared dead at epoch 1 (its record now at epoch 2). */
function bDead(extra: readonly Command[] = []): MetaState {
  return cluster([declare("b"), ...extra]);
}

/** b declared dead and s1 (opened by b) re-led to c: an orphan of {b, 1}. */
function s1Orphaned(extra: readonly Command[] = []): MetaState {
  return bDead([reassign([{ streamId: "s1", target: "c" }]), ...extra]);
}

describe("table C: coordinator authority", () => {
  it("C1: a coordinator that fails table P is refused as table P says", () => {
    const restarted = cluster([register("a", 2, 0)]);
    expectRejected(restarted, apply(restarted, declare("b"), CTX), "stale_epoch", { nodeId: "a", currentEpoch: 2 });
    const before = cluster();
    const stranger: Coordinator = { nodeId: "q", nodeEpoch: 1, coordinatorEpoch: 1 };
    expectRejected(before, apply(before, declare("b", 1, stranger), CTX), "not_found", { nodeId: "q" });
    expectRejected(before, apply(before, declare("b", 1, { ...COORD, nodeEpoch: 2 }), CTX), "invalid", { currentEpoch: 1 });
  });
  it("C2: no lease, another holder, another holder epoch or another coordinator epoch is fenced", () => {
    const none = build([register("a"), register("b")]);
    expectRejected(none, apply(none, declare("b"), CTX), "fenced", { holder: null, coordinatorEpoch: 0 });
    const before = cluster();
    expectRejected(before, apply(before, declare("c", 1, { nodeId: "b", nodeEpoch: 1, coordinatorEpoch: 1 }), CTX), "fenced", {
      holder: "a",
      coordinatorEpoch: 1,
    });
    expectRejected(before, apply(before, declare("b", 1, { ...COORD, coordinatorEpoch: 0 }), CTX), "fenced", { holder: "a", coordinatorEpoch: 1 });
    expectRejected(before, apply(before, declare("b", 1, { ...COORD, coordinatorEpoch: 2 }), CTX), "fenced", { holder: "a", coordinatorEpoch: 1 });
    // The holder restarted (node epoch 2) but still carries the lease of its old self: acquire again first.
    const restarted = cluster([register("a", 2, 0)]);
    expectRejected(restarted, apply(restarted, declare("b", 1, { ...COORD, nodeEpoch: 2 }), CTX), "fenced", { holder: "a", coordinatorEpoch: 1 });
  });
  it("C3: a coordinator whose lease expired is fenced with the expiry", () => {
    const before = cluster();
    expectRejected(before, apply(before, declare("b"), at(LEASE_EXPIRES_MS)), "fenced", {
      holder: "a",
      coordinatorEpoch: 1,
      expiresAtMs: LEASE_EXPIRES_MS,
    });
    expectRejected(before, apply(before, reassign([{ streamId: "s1", target: "c" }]), at(LEASE_EXPIRES_MS + 1)), "fenced", {
      expiresAtMs: LEASE_EXPIRES_MS,
    });
  });
  it("C4: the holder at its node epoch and coordinator epoch, before expiry, passes", () => {
    const before = cluster();
    expectChange(before, apply(before, declare("b"), at(LEASE_EXPIRES_MS - 1)));
  });
});

describe("coordinator fencing", () => {
  it("a stale coordinator is fenced once another node acquired the expired lease: its commands change nothing", () => {
    const later = build([acquire("c")], cluster(), at(LEASE_EXPIRES_MS));
    expect(later.lease).toMatchObject({ holder: "c", coordinatorEpoch: 2 });
    const nowMs = LEASE_EXPIRES_MS + 1;
    expectRejected(later, apply(later, declare("b"), at(nowMs)), "fenced", { holder: "c", coordinatorEpoch: 2 });
    const dead = build([declare("b", 1, { nodeId: "c", nodeEpoch: 1, coordinatorEpoch: 2 })], later, at(nowMs));
    expectRejected(dead, apply(dead, reassign([{ streamId: "s1", target: "c" }]), at(nowMs)), "fenced", { holder: "c", coordinatorEpoch: 2 });
    // The new coordinator's own commands pass.
    expectChange(dead, apply(dead, reassign([{ streamId: "s1", target: "c" }], { nodeId: "c", nodeEpoch: 1, coordinatorEpoch: 2 }), at(nowMs)));
  });
  it("the old holder acquiring again gets a new coordinator epoch: its commands at the old one stay fenced", () => {
    const later = build([acquire("c")], cluster(), at(LEASE_EXPIRES_MS));
    const back = build([acquire("a")], later, at(LEASE_EXPIRES_MS + TTL_MS));
    expect(back.lease).toMatchObject({ holder: "a", coordinatorEpoch: 3 });
    const nowMs = LEASE_EXPIRES_MS + TTL_MS + 1;
    expectRejected(back, apply(back, declare("b"), at(nowMs)), "fenced", { holder: "a", coordinatorEpoch: 3 });
    expectChange(back, apply(back, declare("b", 1, { ...COORD, coordinatorEpoch: 3 }), at(nowMs)));
  });
  it("an expired lease fences even when nobody took it: no DeclareDead or ReassignStreams until the holder acquires again", () => {
    const before = bDead();
    const nowMs = LEASE_EXPIRES_MS + 5000;
    expectRejected(before, apply(before, reassign([{ streamId: "s1", target: "c" }]), at(nowMs)), "fenced", { expiresAtMs: LEASE_EXPIRES_MS });
    const renewed = build([acquire("a")], before, at(nowMs));
    expect(renewed.lease).toMatchObject({ holder: "a", coordinatorEpoch: 2 });
    expectRejected(renewed, apply(renewed, reassign([{ streamId: "s1", target: "c" }]), at(nowMs)), "fenced", { coordinatorEpoch: 2 });
    expectChange(renewed, apply(renewed, reassign([{ streamId: "s1", target: "c" }], { ...COORD, coordinatorEpoch: 2 }), at(nowMs)));
  });
});

describe("table DD: DeclareDead", () => {
  it("DD1: a DeclareDead from a node that is not the coordinator is refused as table C says", () => {
    const before = cluster();
    expectRejected(before, apply(before, declare("b", 1, { nodeId: "c", nodeEpoch: 1, coordinatorEpoch: 1 }), CTX), "fenced", { holder: "a" });
  });
  it("DD2: a node that is not registered is not_found", () => {
    const before = cluster();
    expectRejected(before, apply(before, declare("q"), CTX), "not_found", { nodeId: "q" });
  });
  it("DD3: declaring an incarnation dead again is a no-op that keeps its claim", () => {
    const before = bDead([claim("b", 1, by("c"))]);
    const { node } = expectNoop(before, apply(before, declare("b"), CTX));
    expect(node.dead).toEqual({ epoch: 1, claim: { by: "c", expiresAtMs: NOW_MS + TTL_MS } });
    // Taken over and not registered again, it is still declared dead at 1.
    const takenOver = build([complete("b", 1, by("c"))], before);
    expect(expectNoop(takenOver, apply(takenOver, declare("b"), CTX)).node).toMatchObject({ epoch: 2, takenOver: 1 });
  });
  it("DD4: a node that registered again at another epoch is not declared dead (stale_epoch)", () => {
    const before = cluster([register("b", 5)]);
    expectRejected(before, apply(before, declare("b", 1), CTX), "stale_epoch", { nodeId: "b", currentEpoch: 5 });
    // After a declaration the record is at epoch 2, which no incarnation of b ever had.
    const dead = cluster([declare("b"), register("b", 5)]);
    expectRejected(dead, apply(dead, declare("b", 1), CTX), "stale_epoch", { currentEpoch: 5 });
  });
  it("DD5: the coordinator cannot declare itself dead (invalid)", () => {
    const before = cluster();
    expectRejected(before, apply(before, declare("a"), CTX), "invalid");
  });
  it("DD6: the incarnation is declared dead: its record moves to epoch + 1, so its proposals are refused", () => {
    const before = cluster();
    const applied = apply(before, declare("b"), CTX);
    const { node } = expectChange(before, applied);
    expect(node).toEqual({ id: "b", epoch: 2, addr: "https://mink.test/n/b", slots: 1, draining: false, dead: { epoch: 1 } });
    expect(applied.state.nodes.get("b")).toEqual(node);
    // Nothing moved yet: the streams are still b's until the coordinator re-leads them.
    expect(applied.state.streams.get("s1")).toMatchObject({ owner: "b", ownership: "opened", epoch: 1 });
    expect(applied.state.assigned.get("b")).toBe(3);
    const after = applied.state;
    expectRejected(after, apply(after, open("s1", "b", 1), CTX), "stale_epoch", { nodeId: "b", currentEpoch: 2 });
    expectRejected(after, apply(after, close("s1", "b", 1, 1), CTX), "stale_epoch", { currentEpoch: 2 });
  });
  it("DD6: a later DeclareDead replaces an earlier dead incarnation not taken over yet, and its takeover covers both", () => {
    // b dead at 1 (c claimed it), back at 5 before the takeover finished, then dead again at 5.
    const before = s1Orphaned([claim("b", 1, by("c")), register("b", 5)]);
    expect(before.nodes.get("b")).toMatchObject({ epoch: 5, dead: { epoch: 1, claim: { by: "c" } } });
    const applied = apply(before, declare("b", 5), CTX);
    const { node } = expectChange(before, applied);
    // The claim on the earlier incarnation is dropped with it.
    expect(node).toMatchObject({ epoch: 6, dead: { epoch: 5 } });
    expect(node.dead?.claim).toBeUndefined();
    const after = applied.state;
    // The earlier incarnation can no longer be claimed or completed on its own: take over the later one.
    expectRejected(after, apply(after, claim("b", 1, by("c")), CTX), "stale_epoch", { nodeId: "b", deadEpoch: 5 });
    expectRejected(after, apply(after, complete("b", 1, by("c")), CTX), "stale_epoch", { deadEpoch: 5 });
    // The orphan of {b, 1} waits for the takeover of 5, which covers 1's chain too.
    expectRejected(after, apply(after, open("s1", "c"), CTX), "unavailable", { deadNode: "b", deadEpoch: 1 });
    const done = build([claim("b", 5, by("c")), complete("b", 5, by("c"))], after);
    expect(done.nodes.get("b")).toMatchObject({ epoch: 6, takenOver: 5 });
    expect(expectChange(done, apply(done, open("s1", "c"), CTX)).stream).toMatchObject({ owner: "c", epoch: 2, ownership: "opened" });
  });
});

describe("table RA: ReassignStreams", () => {
  it("RA1: a ReassignStreams from a node that is not the coordinator is refused as table C says", () => {
    const before = bDead();
    expectRejected(before, apply(before, reassign([{ streamId: "s1", target: "c" }], { nodeId: "c", nodeEpoch: 1, coordinatorEpoch: 1 }), CTX), "fenced", {
      holder: "a",
      coordinatorEpoch: 1,
    });
  });
  it("RA2: a target that is not registered, has no slots, drains or is declared dead is invalid and nothing moves", () => {
    const before = bDead([register("d"), register("e", 1, 0), register("f"), { type: "SetDraining", nodeId: "f", draining: true }]);
    for (const target of ["q", "e", "f", "b"]) {
      // The valid first move does not happen either: the entry is refused whole.
      const applied = apply(before, reassign([{ streamId: "s1", target: "c" }, { streamId: "s2", target }]), CTX);
      expectRejected(before, applied, "invalid", { target });
    }
    const cDead = bDead([register("d"), declare("c")]);
    expectRejected(cDead, apply(cDead, reassign([{ streamId: "s1", target: "c" }]), CTX), "invalid", { target: "c" });
  });
  it("RA3: a move whose stream is gone, not placed or opened, not on a declared-dead node, or already on the target is skipped", () => {
    const before = bDead([
      register("d"),
      create("u"), // s4: unplaced
      create("w"),
      place("s5"), // s5: placed on c (the only eligible node, b is dead)
      { type: "DeleteStream", streamId: "s3" },
    ]);
    expect(before.streams.get("s5")).toMatchObject({ owner: "c", ownership: "placed" });
    // s6: placed on d (c has s5), opened and closed by d.
    const withClosed = build([create("v"), place("s6"), open("s6", "d"), close("s6", "d", 1)], before);
    const moves = [
      { streamId: "s3", target: "c" }, // deleted
      { streamId: "s9", target: "c" }, // never existed
      { streamId: "s4", target: "c" }, // unplaced
      { streamId: "s6", target: "c" }, // closed
      { streamId: "s5", target: "d" }, // owner c is live
      { streamId: "s5", target: "c" }, // already on the target
      { streamId: "s1", target: "d" }, // the one real move
    ];
    const applied = apply(withClosed, reassign(moves), CTX);
    const { streams, skipped } = expectChange(withClosed, applied);
    expect(streams.map((s) => s.id)).toEqual(["s1"]);
    expect(skipped).toEqual(["s3", "s9", "s4", "s6", "s5", "s5"]);
    expect(applied.state.streams.get("s5")).toBe(withClosed.streams.get("s5"));
    expect(applied.state.streams.get("s6")).toBe(withClosed.streams.get("s6"));
  });
  it("RA3: the second move of one stream in a batch is skipped: it left the dead node with the first", () => {
    const before = bDead([register("d")]);
    const applied = apply(before, reassign([{ streamId: "s1", target: "c" }, { streamId: "s1", target: "d" }]), CTX);
    expect(expectChange(before, applied).skipped).toEqual(["s1"]);
    expect(applied.state.streams.get("s1")?.owner).toBe("c");
  });
  it("RA4: a stream the dead owner had opened is placed on the target at the same epoch, an orphan of that incarnation; its transfer is dropped", () => {
    // The transfer began before b was declared dead (BT8b refuses one after).
    const before = cluster([register("d"), { type: "BeginTransfer", streamId: "s1", target: "d" }, declare("b")]);
    const applied = apply(before, reassign([{ streamId: "s1", target: "c" }]), CTX);
    const { streams } = expectChange(before, applied);
    const moved = { id: "s1", name: "x", owner: "c", epoch: 1, ownership: "placed", config: {}, orphanOf: { node: "b", nodeEpoch: 1 } };
    expect(streams).toEqual([moved]);
    expect(applied.state.streams.get("s1")).toEqual(moved);
    expect(applied.state.transfers.has("s1")).toBe(false);
    expect(applied.state.assigned.get("b")).toBe(2);
    expect(applied.state.assigned.get("c")).toBe(1);
  });
  it("RA5: a stream placed on the dead owner is placed on the target and keeps its orphanOf (none, or an earlier owner's)", () => {
    const before = bDead([register("d")]);
    const applied = apply(before, reassign([{ streamId: "s3", target: "c" }]), CTX);
    const { streams } = expectChange(before, applied);
    // Never opened by b: nothing of it can be in b's WAL.
    expect(streams).toEqual([{ id: "s3", name: "z", owner: "c", epoch: 0, ownership: "placed", config: {} }]);
    // s1, an orphan of b placed on c, moves on when c dies before opening it: it stays an orphan of b.
    const cDead = build([reassign([{ streamId: "s1", target: "c" }]), declare("c")], before);
    const again = apply(cDead, reassign([{ streamId: "s1", target: "d" }]), CTX);
    expect(expectChange(cDead, again).streams).toEqual([
      { id: "s1", name: "x", owner: "d", epoch: 1, ownership: "placed", config: {}, orphanOf: { node: "b", nodeEpoch: 1 } },
    ]);
  });
  it("RA6: a ReassignStreams whose every move is skipped is a no-op listing them", () => {
    const before = s1Orphaned();
    const { streams, skipped } = expectNoop(before, apply(before, reassign([{ streamId: "s1", target: "c" }, { streamId: "s9", target: "c" }]), CTX));
    expect(streams).toEqual([]);
    expect(skipped).toEqual(["s1", "s9"]);
  });
});

describe("table CK: ClaimTakeover", () => {
  it("CK1: a claimer that fails table P is refused as table P says (the dead incarnation cannot claim itself)", () => {
    const before = bDead();
    expectRejected(before, apply(before, claim("b", 1, by("b", 1)), CTX), "stale_epoch", { nodeId: "b", currentEpoch: 2 });
    expectRejected(before, apply(before, claim("b", 1, by("q")), CTX), "not_found", { nodeId: "q" });
  });
  it("CK2: a node that is not registered is not_found", () => {
    const before = bDead();
    expectRejected(before, apply(before, claim("q", 1, by("c")), CTX), "not_found", { nodeId: "q" });
  });
  it("CK3: an incarnation taken over already is a no-op showing takenOver", () => {
    const before = bDead([claim("b", 1, by("c")), complete("b", 1, by("c"))]);
    expect(expectNoop(before, apply(before, claim("b", 1, by("c")), CTX)).node.takenOver).toBe(1);
    expectNoop(before, apply(before, claim("b", 1, by("a")), CTX));
  });
  it("CK4: an incarnation earlier than the dead one is stale_epoch with the dead epoch: take that one over", () => {
    const before = bDead([register("b", 5), declare("b", 5)]);
    expectRejected(before, apply(before, claim("b", 1, by("c")), CTX), "stale_epoch", { nodeId: "b", deadEpoch: 5 });
  });
  it("CK5: an incarnation that is not declared dead is invalid", () => {
    const live = cluster();
    expectRejected(live, apply(live, claim("b", 1, by("c")), CTX), "invalid", { nodeId: "b", nodeEpoch: 1 });
    const before = bDead();
    // Epoch 2 is the record's epoch after the declaration, not a dead incarnation.
    expectRejected(before, apply(before, claim("b", 2, by("c")), CTX), "invalid", { nodeId: "b", nodeEpoch: 2 });
  });
  it("CK6: a claim another node holds and that has not expired is held_by that node", () => {
    const before = bDead([register("d"), claim("b", 1, by("c"))]);
    expectRejected(before, apply(before, claim("b", 1, by("d")), at(NOW_MS + TTL_MS - 1)), "held_by", {
      owner: "c",
      expiresAtMs: NOW_MS + TTL_MS,
    });
  });
  it("CK7: an unclaimed incarnation is claimed until now + ttl; the claimer may claim it again to extend", () => {
    const before = bDead();
    const applied = apply(before, claim("b", 1, by("c"), 10_000), CTX);
    expect(expectChange(before, applied).node.dead).toEqual({ epoch: 1, claim: { by: "c", expiresAtMs: NOW_MS + 10_000 } });
    const again = apply(applied.state, claim("b", 1, by("c"), 10_000), at(NOW_MS + 5000));
    expect(expectChange(applied.state, again).node.dead?.claim).toEqual({ by: "c", expiresAtMs: NOW_MS + 15_000 });
  });
  it("CK7: a claim that expired is taken by another node, and only the new claimer completes", () => {
    const before = bDead([register("d"), claim("b", 1, by("c"), 10_000)]);
    const expiry = NOW_MS + 10_000;
    expectRejected(before, apply(before, claim("b", 1, by("d")), at(expiry - 1)), "held_by", { owner: "c", expiresAtMs: expiry });
    const applied = apply(before, claim("b", 1, by("d")), at(expiry));
    expect(expectChange(before, applied).node.dead).toEqual({ epoch: 1, claim: { by: "d", expiresAtMs: expiry + TTL_MS } });
    const taken = applied.state;
    expectRejected(taken, apply(taken, complete("b", 1, by("c")), at(expiry + 1)), "held_by", { owner: "d" });
    expectRejected(taken, apply(taken, claim("b", 1, by("c")), at(expiry + 1)), "held_by", { owner: "d" });
    expect(expectChange(taken, apply(taken, complete("b", 1, by("d")), at(expiry + 1))).node).toMatchObject({ epoch: 2, takenOver: 1 });
  });
  it("CK7: a claim whose expiry could not be written to a snapshot is invalid (ttlMs is at most a day)", () => {
    const before = bDead();
    expectRejected(before, apply(before, claim("b", 1, by("c"), Number.MAX_SAFE_INTEGER), CTX), "invalid", { field: "ttlMs" });
  });
});

describe("table CO: CompleteTakeover", () => {
  it("CO1: a completer that fails table P is refused as table P says", () => {
    const before = bDead([claim("b", 1, by("c")), register("c", 2)]);
    expectRejected(before, apply(before, complete("b", 1, by("c", 1)), CTX), "stale_epoch", { nodeId: "c", currentEpoch: 2 });
  });
  it("CO2: a node that is not registered is not_found", () => {
    const before = bDead();
    expectRejected(before, apply(before, complete("q", 1, by("c")), CTX), "not_found", { nodeId: "q" });
  });
  it("CO3: a retried completion is a no-op", () => {
    const before = bDead([claim("b", 1, by("c")), complete("b", 1, by("c"))]);
    expect(expectNoop(before, apply(before, complete("b", 1, by("c")), CTX)).node.takenOver).toBe(1);
  });
  it("CO4: an incarnation that is not the dead one is refused as CK4 and CK5 say", () => {
    const live = cluster();
    expectRejected(live, apply(live, complete("b", 1, by("c")), CTX), "invalid", { nodeId: "b", nodeEpoch: 1 });
    const later = bDead([register("b", 5), declare("b", 5), claim("b", 5, by("c"))]);
    expectRejected(later, apply(later, complete("b", 1, by("c")), CTX), "stale_epoch", { deadEpoch: 5 });
  });
  it("CO5: only the claimer completes: unclaimed or claimed by another node is held_by", () => {
    const unclaimed = bDead();
    expectRejected(unclaimed, apply(unclaimed, complete("b", 1, by("c")), CTX), "held_by", { owner: null });
    const claimed = bDead([claim("b", 1, by("c"))]);
    expectRejected(claimed, apply(claimed, complete("b", 1, by("a")), CTX), "held_by", { owner: "c" });
  });
  it("CO6: the claimer completes: dead cleared, takenOver = E, the epoch stays refused", () => {
    const before = bDead([claim("b", 1, by("c"))]);
    const { node } = expectChange(before, apply(before, complete("b", 1, by("c")), CTX));
    expect(node).toEqual({ id: "b", epoch: 2, addr: "https://mink.test/n/b", slots: 1, draining: false, takenOver: 1 });
  });
  it("CO6: a claimer whose claim expired still completes when nobody claimed it since", () => {
    const before = bDead([claim("b", 1, by("c"), 1000)]);
    expect(expectChange(before, apply(before, complete("b", 1, by("c")), at(NOW_MS + 60_000))).node.takenOver).toBe(1);
  });
});

describe("row OS3b: the open gate of a dead incarnation", () => {
  it("OS3b: an orphan cannot open before the takeover completes (unavailable), even after a claim", () => {
    const before = s1Orphaned();
    expectRejected(before, apply(before, open("s1", "c"), CTX), "unavailable", { streamId: "s1", deadNode: "b", deadEpoch: 1 });
    const claimed = build([claim("b", 1, by("c"))], before);
    expectRejected(claimed, apply(claimed, open("s1", "c"), CTX), "unavailable", { deadNode: "b", deadEpoch: 1 });
  });
  it("OS3b: an orphan opens after CompleteTakeover, and the opened record drops orphanOf", () => {
    const before = s1Orphaned([claim("b", 1, by("c")), complete("b", 1, by("c"))]);
    const applied = apply(before, open("s1", "c"), CTX);
    const opened = { id: "s1", name: "x", owner: "c", epoch: 2, ownership: "opened", config: {} };
    expect(expectChange(before, applied).stream).toEqual(opened);
    expect(applied.state.streams.get("s1")).toEqual(opened);
  });
  it("CL7b: an orphan cannot be closed before its dead incarnation is taken over (its data is not in the manifest yet)", () => {
    const before = s1Orphaned([register("d")]);
    expectRejected(before, apply(before, close("s1", "c", 1), CTX), "unavailable", { deadNode: "b", deadEpoch: 1 });
    const done = build([claim("b", 1, by("d")), complete("b", 1, by("d"))], before);
    expect(expectChange(done, apply(done, close("s1", "c", 1), CTX)).stream).toMatchObject({ ownership: "closed" });
  });
  it("OS3b: a node back from the dead cannot re-open its own old streams until its dead incarnation is taken over", () => {
    // b declared dead, back at epoch 5 before the coordinator moved anything.
    const before = bDead([register("b", 5)]);
    expect(before.streams.get("s1")).toMatchObject({ owner: "b", ownership: "opened" });
    expectRejected(before, apply(before, open("s1", "b", 5), CTX), "unavailable", { deadNode: "b", deadEpoch: 1 });
    expectRejected(before, apply(before, open("s3", "b", 5), CTX), "unavailable", { deadNode: "b", deadEpoch: 1 });
    // b may take its own old incarnation over (its chain is sealed and replayed), then open.
    const done = build([claim("b", 1, by("b", 5)), complete("b", 1, by("b", 5))], before);
    expect(expectChange(done, apply(done, open("s1", "b", 5), CTX)).stream).toMatchObject({ owner: "b", epoch: 2, ownership: "opened" });
  });
  it("OS3b: streams of a node that was never declared dead are not gated", () => {
    const before = cluster([register("b", 5)]);
    expectChange(before, apply(before, open("s1", "b", 5), CTX));
  });
});

describe("failover end to end in the core", () => {
  it("B dies: declared dead, its streams re-led to C, C takes B over and opens them; B's zombie is refused; B comes back owning nothing that moved", () => {
    // Register A, B, C; the lease to A (the coordinator takes no streams); streams placed on and opened by B.
    let state = cluster();
    const step = (command: Command, nowMs = NOW_MS + 10_000): void => {
      const before = state;
      const applied = apply(before, command, at(nowMs));
      expectChange(before, applied);
      state = applied.state;
    };
    for (const id of ["s1", "s2", "s3"]) expect(state.streams.get(id)?.owner).toBe("b");

    // B stops heartbeating: the coordinator's tick declares it dead.
    const live = new Set(["a", "c"]);
    const toDeclare = deadToDeclare(state, live, "a");
    expect(toDeclare.map((node) => [node.id, node.epoch])).toEqual([["b", 1]]);
    for (const node of toDeclare) step(declare(node.id, node.epoch));
    expect(deadToDeclare(state, live, "a")).toEqual([]);

    // The coordinator re-leads B's streams to C in bounded batches from the plan.
    const firstBatch = planReassignments(state, live, 2);
    expect(firstBatch).toHaveLength(2);
    step(reassign(firstBatch));
    const secondBatch = planReassignments(state, live, 2);
    expect(secondBatch).toHaveLength(1);
    step(reassign(secondBatch));
    expect(planReassignments(state, live, 2)).toEqual([]);
    expect([...firstBatch, ...secondBatch].map((move) => move.target)).toEqual(["c", "c", "c"]);
    expect([...state.assigned.entries()]).toEqual([["c", 3]]);
    for (const id of ["s1", "s2"]) {
      expect(state.streams.get(id)).toMatchObject({ owner: "c", ownership: "placed", epoch: 1, orphanOf: { node: "b", nodeEpoch: 1 } });
    }
    // s3 was only placed on B: never opened there, not an orphan.
    expect(state.streams.get("s3")).toEqual({ id: "s3", name: "z", owner: "c", epoch: 0, ownership: "placed", config: {} });

    // C cannot open an orphan before the takeover.
    expectRejected(state, apply(state, open("s1", "c"), at(NOW_MS + 10_000)), "unavailable", { deadNode: "b", deadEpoch: 1 });

    // C claims B's incarnation, seals and replays its chain (outside the core), completes.
    step(claim("b", 1, by("c")));
    step(complete("b", 1, by("c")));
    expect(state.nodes.get("b")).toMatchObject({ epoch: 2, takenOver: 1 });
    expect(state.nodes.get("b")?.dead).toBeUndefined();

    // C opens: each open out-ranks B's stream epoch, and drops orphanOf.
    for (const id of ["s1", "s2", "s3"]) {
      const epoch = state.streams.get(id)?.epoch ?? -1;
      step(open(id, "c"));
      expect(state.streams.get(id)).toEqual({ id, name: state.streams.get(id)?.name, owner: "c", epoch: epoch + 1, ownership: "opened", config: {} });
    }

    // B's zombie, still at epoch 1, proposes: every proposal is refused and changes nothing.
    const zombie: Command[] = [
      open("s1", "b", 1),
      close("s1", "b", 1, 1),
      { type: "CreateStream", name: "zombie", config: {}, by: by("b", 1) },
      { type: "PlaceStream", streamId: "s1", by: by("b", 1) },
      { type: "BeginTransfer", streamId: "s2", target: "b", by: by("b", 1) },
      claim("b", 1, by("b", 1)),
      { type: "AcquireLease", nodeId: "b", nodeEpoch: 1, ttlMs: TTL_MS },
    ];
    for (const command of zombie) {
      expectRejected(state, apply(state, command, at(NOW_MS + 20_000)), "stale_epoch", { nodeId: "b", currentEpoch: 2 });
    }

    // Taken over and still gone: the tick declares nothing more and plans nothing.
    expect(deadToDeclare(state, live, "a")).toEqual([]);
    expect(planReassignments(state, live, 10)).toEqual([]);

    // B registers again at a later epoch: it owns nothing that moved, and may take new streams.
    step(register("b", 7));
    expect(state.nodes.get("b")).toMatchObject({ epoch: 7, takenOver: 1 });
    expect(state.assigned.get("b")).toBeUndefined();
    for (const id of ["s1", "s2", "s3"]) {
      const stream = state.streams.get(id);
      expect(stream?.owner).not.toBe("b");
      expectRejected(state, apply(state, open(id, "b", 7), at(NOW_MS + 20_000)), "held_by", { owner: stream?.owner });
    }
    expect(deadToDeclare(state, new Set(["a", "b", "c"]), "a")).toEqual([]);
    step(create("fresh"));
    step(place("s4"));
    expect(state.streams.get("s4")?.owner).toBe("b");
    step(open("s4", "b", 7));
  });

  it("streams still on B when its takeover completes are re-led afterwards, and B is not declared dead again", () => {
    const live = new Set(["a", "c"]);
    let state = bDead();
    // One batch of one move, then the takeover completes before the next batch.
    state = build([reassign(planReassignments(state, live, 1)), claim("b", 1, by("c")), complete("b", 1, by("c"))], state);
    expect(state.assigned.get("b")).toBe(2);
    expect(deadToDeclare(state, live, "a")).toEqual([]);
    const rest = planReassignments(state, live, 10);
    expect(rest).toHaveLength(2);
    const applied = apply(state, reassign(rest), CTX);
    const { streams } = expectChange(state, applied);
    // B's incarnation is taken over already: nothing left to wait for.
    for (const stream of streams) expect(stream.orphanOf).toBeUndefined();
    expect(applied.state.assigned.get("b")).toBeUndefined();
    for (const stream of streams) expectChange(applied.state, apply(applied.state, open(stream.id, "c"), CTX));
  });
});
