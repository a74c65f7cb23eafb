// The StreamNode Durable Object in workerd (vitest pool), over the in-memory object store
// (S3_ENDPOINT=memory://workers): an append is acknowledged only after its WAL object landed; a restart
// (every Durable Object aborted) replays every acknowledged append at its offset, with producer state,
// Stream-Seq, closure, deletion and forks; a long-poll waiting at the tail is woken by an append.
import { fromWorker } from "../support/from-worker.ts";
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env.ts";
import { memoryStore } from "../../src/node/runtime/store-factory.ts";
import type { StreamNode } from "../../durable-objects/stream-node.ts";
import { eventually } from "../support/eventually.ts";

const nodes = (env as unknown as Env).STREAM_NODE;
const store = memoryStore("workers");
const ORIGIN = "http://mink.test";

/**
 * One node per test file: the metadata log is shared by the file's tests, and placement would spread
 * streams over every node registered in it. Tests use distinct stream names.
 */
function node(_label: string): DurableObjectStub<StreamNode> {
  return nodes.getByName("node-w1") as DurableObjectStub<StreamNode>;
}

async function call(
  stub: DurableObjectStub<StreamNode>,
  method: string,
  path: string,
  init: { body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<Response> {
  return stub.fetch(fromWorker(new Request(`${ORIGIN}/v1/stream/${path}`, { method, ...init })));
}

async function text(response: Response): Promise<string> {
  return new TextDecoder().decode(await response.arrayBuffer());
}

describe("StreamNode acknowledgement", () => {
  it("does not acknowledge an append whose WAL object was not written, and never shows it", async () => {
    const stub = node("node-ack");
    expect((await call(stub, "PUT", "ack", { headers: { "content-type": "text/plain" }, body: "one," })).status).toBe(201);
    const before = await runInDurableObject(stub, (instance) => instance.incarnation?.wal.stats.objectsWritten ?? -1);

    store.inject({ op: "put", keyPrefix: "wal/node-w1/", kind: "fail", errorKind: "fatal", times: Infinity });
    const refused = await call(stub, "POST", "ack", { headers: { "content-type": "text/plain" }, body: "two," });
    store.clearFaults();
    expect(refused.status).toBe(503);
    expect(await runInDurableObject(stub, (instance) => instance.incarnation?.wal.stats.objectsWritten)).toBe(before);

    await abortAllDurableObjects();
    const restarted = node("node-ack");
    const read = await call(restarted, "GET", "ack");
    expect(await text(read)).toBe("one,");
    expect(read.headers.get("stream-next-offset")).toBe("0000000000000000_0000000000000004");
    const next = await call(restarted, "POST", "ack", { headers: { "content-type": "text/plain" }, body: "three" });
    expect(next.status).toBe(204);
    expect(await text(await call(restarted, "GET", "ack"))).toBe("one,three");
  });

  it("acknowledges a lone append after exactly one WAL PUT, and concurrent appends with fewer PUTs than appends", async () => {
    const stub = node("node-batch");
    expect((await call(stub, "PUT", "batch", { headers: { "content-type": "text/plain" } })).status).toBe(201);
    const puts = (): number => store.counts.put;
    const lone = puts();
    expect((await call(stub, "POST", "batch", { headers: { "content-type": "text/plain" }, body: "x" })).status).toBe(204);
    expect(puts() - lone).toBe(1);

    // Store latency, as a real object store has: appends arriving while a PUT is in flight share the next.
    store.inject({ op: "put", keyPrefix: "wal/node-w1/", kind: "delay", delayMs: 5, times: Infinity });
    const start = puts();
    const appends = await Promise.all(
      Array.from({ length: 40 }, () => call(stub, "POST", "batch", { headers: { "content-type": "text/plain" }, body: "y" })),
    );
    expect(appends.map((response) => response.status)).toEqual(Array(40).fill(204));
    store.clearFaults();
    expect(puts() - start).toBeLessThan(40);
    const offsets = appends.map((response) => response.headers.get("stream-next-offset"));
    expect(new Set(offsets).size).toBe(40);
    expect(await text(await call(stub, "GET", "batch"))).toBe(`x${"y".repeat(40)}`);
  });
});

describe("StreamNode restart", () => {
  it("replays every acknowledged append at its offset, with producers, Stream-Seq, closure, deletes and forks", async () => {
    const stub = node("node-restart");
    const json = { "content-type": "application/json" };
    const bytes = { "content-type": "application/octet-stream" };
    expect((await call(stub, "PUT", "r/json", { headers: json, body: "[1]" })).status).toBe(201);
    expect((await call(stub, "PUT", "r/bytes", { headers: bytes })).status).toBe(201);
    expect((await call(stub, "PUT", "r/closed", { headers: bytes, body: "end" })).status).toBe(201);
    expect((await call(stub, "PUT", "r/deleted", { headers: bytes, body: "gone" })).status).toBe(201);

    // Concurrent appends to two streams; each acknowledgement names where its bytes end.
    const acked = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(stub, "POST", "r/bytes", { headers: bytes, body: new Uint8Array([i, i, i]) }).then((response) => ({
          i,
          status: response.status,
          end: Number(response.headers.get("stream-next-offset")?.split("_")[1]),
        })),
      ),
    );
    for (let seq = 0; seq < 3; seq++) {
      const response = await call(stub, "POST", "r/json", {
        headers: { ...json, "producer-id": "p", "producer-epoch": "1", "producer-seq": String(seq), "stream-seq": `0${seq}` },
        body: JSON.stringify({ seq }),
      });
      expect(response.status).toBe(200);
    }
    expect((await call(stub, "POST", "r/closed", { headers: { "stream-closed": "true" } })).status).toBe(204);
    expect((await call(stub, "PUT", "r/fork", { headers: { "stream-forked-from": "/v1/stream/r/json" } })).status).toBe(201);
    expect((await call(stub, "POST", "r/fork", { headers: json, body: '"own"' })).status).toBe(204);
    expect((await call(stub, "DELETE", "r/deleted")).status).toBe(204);
    expect(acked.every((append) => append.status === 204)).toBe(true);

    await abortAllDurableObjects();
    const restarted = node("node-restart");

    const data = new Uint8Array(await (await call(restarted, "GET", "r/bytes")).arrayBuffer());
    expect(data.byteLength).toBe(90);
    for (const append of acked) expect([...data.subarray(append.end - 3, append.end)]).toEqual([append.i, append.i, append.i]);

    expect(await text(await call(restarted, "GET", "r/json"))).toBe('[1,{"seq":0},{"seq":1},{"seq":2}]');
    const duplicate = await call(restarted, "POST", "r/json", {
      headers: { ...json, "producer-id": "p", "producer-epoch": "1", "producer-seq": "2" },
      body: '{"seq":2}',
    });
    expect(duplicate.status).toBe(204);
    expect(duplicate.headers.get("producer-seq")).toBe("2");
    const gap = await call(restarted, "POST", "r/json", {
      headers: { ...json, "producer-id": "p", "producer-epoch": "1", "producer-seq": "4" },
      body: "{}",
    });
    expect(gap.status).toBe(409);
    expect(gap.headers.get("producer-expected-seq")).toBe("3");
    expect((await call(restarted, "POST", "r/json", { headers: { ...json, "stream-seq": "02" }, body: "{}" })).status).toBe(409);

    const closed = await call(restarted, "POST", "r/closed", { headers: bytes, body: "more" });
    expect(closed.status).toBe(409);
    expect(closed.headers.get("stream-closed")).toBe("true");
    expect(closed.headers.get("stream-next-offset")).toBe("0000000000000000_0000000000000003");

    expect((await call(restarted, "HEAD", "r/deleted")).status).toBe(404);
    expect(await text(await call(restarted, "GET", "r/fork"))).toBe('[1,{"seq":0},{"seq":1},{"seq":2},"own"]');
    // The source is still referenced by its fork: deleting it soft-deletes it.
    expect((await call(restarted, "DELETE", "r/json")).status).toBe(204);
    expect((await call(restarted, "GET", "r/json")).status).toBe(410);
    expect(await text(await call(restarted, "GET", "r/fork"))).toBe('[1,{"seq":0},{"seq":1},{"seq":2},"own"]');
  });
});

describe("StreamNode live reads", () => {
  it("wakes a long-poll waiting at the tail with the next acknowledged append", async () => {
    const stub = node("node-live");
    const created = await call(stub, "PUT", "live", { headers: { "content-type": "text/plain" }, body: "a" });
    const tail = created.headers.get("stream-next-offset") ?? "";
    // LONG_POLL_TIMEOUT_MS is 30 s here: this test would time out unless the append wakes the reader.
    const waiting = call(stub, "GET", `live?offset=${tail}&live=long-poll`);
    // The reader is parked before the append is sent.
    const readers = await eventually(
      () => runInDurableObject(stub, (instance) => instance.node?.readers.size ?? 0).then((size) => size !== 0 && size),
      { what: "the long-poll reader waiting at node-w1", errors: "fail" },
    );
    expect(readers).toBe(1);
    expect((await call(stub, "POST", "live", { headers: { "content-type": "text/plain" }, body: "b" })).status).toBe(204);
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(await text(woken)).toBe("b");
    expect(woken.headers.get("stream-up-to-date")).toBe("true");
    expect(woken.headers.get("stream-cursor")).toMatch(/^[0-9]+$/);
  });

  it("sends an SSE reader the data appended after it connected, then EOF when the stream closes", async () => {
    const stub = node("node-sse");
    await call(stub, "PUT", "sse", { headers: { "content-type": "text/plain" } });
    const response = await call(stub, "GET", "sse?offset=-1&live=sse");
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await call(stub, "POST", "sse", { headers: { "content-type": "text/plain", "stream-closed": "true" }, body: "hi" });
    const events = await text(response);
    expect(events).toContain("event: data\ndata:hi\n\n");
    expect(events.trimEnd().endsWith('data:{"streamNextOffset":"0000000000000000_0000000000000002","streamClosed":true,"upToDate":true}')).toBe(true);
  });
});

describe("StreamNode compaction", () => {
  it("moves the WAL into stream objects, deletes it below the checkpoint, and restarts from the snapshot", async () => {
    const stub = node("compact");
    const json = { "content-type": "application/json" };
    const bytes = { "content-type": "application/octet-stream" };
    const producer = (seq: number): Record<string, string> => ({ "producer-id": "w", "producer-epoch": "3", "producer-seq": String(seq) });
    expect((await call(stub, "PUT", "c/bytes", { headers: bytes, body: "ab" })).status).toBe(201);
    expect((await call(stub, "PUT", "c/json", { headers: json, body: "[1,2]" })).status).toBe(201);
    expect((await call(stub, "POST", "c/json", { headers: { ...json, ...producer(0), "stream-seq": "a" }, body: "3" })).status).toBe(200);
    expect((await call(stub, "PUT", "c/fork", { headers: { "stream-forked-from": "/v1/stream/c/json" } })).status).toBe(201);
    expect((await call(stub, "POST", "c/bytes", { headers: { ...bytes, "stream-closed": "true" }, body: "cd" })).status).toBe(204);
    expect((await call(stub, "DELETE", "c/json")).status).toBe(204); // soft-deleted: the fork reads it

    // The records come from the tail cache: a compaction that read a WAL object back would fail here.
    store.inject({ op: "get", keyPrefix: "wal/node-w1/", kind: "fail", errorKind: "fatal", times: Infinity });
    const first = await runInDurableObject(stub, (instance) => instance.compact()).finally(() => store.clearFaults());
    expect(first?.streamsCompacted).toBeGreaterThanOrEqual(3);
    const walSeqs = (): number[] =>
      store.keys().filter((key) => key.startsWith("wal/node-w1/")).map((key) => Number(key.split("/")[2]));
    // Below the snapshot only the seals are left (they outlive a clean-up: deleteWalBelow).
    const seals = await runInDurableObject(stub, (instance) => [...(instance.incarnation?.recovery.seals ?? [])].sort((a, b) => a - b));
    expect(walSeqs().filter((seq) => seq < (first?.snapshotSeq ?? 0))).toEqual(seals);
    expect(walSeqs()).toContain(first?.snapshotSeq);
    expect(store.keys().some((key) => key.startsWith("streams/") && key.endsWith("/manifest"))).toBe(true);
    // The compacted bytes left the tail cache; reads (and a fork's sub-offset) go to the stream objects.
    const cached = await runInDurableObject(stub, (instance) => {
      let bytes = 0;
      for (const stream of instance.node?.registry.all() ?? []) bytes += stream.memoryBytes;
      return bytes;
    });
    expect(cached).toBe(0);
    expect(await text(await call(stub, "GET", "c/bytes"))).toBe("abcd");
    expect(await text(await call(stub, "GET", "c/fork"))).toBe("[1,2,3]");
    const zero = "0000000000000000_0000000000000000";
    const sub = await call(stub, "PUT", "c/sub", {
      headers: { "stream-forked-from": "/v1/stream/c/bytes", "stream-fork-offset": zero, "stream-fork-sub-offset": "1" },
    });
    expect(sub.status).toBe(201);
    expect(await text(await call(stub, "GET", "c/sub"))).toBe("a");

    // After the snapshot: more data in the WAL, then a restart that replays from the snapshot.
    expect((await call(stub, "POST", "c/fork", { headers: json, body: '"f"' })).status).toBe(204);
    await abortAllDurableObjects();
    let restarted = node("compact");
    const check = async (): Promise<void> => {
      const closed = await call(restarted, "GET", "c/bytes");
      expect(await text(closed)).toBe("abcd");
      expect(closed.headers.get("stream-closed")).toBe("true");
      expect((await call(restarted, "GET", "c/json")).status).toBe(410);
      expect(await text(await call(restarted, "GET", "c/fork"))).toBe('[1,2,3,"f"]');
      expect((await call(restarted, "PUT", "c/json", { headers: json })).status).toBe(409);
    };
    await check();
    expect((await runInDurableObject(restarted, (instance) => instance.incarnation?.recovery.fromSeq))).toBe(first?.snapshotSeq);

    // A second compaction (producer state and Stream-Seq travel in the snapshot), then another restart.
    expect((await call(restarted, "PUT", "c/p", { headers: json })).status).toBe(201);
    expect((await call(restarted, "POST", "c/p", { headers: { ...json, ...producer(0), "stream-seq": "b" }, body: "1" })).status).toBe(200);
    await runInDurableObject(restarted, (instance) => instance.compact());
    await abortAllDurableObjects();
    restarted = node("compact");
    await check();
    const duplicate = await call(restarted, "POST", "c/p", { headers: { ...json, ...producer(0) }, body: "1" });
    expect(duplicate.status).toBe(204);
    expect((await call(restarted, "POST", "c/p", { headers: { ...json, "stream-seq": "b" }, body: "2" })).status).toBe(409);
    expect((await call(restarted, "POST", "c/p", { headers: { ...json, ...producer(1), "stream-seq": "c" }, body: "2" })).status).toBe(200);
    expect(await text(await call(restarted, "GET", "c/p"))).toBe("[1,2]");
  });
});

describe("StreamNode compaction interrupted", () => {
  it("a compaction that wrote its stream objects but not its checkpoint is finished by the next one, after more appends and a restart", async () => {
    const stub = node("compact-crash");
    const bytes = { "content-type": "application/octet-stream" };
    expect((await call(stub, "PUT", "cc/s", { headers: bytes, body: "a," })).status).toBe(201);
    expect((await call(stub, "POST", "cc/s", { headers: bytes, body: "b," })).status).toBe(204);
    store.inject({ op: "put", keyPrefix: "nodes/node-w1/checkpoint", kind: "fail", errorKind: "fatal", times: Infinity });
    await expect(runInDurableObject(stub, (instance) => instance.compact())).rejects.toThrow();
    store.clearFaults();
    expect(store.keys().some((key) => key.startsWith("streams/") && !key.endsWith("/manifest"))).toBe(true);

    // More data, then a restart: replay starts at the old checkpoint, below the objects that landed.
    expect((await call(stub, "POST", "cc/s", { headers: bytes, body: "c," })).status).toBe(204);
    await abortAllDurableObjects();
    const restarted = node("compact-crash");
    expect((await call(restarted, "POST", "cc/s", { headers: bytes, body: "d" })).status).toBe(204);
    const report = await runInDurableObject(restarted, (instance) => instance.compact());
    expect(report?.recordsCompacted).toBeGreaterThan(0);
    expect(await text(await call(restarted, "GET", "cc/s"))).toBe("a,b,c,d");
    await abortAllDurableObjects();
    expect(await text(await call(node("compact-crash"), "GET", "cc/s"))).toBe("a,b,c,d");
  });
});

describe("StreamNode observers", () => {
  it("tells observers of each acknowledged append and close, in order, with the new tail", async () => {
    const stub = node("observe");
    await call(stub, "PUT", "observed", { headers: { "content-type": "text/plain" } });
    await runInDurableObject(stub, (instance) => {
      const seen: string[] = [];
      (globalThis as { observed?: string[] }).observed = seen;
      instance.node?.observers.add((change) => {
        if (change.name === "observed") seen.push(`${change.tailPositionBytes}:${change.eof}`);
      });
    });
    await call(stub, "POST", "observed", { headers: { "content-type": "text/plain" }, body: "abc" });
    await call(stub, "POST", "observed", { headers: { "stream-closed": "true" } });
    expect((globalThis as { observed?: string[] }).observed).toEqual(["3:false", "3:true"]);
  });
});

describe("StreamNode bad input", () => {
  it("answers a clear 4xx and changes nothing", async () => {
    const stub = node("bad-input");
    const plain = { "content-type": "text/plain" };
    expect((await call(stub, "PUT", "bad", { headers: plain, body: "ok" })).status).toBe(201);
    const tooBig = new Uint8Array(65_537);
    expect((await call(stub, "POST", "bad", { headers: plain, body: tooBig })).status).toBe(413);
    expect((await call(stub, "PUT", "bad-big", { headers: plain, body: tooBig })).status).toBe(413);
    expect((await call(stub, "HEAD", "bad-big")).status).toBe(404);
    expect((await call(stub, "POST", "bad", { headers: { ...plain, "producer-id": "p", "producer-epoch": "1e3", "producer-seq": "0" }, body: "x" })).status).toBe(400);
    expect((await call(stub, "POST", "bad", { headers: { ...plain, "producer-id": "p" }, body: "x" })).status).toBe(400);
    // A string body would get text/plain from fetch; bytes go without a Content-Type (APP-6).
    expect((await call(stub, "POST", "bad", { body: new Uint8Array([120]) })).status).toBe(400);
    expect((await call(stub, "GET", "bad?offset=1,2")).status).toBe(400);
    expect((await call(stub, "GET", "bad?offset=0000000000000000_0000000000000099")).status).toBe(400);
    expect((await call(stub, "GET", "bad?live=long-poll")).status).toBe(400);
    expect((await call(stub, "PUT", "a//b", { headers: plain })).status).toBe(400);
    expect((await call(stub, "PUT", "j", { headers: { "content-type": "application/json" }, body: "{nope" })).status).toBe(400);
    expect((await call(stub, "HEAD", "j")).status).toBe(404);
    const patch = await call(stub, "PATCH", "bad", { headers: plain, body: "x" });
    expect(patch.status).toBe(405);
    expect(patch.headers.get("allow")).toContain("POST");
    expect(patch.headers.get("x-content-type-options")).toBe("nosniff");
    const read = await call(stub, "GET", "bad");
    expect(await text(read)).toBe("ok");
    expect(read.headers.get("stream-next-offset")).toBe("0000000000000000_0000000000000002");
  });
});

describe("StreamNode acts only on what the Worker authorized (docs/access.md, one parse)", () => {
  const stub = (): DurableObjectStub<StreamNode> => node("authorized");
  const authorized = (needs: unknown): Record<string, string> => ({ "x-mink-authorized": JSON.stringify(needs), "content-type": "text/plain" });

  it("refuses a request that carries no authorization, and one authorized for another stream or another operation (403), and changes nothing", async () => {
    expect((await call(stub(), "PUT", "authz/s", { headers: { "content-type": "text/plain" } })).status).toBe(201);
    const attempts = [
      stub().fetch(`${ORIGIN}/v1/stream/authz/s`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" }),
      stub().fetch(`${ORIGIN}/v1/stream/authz/s`, { method: "POST", headers: authorized([{ op: "append", stream: "authz/other" }]), body: "x" }),
      stub().fetch(`${ORIGIN}/v1/stream/authz/s`, { method: "POST", headers: authorized([{ op: "read", stream: "authz/s" }]), body: "x" }),
      stub().fetch(`${ORIGIN}/v1/stream/authz/s`, { method: "DELETE", headers: authorized([{ op: "append", stream: "authz/s" }]) }),
    ];
    for (const answer of await Promise.all(attempts)) expect(answer.status).toBe(403);
    const read = await call(stub(), "GET", "authz/s?offset=-1");
    expect([read.status, await text(read)]).toEqual([200, ""]);
  });

  it("refuses a URL that is not spelled canonically (400), even when the authorization matches its meaning", async () => {
    const answer = await stub().fetch(`${ORIGIN}/v1/stream/authz/%73`, { method: "POST", headers: authorized([{ op: "append", stream: "authz/s" }]), body: "x" });
    expect(answer.status).toBe(400);
  });

  it("acts on a request authorized for exactly what it asks", async () => {
    const answer = await stub().fetch(`${ORIGIN}/v1/stream/authz/s`, { method: "POST", headers: authorized([{ op: "append", stream: "authz/s" }]), body: "y" });
    expect(answer.status).toBe(204);
  });
});
