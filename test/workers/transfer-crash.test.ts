// Transfers, "Crashes" (docs/transfers.md): every transfer step is idempotent and resumed from state that survives a crash. The
// source (tr-0), and separately the target (tr-1), is crashed at each step of a transfer; every transfer
// still completes exactly once (the target ends at the closed epoch + 1, no transfer pending) with every
// acknowledged byte at its offset.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { STORE_WRITE_LOCK } from "../../src/node/streams/compaction.ts";
import { flushToObjects, handOff } from "../../src/node/ownership/hand-off.ts";
import { begin, call, crash, createOn, meta, openedBy, pauseWatcher, record, stub, text, TEXT, waitFor } from "./transfer-support.ts";

/** A stream on tr-0 with acknowledged appends after its create; returns its record and its bytes. */
async function busyStream(name: string) {
  await createOn("tr-0", name, "0,");
  for (let i = 1; i <= 5; i++) expect((await call("tr-0", "POST", name, { headers: TEXT, body: `${i},` })).status).toBe(204);
  return { stream: await record(name), bytes: "0,1,2,3,4,5," };
}

/** The transfer ended exactly once: opened by tr-1 at the closed epoch + 1, with every byte, and writable. */
async function completedOnce(name: string, closedEpoch: number, bytes: string): Promise<void> {
  const opened = await openedBy(name, "tr-1");
  expect(opened.epoch).toBe(closedEpoch + 1);
  expect(await text(await call("tr-1", "GET", `${name}?offset=-1`))).toBe(bytes);
  expect((await call("tr-1", "POST", name, { headers: TEXT, body: "after" })).status).toBe(204);
  expect(await text(await call("tr-1", "GET", `${name}?offset=-1`))).toBe(`${bytes}after`);
  // A completion proposed again (a retry that lost its answer) is refused and changes nothing.
  const before = await record(name);
  const again = await meta.propose({ type: "CompleteTransfer", streamId: before.id, closedEpoch });
  expect(again.ok).toBe(false);
  expect(await record(name)).toEqual(before);
}

describe("a crash of the source at each step of a transfer", { timeout: 60_000 }, () => {
  it("before closing: the restarted source finds the pending transfer, hands off and completes", async () => {
    const { stream, bytes } = await busyStream("c/src-before-close");
    await pauseWatcher("tr-0");
    await begin(stream.name, "tr-1");
    await crash("tr-0");
    await completedOnce(stream.name, stream.epoch, bytes);
  });

  it("after flushing, before CloseStream: the restarted source flushes again (idempotent), closes and completes", async () => {
    const { stream, bytes } = await busyStream("c/src-after-flush");
    await pauseWatcher("tr-0");
    await begin(stream.name, "tr-1");
    await runInDurableObject(stub("tr-0"), async (node) => {
      const held = node.node!.registry.get(stream.id)!;
      await node.node!.locks.run(STORE_WRITE_LOCK, () => flushToObjects(node.node!, held, stream.epoch, true));
    });
    await crash("tr-0");
    await completedOnce(stream.name, stream.epoch, bytes);
  });

  it("after CloseStream, before its release record: the restarted source completes and lets its replayed copy go", async () => {
    const { stream, bytes } = await busyStream("c/src-before-release");
    await pauseWatcher("tr-0");
    await begin(stream.name, "tr-1");
    await runInDurableObject(stub("tr-0"), async (node) => {
      const held = node.node!.registry.get(stream.id)!;
      await node.node!.locks.run(STORE_WRITE_LOCK, () => flushToObjects(node.node!, held, stream.epoch, true));
    });
    const { nodeEpoch } = await stub("tr-0").ping();
    expect((await meta.propose({ type: "CloseStream", streamId: stream.id, nodeId: "tr-0", nodeEpoch, epoch: stream.epoch })).ok).toBe(true);
    await crash("tr-0");
    await completedOnce(stream.name, stream.epoch, bytes);
    // The source holds no copy any more (replay will not bring it back), and its compaction still runs.
    expect(await runInDurableObject(stub("tr-0"), (node) => node.node!.registry.byName(stream.name))).toBeUndefined();
    expect(await runInDurableObject(stub("tr-0"), async (node) => (await node.compact()) !== null)).toBe(true);
    expect((await call("tr-0", "GET", `${stream.name}?offset=-1`)).status).toBe(307);
  });

  it("after closing, before proposing the completion: the restarted source completes at the epoch it closed at", async () => {
    const { stream, bytes } = await busyStream("c/src-after-close");
    await pauseWatcher("tr-0");
    await begin(stream.name, "tr-1");
    await runInDurableObject(stub("tr-0"), (node) => handOff(node.node!, stream.id, stream.name, stream.epoch, false));
    expect(await record(stream.name)).toMatchObject({ ownership: "closed", epoch: stream.epoch, transfer: { target: "tr-1" } });
    await crash("tr-0");
    await completedOnce(stream.name, stream.epoch, bytes);
  });

  it("after proposing the completion: nothing is left to do, and the target opens once", async () => {
    const { stream, bytes } = await busyStream("c/src-after-complete");
    await pauseWatcher("tr-0");
    await begin(stream.name, "tr-1");
    await runInDurableObject(stub("tr-0"), (node) => handOff(node.node!, stream.id, stream.name, stream.epoch));
    await crash("tr-0");
    await completedOnce(stream.name, stream.epoch, bytes);
  });
});

describe("a crash of the target at each step of a transfer", { timeout: 60_000 }, () => {
  it("while the transfer is pending: the restarted target opens it once the source completes", async () => {
    const { stream, bytes } = await busyStream("c/dst-pending");
    await pauseWatcher("tr-0");
    await begin(stream.name, "tr-1");
    await crash("tr-1");
    await pauseWatcher("tr-0", false);
    await completedOnce(stream.name, stream.epoch, bytes);
  });

  it("after the completion, before opening: the restarted target finds the stream handed to it and opens it", async () => {
    const { stream, bytes } = await busyStream("c/dst-before-open");
    await pauseWatcher("tr-1");
    await begin(stream.name, "tr-1");
    await openedOrPlaced(stream.name);
    await crash("tr-1");
    await completedOnce(stream.name, stream.epoch, bytes);
  });

  it("after OpenStream, before its WAL record: the restarted target opens it again from the same session", async () => {
    const { stream, bytes } = await busyStream("c/dst-after-open");
    await pauseWatcher("tr-1");
    await begin(stream.name, "tr-1");
    await openedOrPlaced(stream.name);
    const { nodeEpoch } = await stub("tr-1").ping();
    const opened = await meta.propose({ type: "OpenStream", streamId: stream.id, nodeId: "tr-1", nodeEpoch });
    expect(opened.ok).toBe(true);
    await crash("tr-1");
    // The first request opens it again (the crashed incarnation's open is fenced by a new epoch) from the
    // same session: the data is all there and the stream takes appends.
    expect(await text(await call("tr-1", "GET", `${stream.name}?offset=-1`))).toBe(bytes);
    expect(await record(stream.name)).toMatchObject({ owner: "tr-1", ownership: "opened", epoch: stream.epoch + 2 });
    expect((await call("tr-1", "POST", stream.name, { headers: TEXT, body: "after" })).status).toBe(204);
    expect(await text(await call("tr-1", "GET", `${stream.name}?offset=-1`))).toBe(`${bytes}after`);
  });
});

/** Waits until the source completed the transfer (the stream is placed on tr-1, not opened yet). */
async function openedOrPlaced(name: string): Promise<void> {
  await waitFor(`${name} handed to tr-1`, async () => {
    const stream = await record(name);
    return stream.transfer === undefined && stream.owner === "tr-1";
  });
}
