// A node's latency meters in the node tier (docs/observability.md), on a clock the test sets: each
// acknowledged append is timed once from its arrival to its acknowledgement, a duplicate is not, every
// store request is timed once it settles, and the series counts the appends in the interval they were
// decided in.
import { describe, expect, it } from "vitest";
import { TestCluster } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };

describe("node meters", () => {
  it("times each acknowledged append once with the clock it was given; a duplicate is not an ack", async () => {
    const clock = { ms: 0 };
    const cluster = new TestCluster({ now: () => 1_700_000_000_000, clockMs: () => clock.ms, logSink: () => {} });
    const node = await cluster.start("m");
    expect((await node.request("PUT", "m/s", { headers: TEXT })).status).toBe(201);
    const producer = { ...TEXT, "producer-id": "p", "producer-epoch": "0" };
    clock.ms = 7; // every reading from here on: each ack took 0 ms by this clock
    for (const seq of ["0", "1", "2"]) expect((await node.request("POST", "m/s", { headers: { ...producer, "producer-seq": seq }, body: "x" })).status).toBe(200);
    expect((await node.request("POST", "m/s", { headers: { ...producer, "producer-seq": "2" }, body: "x" })).status).toBe(204); // duplicate
    const metrics = node.runtime.metrics();
    expect(metrics.ackLatency.count).toBe(3);
    expect(metrics.ackLatency.sumMs).toBe(0);
    expect(metrics.ackLatency.cumulative[0]).toBe(3);
    expect(metrics.appendsAcknowledged).toBe(3);
    // Nothing is in flight once the answers are in: every counted put was timed.
    expect(metrics.storeLatency.put.count).toBe(metrics.storeRequests.put);
    expect(metrics.series.at(-1)).toMatchObject({ appends: 3, bytes: 3, ackP50Ms: expect.any(Number) as number });
  });
});
