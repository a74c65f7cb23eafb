// The simulation's object-store latency floor (faults.ts, sim-store.ts): SIM_S3_LATENCY_MS puts R2's round
// trip under every store request in virtual time. Unset, a seed runs exactly as before (no draw, no timer:
// the same trace); set, every store request waits on a virtual timer of at least that long before it
// reaches the store, and the seed still keeps its invariants.
import { afterEach, describe, expect, it } from "vitest";
import { FaultPlan, drawFaultProfile, storeLatencyFromEnv } from "./faults.ts";
import { Prng } from "./prng.ts";
import { runSeed } from "./run-seed.ts";

const saved = { latency: process.env.SIM_S3_LATENCY_MS, jitter: process.env.SIM_S3_LATENCY_JITTER_MS };
afterEach(() => {
  for (const [name, value] of [["SIM_S3_LATENCY_MS", saved.latency], ["SIM_S3_LATENCY_JITTER_MS", saved.jitter]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("SIM_S3_LATENCY_MS and SIM_S3_LATENCY_JITTER_MS", () => {
  it("take whole milliseconds from 0 to 60,000, unset or empty being 0, and refuse anything else naming the variable", () => {
    expect(storeLatencyFromEnv({})).toEqual({ latencyMs: 0, jitterMs: 0 });
    expect(storeLatencyFromEnv({ SIM_S3_LATENCY_MS: "", SIM_S3_LATENCY_JITTER_MS: "" })).toEqual({ latencyMs: 0, jitterMs: 0 });
    expect(storeLatencyFromEnv({ SIM_S3_LATENCY_MS: "30", SIM_S3_LATENCY_JITTER_MS: "10" })).toEqual({ latencyMs: 30, jitterMs: 10 });
    expect(() => storeLatencyFromEnv({ SIM_S3_LATENCY_MS: "30ms" })).toThrow("SIM_S3_LATENCY_MS must be a whole number of milliseconds from 0 to 60000 (got '30ms')");
    expect(() => storeLatencyFromEnv({ SIM_S3_LATENCY_JITTER_MS: "60001" })).toThrow("SIM_S3_LATENCY_JITTER_MS must be");
    expect(() => storeLatencyFromEnv({ SIM_S3_LATENCY_MS: "-1" })).toThrow("SIM_S3_LATENCY_MS must be");
  });

  it("no latency: storeLatencyMs is 0 and draws nothing from the fault plan's generator", () => {
    const plan = new FaultPlan(new Prng(9), drawFaultProfile(new Prng(1)), { latencyMs: 0, jitterMs: 0 });
    const twin = new FaultPlan(new Prng(9), plan.profile, { latencyMs: 0, jitterMs: 0 });
    expect(plan.storeLatencyMs()).toBe(0);
    // Same generator state as a twin that was never asked: the faults that follow are the same.
    expect(Array.from({ length: 50 }, () => plan.store())).toEqual(Array.from({ length: 50 }, () => twin.store()));
  });

  it("latency 30 with jitter 10: each request waits a whole number of ms from 30 to 39", () => {
    const plan = new FaultPlan(new Prng(3), drawFaultProfile(new Prng(1)), { latencyMs: 30, jitterMs: 10 });
    const draws = Array.from({ length: 500 }, () => plan.storeLatencyMs());
    for (const ms of draws) {
      expect(Number.isInteger(ms)).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(30);
      expect(ms).toBeLessThan(40);
    }
    expect(new Set(draws).size).toBe(10);
  });

  it("unset, seed 1 gives the same trace as with both set to 0", async () => {
    delete process.env.SIM_S3_LATENCY_MS;
    delete process.env.SIM_S3_LATENCY_JITTER_MS;
    const unset = await runSeed(1);
    process.env.SIM_S3_LATENCY_MS = "0";
    process.env.SIM_S3_LATENCY_JITTER_MS = "0";
    const zero = await runSeed(1);
    expect(zero.hash).toBe(unset.hash);
    expect(unset.trace.lines.some((line) => line.includes("store latency"))).toBe(false);
  });

  it("SIM_S3_LATENCY_MS=30: seed 2 keeps every invariant, and every store request landed only after a 30 ms virtual wait of its own", async () => {
    process.env.SIM_S3_LATENCY_MS = "30";
    const { result, trace } = await runSeed(2);
    expect(result.violations.map((v) => `${v.invariant}: ${v.message}`)).toEqual([]);
    // A wait: "#12 t=0.030 timer store latency 30ms n1@0 get nodes/n1/checkpoint due +0ms"; a landing:
    // "#12 t=0.030   store n1@0 get nodes/n1/checkpoint -> ok" (or "[lost] took effect", "[delay 5ms] -> ok", ...).
    const waiting = new Map<string, number>();
    let waits = 0;
    let landings = 0;
    for (const line of trace.lines) {
      const wait = / timer store latency (\d+)ms (\S+ \S+ \S+) due /.exec(line);
      if (wait !== null) {
        expect(wait[1]).toBe("30");
        waiting.set(wait[2]!, (waiting.get(wait[2]!) ?? 0) + 1);
        waits++;
        continue;
      }
      const landing = /^#\d+ t=[\d.]+ {3}store (\S+ (?:put|get|head|list|delete) \S+)(?: \[[^\]]+\])? (?:->|took effect)/.exec(line);
      if (landing === null) continue;
      landings++;
      const pending = waiting.get(landing[1]!) ?? 0;
      expect(pending, `landed without a wait: ${line}`).toBeGreaterThan(0);
      waiting.set(landing[1]!, pending - 1);
    }
    expect(waits).toBeGreaterThan(0);
    expect(landings).toBeGreaterThan(0);
  });
});
