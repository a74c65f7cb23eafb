// Transfers between running nodes (docs/transfers.md, table T in src/core/transfer-steps.ts), in
// workerd over the in-memory object store: the hand-off carries data, producers and Stream-Seq with no node
// calling another; the target opens at once (pre-warm); a third node answers 409 while a transfer is
// pending and the target parks requests until it settles; a stale completion is refused.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { metricsResponse } from "../../src/admin/metrics.ts";
import { handOff } from "../../src/node/ownership/hand-off.ts";
import { eventually } from "../support/eventually.ts";
import { begin, call, createOn, e, follow, meta, openedBy, ORIGIN, pauseWatcher, record, stub, text, TEXT } from "./transfer-support.ts";

describe("transfers", { timeout: 30_000 }, () => {
  it("T1+T5: a transfer hands the stream over with its data, producers and Stream-Seq, and the target opens it at E+1 unasked", async () => {
    await createOn("tr-0", "t/carried", "a,");
    const producer = { ...TEXT, "producer-id": "p1", "producer-epoch": "0" };
    expect((await call("tr-0", "POST", "t/carried", { headers: { ...producer, "producer-seq": "0" }, body: "b," })).status).toBe(200);
    expect((await call("tr-0", "POST", "t/carried", { headers: { ...TEXT, "stream-seq": "05" }, body: "c," })).status).toBe(204);
    const opened = await record("t/carried");
    expect(opened).toMatchObject({ owner: "tr-0", ownership: "opened" });

    const lastAccessMs = (nodeId: string): Promise<number | undefined> =>
      runInDurableObject(stub(nodeId), (node) => node.node!.registry.byName("t/carried")?.lastAccessMs);
    const idleSince = await lastAccessMs("tr-0");
    await begin("t/carried", "tr-1");
    const moved = await openedBy("t/carried", "tr-1");
    expect(moved.epoch).toBe(opened.epoch + 1);
    // The TTL idle clock moved with it (the target opened it unasked: nothing accessed it there yet).
    expect(await lastAccessMs("tr-1")).toBe(idleSince);

    expect(await text(await call("tr-1", "GET", "t/carried?offset=-1"))).toBe("a,b,c,");
    // The producer's last sequence moved with the stream: a retry is a duplicate, not a second append.
    const retry = await call("tr-1", "POST", "t/carried", { headers: { ...producer, "producer-seq": "0" }, body: "b," });
    expect(retry.status).toBe(204);
    // So did Stream-Seq: a lower one is refused.
    expect((await call("tr-1", "POST", "t/carried", { headers: { ...TEXT, "stream-seq": "04" }, body: "x" })).status).toBe(409);
    expect((await call("tr-1", "POST", "t/carried", { headers: TEXT, body: "d" })).status).toBe(204);
    expect(await text(await call("tr-1", "GET", "t/carried?offset=-1"))).toBe("a,b,c,d");
    // The source sends requests on to the new owner.
    const atSource = await call("tr-0", "GET", "t/carried?offset=-1");
    expect(atSource.status).toBe(307);
    expect(atSource.headers.get("location")).toBe(`${ORIGIN}/n/tr-1/v1/stream/t/carried?offset=-1`);
    // /metrics counts the watchers' steps: the source handed off, the target opened.
    const metrics = await (await metricsResponse(e)).text();
    expect(metrics).toMatch(/^mink_transfer_steps_total\{node="tr-0",step="hand_off"\} [1-9]/m);
    expect(metrics).toMatch(/^mink_transfer_steps_total\{node="tr-1",step="open"\} [1-9]/m);
  });

  it("R4+R2: while a transfer is pending a third node answers 409 naming the target, and the target parks requests until it settles", async () => {
    await createOn("tr-0", "t/parked", "kept");
    const { epoch } = await record("t/parked");
    await pauseWatcher("tr-0");
    await begin("t/parked", "tr-1");

    const third = await call("tr-2", "GET", "t/parked?offset=-1");
    expect(third.status).toBe(409);
    expect(await third.json()).toMatchObject({ error: { code: "conflict" } });

    // Count the times tr-1 parks a request for the stream (R2: it waits to be woken by the open, and looks at
    // the log again when the wait times out).
    let parks = 0;
    await runInDurableObject(stub("tr-1"), (node) => {
      const requests = node.node!.parked;
      const wait = requests.wait.bind(requests);
      requests.wait = (name, timeoutMs, signal) => {
        if (name === "t/parked") parks++;
        return wait(name, timeoutMs, signal);
      };
    });
    let parkedAnswered = false;
    const parked = call("tr-1", "GET", "t/parked?offset=-1").then((response) => {
      parkedAnswered = true;
      return response;
    });
    // Parked, and parked again after looking at the log once more: the transfer has not settled, no answer.
    await eventually(() => parks >= 2, { what: "the request parked twice at tr-1" });
    expect(parkedAnswered).toBe(false);
    expect(await runInDurableObject(stub("tr-1"), (node) => node.node!.registry.byName("t/parked")?.phase.kind === "opened")).toBe(false);
    // The source hands off (what its watcher would have done); the parked request is then served.
    const { id } = await record("t/parked");
    await runInDurableObject(stub("tr-0"), (node) => handOff(node.node!, id, "t/parked", epoch));
    const answer = await parked;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("kept");
    expect(await record("t/parked")).toMatchObject({ owner: "tr-1", ownership: "opened", epoch: epoch + 1 });
    await runInDurableObject(stub("tr-1"), (node) => Reflect.deleteProperty(node.node!.parked, "wait")); // no more counting
    await pauseWatcher("tr-0", false);
  });

  it("CT5: a completion left over from an earlier attempt is refused and changes nothing", async () => {
    await createOn("tr-0", "t/stale", "one");
    const first = await record("t/stale");
    await begin("t/stale", "tr-1");
    await openedBy("t/stale", "tr-1");
    await begin("t/stale", "tr-2");
    const second = await openedBy("t/stale", "tr-2");
    await pauseWatcher("tr-2");
    await begin("t/stale", "tr-0");

    // tr-0's first close was at first.epoch: a completion naming it now is stale.
    const before = await record("t/stale");
    const stale = await meta.propose({ type: "CompleteTransfer", streamId: first.id, closedEpoch: first.epoch });
    expect(stale.ok).toBe(false);
    expect(await record("t/stale")).toEqual(before);
    // Once tr-2 has closed at its epoch, the stale completion is still refused (CT5), the right one lands.
    await runInDurableObject(stub("tr-2"), (node) => handOff(node.node!, first.id, "t/stale", second.epoch, false));
    const closed = await record("t/stale");
    expect(closed).toMatchObject({ ownership: "closed", epoch: second.epoch, transfer: { source: "tr-2", target: "tr-0" } });
    const staleAgain = await meta.propose({ type: "CompleteTransfer", streamId: first.id, closedEpoch: first.epoch });
    expect(staleAgain).toMatchObject({ ok: false, error: { code: "stale_epoch" } });
    expect(await record("t/stale")).toEqual(closed);
    const right = await meta.propose({ type: "CompleteTransfer", streamId: first.id, closedEpoch: second.epoch });
    expect(right.ok).toBe(true);
    await openedBy("t/stale", "tr-0");
    expect(await text(await call("tr-0", "GET", "t/stale?offset=-1"))).toBe("one");
    await pauseWatcher("tr-2", false);
  });
});

describe("forks and transfers", { timeout: 30_000 }, () => {
  it("a fork moved away from its source reads the inherited bytes from the source's stream objects", async () => {
    await createOn("tr-0", "t/fork-src", "inherited,");
    const forked = await follow("tr-0", "PUT", "t/fork-child", { headers: { ...TEXT, "stream-forked-from": "/v1/stream/t/fork-src" } });
    expect(forked.status).toBe(201);
    expect((await call("tr-0", "POST", "t/fork-child", { headers: TEXT, body: "own," })).status).toBe(204);
    expect((await call("tr-0", "POST", "t/fork-src", { headers: TEXT, body: "later" })).status).toBe(204);

    await begin("t/fork-child", "tr-1");
    await openedBy("t/fork-child", "tr-1");
    expect(await text(await call("tr-1", "GET", "t/fork-child?offset=-1"))).toBe("inherited,own,");
    expect((await call("tr-1", "POST", "t/fork-child", { headers: TEXT, body: "more" })).status).toBe(204);
    expect(await text(await call("tr-1", "GET", "t/fork-child?offset=-1"))).toBe("inherited,own,more");
    // The source stays where it was and keeps its own bytes.
    expect(await text(await call("tr-0", "GET", "t/fork-src?offset=-1"))).toBe("inherited,later");
  });

  it("a source moved away from its fork: the fork keeps reading the inherited bytes", async () => {
    await createOn("tr-0", "t/src-moves", "base,");
    const forked = await follow("tr-0", "PUT", "t/src-moves-child", { headers: { ...TEXT, "stream-forked-from": "/v1/stream/t/src-moves" } });
    expect(forked.status).toBe(201);
    await begin("t/src-moves", "tr-2");
    await openedBy("t/src-moves", "tr-2");
    expect(await text(await call("tr-0", "GET", "t/src-moves-child?offset=-1"))).toBe("base,");
    expect((await call("tr-2", "POST", "t/src-moves", { headers: TEXT, body: "after" })).status).toBe(204);
    expect(await text(await call("tr-2", "GET", "t/src-moves?offset=-1"))).toBe("base,after");
    expect(await text(await call("tr-0", "GET", "t/src-moves-child?offset=-1"))).toBe("base,");
  });
});
