// No internal text in answers: when the object store fails under a request, the 503 the client gets says
// that it failed and to retry, never the store's own text (an S3 error code and message, an object key,
// an exception message such as the WAL writer's). The detail goes to the node's log instead.
import { describe, expect, it } from "vitest";
import { MemoryStore, type Fault } from "../../src/storage/memory-store.ts";
import { TestCluster } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };
/** What the in-memory store puts in its errors (`injected failure: put wal/node-a/...`): none of it may reach a client. */
const STORE_TEXT = /injected|wal\/|streams\/|node-a\/|failure:|ObjectStoreError/i;

describe("a 503 caused by the object store", () => {
  it.each<[string, Fault]>([
    ["a WAL PUT refused for good (fatal)", { op: "put", keyPrefix: "wal/", kind: "fail", errorKind: "fatal", times: Infinity }],
    ["a WAL PUT failing every retry", { op: "put", keyPrefix: "wal/", kind: "fail", times: Infinity }],
  ])("after %s carries a fixed message, no store text", async (_what, fault) => {
    const lines: string[] = [];
    const cluster = new TestCluster({ store: new MemoryStore(), settings: { WAL_BATCH_DEADLINE_MS: "200" }, logSink: (line) => lines.push(line) });
    const node = await cluster.start("node-a");
    expect((await node.request("PUT", "se/one", { headers: TEXT })).status).toBe(201);
    cluster.store.inject(fault);
    const answer = await node.request("POST", "se/one", { headers: TEXT, body: "x" });
    const text = await answer.text();
    expect(answer.status, text).toBe(503);
    expect(answer.headers.get("retry-after")).not.toBeNull();
    expect(JSON.parse(text)).toMatchObject({ error: { code: "unavailable", retryable: true } });
    expect(text, "the answer names no store key or store message").not.toMatch(STORE_TEXT);
    const logged = lines.map((line) => JSON.parse(line) as { error?: string }).flatMap((line) => (line.error === undefined ? [] : [line.error]));
    expect(logged.length, "the failure is logged").toBeGreaterThan(0);
    for (const detail of logged) expect(text, "the answer carries none of the logged error text").not.toContain(detail);
  });
});
