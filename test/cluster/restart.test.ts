// The node tier's first job: a node in plain Node over the in-memory store and metadata log keeps what it
// acknowledged across a restart and a crash (docs/architecture.md, invariants 2 and 5).
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { TestCluster } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };

describe("node tier: restart and crash", () => {
  it("invariant 2: every acknowledged append is read back after a restart at a newer epoch", async () => {
    const cluster = new TestCluster();
    const first = await cluster.start("node-a");
    expect((await first.request("PUT", "r/one", { headers: TEXT })).status).toBe(201);
    for (const word of ["a", "b", "c"]) {
      expect((await first.request("POST", "r/one", { headers: TEXT, body: word })).status).toBe(204);
    }
    first.crash();
    const second = await cluster.start("node-a");
    expect(second.runtime.ctx.nodeEpoch).toBeGreaterThan(first.runtime.ctx.nodeEpoch);
    const read = await second.request("GET", "r/one?offset=-1");
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("abc");
    expect((await second.request("POST", "r/one", { headers: TEXT, body: "d" })).status).toBe(204);
    expect(await (await second.request("GET", "r/one?offset=-1")).text()).toBe("abcd");
  });

  it("invariant 5: a crashed incarnation's late write is fenced by the seal of the next one", async () => {
    // A `delay` fault waits on this gate: the old incarnation's WAL PUT is held until the new one sealed.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const cluster = new TestCluster({ store: new MemoryStore({ sleep: () => gate }) });
    const first = await cluster.start("node-b");
    expect((await first.request("PUT", "r/two", { headers: TEXT })).status).toBe(201);
    cluster.store.inject({ op: "put", keyPrefix: "wal/node-b/", kind: "delay", delayMs: 1 });
    const late = first.request("POST", "r/two", { headers: TEXT, body: "late" });
    const second = await cluster.start("node-b");
    openGate();
    // Its WAL PUT collides with the seal: the old incarnation answers 503 (fenced), never 204.
    const answer = await late;
    expect(answer.status).toBe(503);
    expect(first.crashed).toBe(true);
    const text = await (await second.request("GET", "r/two?offset=-1")).text();
    expect(text).toBe("");
  });
});
