// Drain and rebalance rounds at the MetaLogService (the same service the MetaLog Durable Object runs, over
// the in-memory journal), with the sources' part of each transfer played by hand (CloseStream, then
// CompleteTransfer, as a node's watcher does: docs/transfers.md). Covers the user report "a drain reported
// done while a transfer to the node was pending, then waited forever at '1 remaining, 0 transferring'":
// the drain is not done while a transfer to the node is pending, and a drain called again after it landed
// moves that stream away; a drain that cannot go on says why (drainStall). Then `rebalance` rounds: a dry
// run proposes nothing, a real round begins at most maxConcurrent transfers (counting those pending), later
// rounds begin the rest as earlier ones land and never overshoot, orphans are reported and left to the
// coordinator.
import { describe, expect, it } from "vitest";
import { drainStall, isDrained, type Command, type DrainProgress } from "../../src/core/meta/index.ts";
import type { MetaLogService } from "../../src/metadata/meta-log-service.ts";
import { MAX_DRAIN_BATCH } from "../../src/metadata/meta-log-moves.ts";
import type { ProposeResult } from "../../src/ports/meta-log-client.ts";
import { MemoryMetaLog } from "./support/memory-meta-log.ts";

const T0 = 1_800_000_000_000;

/** A MetaLogService on a clock the test moves; nodes registered (1 slot, node epoch 1) in the order given. */
function logWith(nodeIds: readonly string[]): { service: MetaLogService; clock: { nowMs: number } } {
  const clock = { nowMs: T0 };
  const { service } = new MemoryMetaLog(() => clock.nowMs);
  for (const nodeId of nodeIds) accept(service, { type: "RegisterNode", nodeId, nodeEpoch: 1, addr: `http://mink.test/n/${nodeId}` });
  return { service, clock };
}

function accept(service: MetaLogService, command: Command): void {
  const result = service.propose(command);
  if (!result.ok) throw new Error(`${command.type} refused: ${result.error.code} ${result.error.message}`);
}

/** Creates streams opened on `nodeId` (the other nodes get 0 slots while they are placed). Returns their ids. */
function openOn(service: MetaLogService, nodeId: string, names: readonly string[]): string[] {
  const others = [...service.state.nodes.values()].filter((node) => node.id !== nodeId);
  for (const node of others) accept(service, { type: "SetSlots", nodeId: node.id, slots: 0 });
  const ids = names.map((name) => {
    const created = service.propose({ type: "CreateStream", name, config: { contentType: "text/plain" } }) as ProposeResult<"CreateStream">;
    if (!created.ok) throw new Error(created.error.message);
    const streamId = created.value.stream.id;
    accept(service, { type: "PlaceStream", streamId });
    accept(service, { type: "OpenStream", streamId, nodeId, nodeEpoch: 1 });
    return streamId;
  });
  for (const node of others) accept(service, { type: "SetSlots", nodeId: node.id, slots: node.slots });
  return ids;
}

/** The source's part of a pending transfer: close at the stream's epoch, then complete (T1-T3). */
function land(service: MetaLogService, streamId: string): void {
  const stream = service.lookupStream({ id: streamId }).stream;
  if (stream?.transfer === undefined) throw new Error(`no transfer of ${streamId} is pending`);
  accept(service, { type: "CloseStream", streamId, nodeId: stream.transfer.source, nodeEpoch: 1, epoch: stream.epoch });
  accept(service, { type: "CompleteTransfer", streamId, closedEpoch: stream.epoch });
}

function pendingIds(service: MetaLogService): string[] {
  return service.pendingTransfers().streams.map((stream) => stream.id);
}

function progressOf(service: MetaLogService, nodeId: string): DrainProgress {
  const progress = service.drainProgress(nodeId);
  if (progress === null) throw new Error(`no node ${nodeId}`);
  return progress;
}

function ownerCounts(service: MetaLogService): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const stream of service.view().streams) {
    if (stream.owner !== null && (stream.ownership === "placed" || stream.ownership === "opened")) counts[stream.owner] = (counts[stream.owner] ?? 0) + 1;
  }
  return counts;
}

describe("drain rounds (the report: a transfer to the node pending when the drain began)", () => {
  it("is not done while the transfer to the node is pending; a drain called again after it landed moves the stream away and finishes", () => {
    const { service } = logWith(["a", "b", "c"]);
    const [arriving = ""] = openOn(service, "a", ["report/arriving"]);
    accept(service, { type: "BeginTransfer", streamId: arriving, target: "b" });

    const first = service.drain("b");
    if (!first.ok || first.progress === null) throw new Error("drain refused");
    // Nothing is on b yet and the pending transfer is not b's to plan, but it will land on b.
    expect(first).toMatchObject({ begun: 0, unplaceable: 0, progress: { remaining: 0, transferring: 0, incoming: 1 } });
    expect(isDrained(first.progress)).toBe(false); // before the fix: "done"
    expect(drainStall(first.progress, first)).toBeNull(); // something is on its way: not stuck

    land(service, arriving); // a hands it over: it is b's now, placed there at epoch 1
    expect(service.lookupStream({ id: arriving }).stream).toMatchObject({ owner: "b", ownership: "placed" });
    const stuck = progressOf(service, "b");
    expect(stuck).toMatchObject({ remaining: 1, transferring: 0, incoming: 0 }); // where the old CLI waited forever
    expect(isDrained(stuck)).toBe(false);

    // The CLI calls the (idempotent) drain each round: this one plans what arrived.
    const second = service.drain("b");
    expect(second).toMatchObject({ ok: true, begun: 1, unplaceable: 0, progress: { remaining: 1, transferring: 1, incoming: 0 } });
    const target = service.lookupStream({ id: arriving }).stream?.transfer?.target;
    expect(["a", "c"]).toContain(target);
    land(service, arriving);

    const third = service.drain("b");
    if (!third.ok || third.progress === null) throw new Error("drain refused");
    expect(third).toMatchObject({ begun: 0, progress: { remaining: 0, transferring: 0, incoming: 0 } });
    expect(isDrained(third.progress)).toBe(true);
    expect(service.lookupStream({ id: arriving }).stream).toMatchObject({ owner: target, ownership: "placed" });
  });

  it("says a drain is stuck on unplaceable streams when no other node can take them, and goes on once one can", () => {
    const { service } = logWith(["a", "b"]);
    openOn(service, "a", ["stuck/1", "stuck/2"]);
    accept(service, { type: "SetSlots", nodeId: "b", slots: 0 });
    const stuck = service.drain("a");
    if (!stuck.ok || stuck.progress === null) throw new Error("drain refused");
    expect(stuck).toMatchObject({ begun: 0, unplaceable: 2, progress: { remaining: 2, transferring: 0 } });
    expect(drainStall(stuck.progress, stuck)).toEqual({ reason: "unplaceable", streams: 2 });

    accept(service, { type: "SetSlots", nodeId: "b", slots: 1 });
    const going = service.drain("a");
    if (!going.ok || going.progress === null) throw new Error("drain refused");
    expect(going).toMatchObject({ begun: 2, unplaceable: 0 });
    expect(drainStall(going.progress, going)).toBeNull();
  });
});

describe("drain batches", () => {
  it("a drain begins at most MAX_DRAIN_BATCH transfers; the drain asked again once they landed begins the rest, and then it is done", () => {
    const { service } = logWith(["a", "b"]);
    const ids = openOn(service, "a", Array.from({ length: MAX_DRAIN_BATCH + 250 }, (_, i) => `d/${i}`));
    const first = service.drain("a");
    expect(first).toMatchObject({ ok: true, begun: MAX_DRAIN_BATCH, unplaceable: 0 });
    expect(pendingIds(service)).toHaveLength(MAX_DRAIN_BATCH);
    // Asked again while the batch is moving, it begins the streams not moving yet: still one batch at most.
    for (const streamId of pendingIds(service)) land(service, streamId);
    const second = service.drain("a");
    expect(second).toMatchObject({ ok: true, begun: 250 });
    for (const streamId of pendingIds(service)) land(service, streamId);
    expect(isDrained(progressOf(service, "a"))).toBe(true);
    expect(ids.every((id) => service.lookupStream({ id }).stream?.owner === "b")).toBe(true);
  });
});

describe("rebalance rounds", () => {
  const names = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}/${i}`);

  it("a dry run answers the plan and proposes nothing", () => {
    const { service } = logWith(["a", "b", "c", "d"]);
    openOn(service, "a", names("dry", 8));
    const version = service.state.version;
    const answer = service.rebalance({ dryRun: true, maxConcurrent: 4 });
    expect(answer.plan.moves.map((m) => `${m.from}>${m.to}`)).toEqual(["a>b", "a>c", "a>d", "a>b", "a>c", "a>d"]);
    expect(answer).toMatchObject({ begun: [], pending: 0, done: false, version, plan: { orphans: [], meanLoad: 2, unplaceable: 0 } });
    expect(service.state.version).toBe(version);
  });

  it("a round begins the plan's first transfers up to maxConcurrent pending; later rounds begin the rest as earlier ones land, then done", () => {
    const { service } = logWith(["a", "b", "c", "d"]);
    openOn(service, "a", names("real", 8));
    const first = service.rebalance({ dryRun: false, maxConcurrent: 2 });
    expect(first.begun).toEqual(first.plan.moves.slice(0, 2));
    expect(first).toMatchObject({ pending: 2, done: false });
    expect(pendingIds(service).sort()).toEqual(first.begun.map((m) => m.streamId).sort());

    // Full: nothing begins, and the plan is what is left, counted from where the pending two will land.
    const full = service.rebalance({ dryRun: false, maxConcurrent: 2 });
    expect(full.begun).toEqual([]);
    expect(full.plan.moves).toHaveLength(4);
    expect(full.plan.moves.some((m) => first.begun.some((b) => b.streamId === m.streamId))).toBe(false);

    let rounds = 0;
    let begun = first.begun.length;
    for (let answer = full; !answer.done; rounds++) {
      if (rounds > 20) throw new Error("the rebalance did not finish");
      const [oldest] = pendingIds(service);
      if (oldest !== undefined) land(service, oldest);
      answer = service.rebalance({ dryRun: false, maxConcurrent: 2 });
      begun += answer.begun.length;
      expect(answer.pending).toBeLessThanOrEqual(2);
    }
    expect(begun).toBe(6); // exactly the first plan's count: no round overshot
    expect(ownerCounts(service)).toEqual({ a: 2, b: 2, c: 2, d: 2 });
    expect(service.rebalance({ dryRun: false, maxConcurrent: 2 })).toMatchObject({ begun: [], pending: 0, done: true, plan: { moves: [], orphans: [] } });
  });

  it("counts transfers pending for other reasons against maxConcurrent", () => {
    const { service } = logWith(["a", "b", "c"]);
    const [manual = "", ...rest] = openOn(service, "a", names("busy", 6));
    accept(service, { type: "BeginTransfer", streamId: manual, target: "b" });
    const answer = service.rebalance({ dryRun: false, maxConcurrent: 2 });
    expect(answer.begun).toHaveLength(1);
    expect(answer.pending).toBe(2);
    expect(rest).toContain(answer.begun[0]?.streamId);
    expect(service.rebalance({ dryRun: false, maxConcurrent: 1 }).begun).toEqual([]);
  });

  it("reports orphans without moving them (the coordinator re-leads them), and unplaceable ones when no live node can take them", () => {
    const { service, clock } = logWith(["a", "b", "c"]);
    const orphaned = openOn(service, "c", names("orphan", 2));
    clock.nowMs += service.timings.leaseTtlMs + 1;
    for (const nodeId of ["a", "b"]) expect(service.heartbeat(nodeId, 1).ok).toBe(true);
    const version = service.state.version;
    const answer = service.rebalance({ dryRun: false, maxConcurrent: 4 });
    expect(answer.plan.orphans.map((m) => [m.streamId, m.from, m.kind])).toEqual(orphaned.map((id) => [id, "c", "reassign"]));
    expect(answer).toMatchObject({ begun: [], pending: 0, done: false });
    expect(service.state.version).toBe(version); // no ReassignStreams, no transfer
    for (const id of orphaned) expect(service.lookupStream({ id }).stream?.owner).toBe("c");

    for (const nodeId of ["a", "b"]) accept(service, { type: "SetSlots", nodeId, slots: 0 });
    expect(service.rebalance({ dryRun: true, maxConcurrent: 4 })).toMatchObject({ plan: { orphans: [], moves: [], unplaceable: 2 }, done: false });
  });

  it("refuses a maxConcurrent that is not a positive integer", () => {
    const { service } = logWith(["a"]);
    for (const maxConcurrent of [0, -1, 1.5, Number.NaN]) expect(() => service.rebalance({ dryRun: true, maxConcurrent })).toThrow(RangeError);
  });
});
