// The linearizability check of a whole simulation run (linearizability-check.ts): a seed's history as
// recorded passes, and each mutation of it that breaks a rule fails on the stream it touched.
import { describe, expect, it } from "vitest";
import type { History } from "./history.ts";
import { checkLinearizable } from "./linearizability-check.ts";
import { runSeed } from "./run-seed.ts";

describe("the linearizability check of a simulation run (linearizability-check.ts)", () => {
  // One seed's recorded history, then the same history with one answer changed, as a deliberate bug would.
  // The first seed from 3 whose run has what the mutations below need (which seed that is depends on the
  // run, not on the check): a catch-up read that returned bytes, and a stream with two acknowledged appends.
  let seed: number | undefined;
  const usable = (history: History): boolean => {
    const acked = history.appends.filter((a) => a.ack !== undefined);
    return history.reads.some((read) => read.mode === "catch-up" && read.bytes.length > 0) && acked.some((a) => acked.filter((b) => b.stream === a.stream).length >= 2);
  };
  const fresh = async (): Promise<History> => {
    for (let candidate = seed ?? 3; candidate < 50; candidate++) {
      const { history } = await runSeed(candidate);
      if (usable(history)) {
        seed = candidate;
        return history;
      }
    }
    throw new Error("no seed in 3-49 has a catch-up read with bytes and a stream with two acknowledged appends");
  };
  const INVARIANT_NAME = "linearizability";

  it("passes that seed's history as recorded", async () => {
    expect(checkLinearizable(await fresh(), INVARIANT_NAME)).toEqual([]);
  });

  it("fails it once an acknowledgement is moved onto another's offset", async () => {
    const history = await fresh();
    // A stream with two acknowledged appends (which stream that is depends on the seed's run, not on the check).
    const acked = history.appends.filter((a) => a.ack !== undefined);
    const stream = acked.find((a) => acked.filter((b) => b.stream === a.stream).length >= 2)!.stream;
    const [first, second] = acked.filter((a) => a.stream === stream);
    second!.ack = { ...second!.ack!, start: first!.ack!.start, end: first!.ack!.start + second!.token.length };
    const violations = checkLinearizable(history, INVARIANT_NAME);
    expect(violations.map((v) => v.focus)).toEqual([[first!.stream]]);
    expect(violations[0]!.message).toContain("not linearizable");
  });

  it("fails it once a read is answered with bytes no client wrote", async () => {
    const history = await fresh();
    const index = history.reads.findIndex((read) => read.mode === "catch-up" && read.bytes.length > 0);
    const read = history.reads[index]!;
    history.reads[index] = { ...read, bytes: "#".repeat(read.bytes.length) };
    expect(checkLinearizable(history, INVARIANT_NAME).map((v) => v.focus)).toEqual([[read.stream]]);
  });

  it("fails it once an empty long-poll misses an append acknowledged before it was sent", async () => {
    const history = await fresh();
    const acked = history.appends.find((a) => a.ack !== undefined)!;
    const by = history.reads.find((read) => read.mode === "final")!.by;
    const step = acked.ack!.step + 1;
    history.emptyPolls.push({ client: "t9", stream: acked.stream, offset: acked.ack!.start, next: acked.ack!.start, sentStep: step, sentMs: 0, answeredStep: step, answeredMs: 0, by });
    expect(checkLinearizable(history, INVARIANT_NAME).map((v) => v.focus)).toEqual([[acked.stream]]);
  });
});
