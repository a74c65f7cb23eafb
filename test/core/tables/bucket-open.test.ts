// Tables BO and BR of src/core/tables/bucket-open.ts, row by row.
import { describe, expect, it } from "vitest";
import { bucketRequestAnswer, decideBucketOpen, OPENING_RETRY_AFTER_S, type BucketOpenInput } from "../../../src/core/tables/bucket-open.ts";

const base: BucketOpenInput = {
  view: { leader: "a", leaderEpoch: 3 },
  stream: { state: "closed", epoch: 2 },
  nodeId: "a",
  liveIds: new Set(["a", "b"]),
  openLocallyAt: null,
};

describe("table BO: opening a bucket", () => {
  it("BO1: a bucket another node should lead is closed here if open", () => {
    expect(decideBucketOpen({ ...base, view: { leader: "b", leaderEpoch: 3 }, openLocallyAt: 2 })).toEqual({ action: "close", epoch: 2 });
  });
  it("BO2: a bucket another node should lead and not open here needs nothing", () => {
    expect(decideBucketOpen({ ...base, view: { leader: "b", leaderEpoch: 3 } })).toEqual({ action: "none" });
  });
  it("BO3: a bucket served at the leader epoch needs nothing", () => {
    expect(decideBucketOpen({ ...base, stream: { state: "opened", by: "a", epoch: 3 }, openLocallyAt: 3 })).toEqual({ action: "none" });
  });
  it("BO4: opened by another live node: retry later", () => {
    expect(decideBucketOpen({ ...base, stream: { state: "opened", by: "b", epoch: 2 } })).toEqual({ action: "retry", holder: "b" });
  });
  it("BO5: opened by a node that is not live: take it over, then open", () => {
    expect(decideBucketOpen({ ...base, stream: { state: "opened", by: "c", epoch: 2 } })).toEqual({ action: "take_over_then_open", deadNode: "c", leaderEpoch: 3 });
  });
  it("BO6: closed at the leader epoch, or opened there by this node's earlier self: a fresh epoch first", () => {
    expect(decideBucketOpen({ ...base, stream: { state: "closed", epoch: 3 } })).toEqual({ action: "lead_then_open" });
    expect(decideBucketOpen({ ...base, stream: { state: "opened", by: "a", epoch: 3 } })).toEqual({ action: "lead_then_open" });
  });
  it("BO7: closed below the leader epoch: open at the leader epoch", () => {
    expect(decideBucketOpen(base)).toEqual({ action: "open", leaderEpoch: 3 });
    expect(decideBucketOpen({ ...base, stream: { state: "opened", by: "a", epoch: 1 }, openLocallyAt: 1 })).toEqual({ action: "open", leaderEpoch: 3 });
  });
  it("BO8: a stream epoch above the view's leader epoch: the view lags, retry", () => {
    expect(decideBucketOpen({ ...base, stream: { state: "closed", epoch: 4 } })).toEqual({ action: "retry", holder: "a" });
  });
});

describe("table BR: answering a request for a bucket", () => {
  const view = { leader: "a", leaderEpoch: 3 };
  it("BR1: another node leads it: not_leader with its address and epoch", () => {
    expect(bucketRequestAnswer(view, "b", null, "https://mink.test/n/a")).toEqual({ answer: "not_leader", leader: "a", leaderAddr: "https://mink.test/n/a", leaderEpoch: 3 });
  });
  it("BR2: this node leads it but has not opened it at the leader epoch: unavailable", () => {
    expect(bucketRequestAnswer(view, "a", null, null)).toEqual({ answer: "unavailable", retryAfterS: OPENING_RETRY_AFTER_S });
    expect(bucketRequestAnswer(view, "a", 2, null)).toEqual({ answer: "unavailable", retryAfterS: OPENING_RETRY_AFTER_S });
  });
  it("BR3: served at the leader epoch", () => {
    expect(bucketRequestAnswer(view, "a", 3, null)).toEqual({ answer: "serve", leaderEpoch: 3 });
  });
});
