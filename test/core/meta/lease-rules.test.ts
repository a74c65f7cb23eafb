// Tables AL and RL (src/core/meta/lease-rules.ts), one test per row.
import { describe, expect, it } from "vitest";
import { apply, type CommandOf, type MetaState } from "../../../src/core/meta/index.ts";
import { build, expectChange, expectNoop, expectRejected, NOW_MS, register } from "./fixtures.ts";

const TTL_MS = 30_000;
const acquire = (nodeId: string, nodeEpoch = 1): CommandOf<"AcquireLease"> => ({ type: "AcquireLease", nodeId, nodeEpoch, ttlMs: TTL_MS });
const renew = (nodeId: string, coordinatorEpoch: number, nodeEpoch = 1): CommandOf<"RenewLease"> => ({
  type: "RenewLease",
  nodeId,
  nodeEpoch,
  coordinatorEpoch,
  ttlMs: TTL_MS,
});
const at = (nowMs: number) => ({ nowMs });

/** Nodes a and b; a holds the lease (coordinator epoch 1) from NOW_MS. */
function heldByA(): MetaState {
  return build([acquire("a")], build([register("a"), register("b")]), at(NOW_MS));
}

describe("table AL: AcquireLease", () => {
  it("AL1 AcquireLease at a stale node epoch is rejected", () => {
    const before = build([register("a", 2)]);
    expectRejected(before, apply(before, acquire("a", 1), at(NOW_MS)), "stale_epoch", { currentEpoch: 2 });
  });
  it("AL2 AcquireLease while another node holds an unexpired lease is held_by the holder", () => {
    const before = heldByA();
    expectRejected(before, apply(before, acquire("b"), at(NOW_MS + TTL_MS - 1)), "held_by", {
      holder: "a",
      coordinatorEpoch: 1,
      expiresAtMs: NOW_MS + TTL_MS,
    });
  });
  it("AL3 AcquireLease by the holder at the same node epoch extends it and keeps the coordinator epoch", () => {
    const before = heldByA();
    const { lease } = expectChange(before, apply(before, acquire("a"), at(NOW_MS + 1000)));
    expect(lease).toEqual({ holder: "a", holderEpoch: 1, coordinatorEpoch: 1, expiresAtMs: NOW_MS + 1000 + TTL_MS });
    expectNoop(before, apply(before, acquire("a"), at(NOW_MS)));
  });
  it("AL4 AcquireLease with no lease grants coordinator epoch 1 expiring at now + ttl", () => {
    const before = build([register("a")]);
    expect(expectChange(before, apply(before, acquire("a"), at(NOW_MS))).lease).toEqual({
      holder: "a",
      holderEpoch: 1,
      coordinatorEpoch: 1,
      expiresAtMs: NOW_MS + TTL_MS,
    });
  });
  it("AL4 AcquireLease after expiry goes to the new holder at the next coordinator epoch", () => {
    const before = heldByA();
    const { lease } = expectChange(before, apply(before, acquire("b"), at(NOW_MS + TTL_MS)));
    expect(lease).toMatchObject({ holder: "b", coordinatorEpoch: 2 });
  });
  it("AL4 AcquireLease by the holder after its restart (a new node epoch) gets a new coordinator epoch", () => {
    const before = build([register("a", 2)], heldByA());
    expect(expectChange(before, apply(before, acquire("a", 2), at(NOW_MS + 10))).lease).toMatchObject({ coordinatorEpoch: 2, holderEpoch: 2 });
  });
});

describe("table RL: RenewLease", () => {
  it("RL1 RenewLease at a stale node epoch is rejected", () => {
    const before = build([register("a", 2)], heldByA());
    expectRejected(before, apply(before, renew("a", 1, 1), at(NOW_MS)), "stale_epoch");
  });
  it("RL2 RenewLease by a node that does not hold the lease, or at another coordinator epoch, is fenced", () => {
    const before = heldByA();
    expectRejected(before, apply(before, renew("b", 1), at(NOW_MS)), "fenced", { holder: "a", coordinatorEpoch: 1 });
    expectRejected(before, apply(before, renew("a", 0), at(NOW_MS)), "fenced", { coordinatorEpoch: 1 });
    const none = build([register("a")]);
    expectRejected(none, apply(none, renew("a", 1), at(NOW_MS)), "fenced", { holder: null, coordinatorEpoch: 0 });
  });
  it("RL2 a stale coordinator cannot renew after another node acquired the expired lease", () => {
    const taken = build([acquire("b")], heldByA(), at(NOW_MS + TTL_MS));
    expectRejected(taken, apply(taken, renew("a", 1), at(NOW_MS + TTL_MS + 1)), "fenced", { holder: "b", coordinatorEpoch: 2 });
  });
  it("RL3 RenewLease after expiry is fenced: acquire again", () => {
    const before = heldByA();
    expectRejected(before, apply(before, renew("a", 1), at(NOW_MS + TTL_MS)), "fenced", { expiresAtMs: NOW_MS + TTL_MS });
  });
  it("RL4 RenewLease by the holder extends the expiry and never shortens it", () => {
    const before = heldByA();
    expect(expectChange(before, apply(before, renew("a", 1), at(NOW_MS + 5000))).lease.expiresAtMs).toBe(NOW_MS + 5000 + TTL_MS);
    expectNoop(before, apply(before, renew("a", 1), at(NOW_MS - 5000)));
  });
});
