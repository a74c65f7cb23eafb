// The MetaLog Durable Object in workerd (vitest pool): the log survives eviction and restart and replays to
// the same state, snapshots bound it, concurrent proposals from several nodes are ordered with the expected
// results, and watch answers deltas (long-poll) or the full view.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CommandOf } from "../../src/core/meta/index.ts";
import { type Env } from "../../src/env.ts";
import { diagnosticMetaLog, type DiagnosticMetaLog } from "./diagnostic-meta-log.ts";
import type { MetaLog } from "../../durable-objects/meta-log.ts";
import type { ProposeResult } from "../../src/ports/meta-log-client.ts";

const metaLogs = (env as unknown as Env).META_LOG;

/** Each test uses its own MetaLog (storage is isolated per test file, not per test). */
function metaLog(name: string): DiagnosticMetaLog {
  return diagnosticMetaLog(metaLogs, name);
}

/** The stub itself, for runInDurableObject. */
function metaLogStub(name: string): DurableObjectStub<MetaLog> {
  return metaLogs.getByName(name) as DurableObjectStub<MetaLog>;
}

const NODES = ["n1", "n2", "n3", "n4"] as const;

function register(nodeId: string, nodeEpoch = 1, slots = 1): CommandOf<"RegisterNode"> {
  return { type: "RegisterNode", nodeId, nodeEpoch, addr: `https://mink.test/n/${nodeId}`, slots };
}

function accepted(result: ProposeResult): boolean {
  return result.ok && result.changed;
}

async function setUp(name: string): Promise<DiagnosticMetaLog> {
  const stub = metaLog(name);
  for (const nodeId of NODES) expect(accepted(await stub.propose(register(nodeId)))).toBe(true);
  return stub;
}

describe("MetaLog durability", () => {
  it("the log survives a restart of every Durable Object and replays to the same state", async () => {
    const stub = await setUp("restart");
    for (let i = 0; i < 5; i++) {
      const created = await stub.propose({ type: "CreateStream", name: `stream-${i}`, config: { i } });
      if (!created.ok) throw new Error(created.error.message);
      await stub.propose({ type: "PlaceStream", streamId: created.value.stream.id });
    }
    await stub.propose({ type: "OpenStream", streamId: "s1", nodeId: "n1", nodeEpoch: 1 });
    await stub.propose({ type: "BeginTransfer", streamId: "s2", target: "n4" });
    const before = await stub.view();
    expect(before.version).toBe(4 + 10 + 2);
    // A marker in memory only: a new instance starts with the defaults again.
    await runInDurableObject(metaLogStub("restart"), (instance) => {
      instance.tuning.maxWatchMs = 1;
    });

    await abortAllDurableObjects();

    // Stubs from before the abort are broken; a new stub reaches a new instance.
    const restarted = metaLog("restart");
    expect(await runInDurableObject(metaLogStub("restart"), (instance) => instance.tuning.maxWatchMs)).toBe(60_000);
    expect(await restarted.view()).toEqual(before);
    const lookup = await restarted.lookupStream({ name: "stream-1" });
    expect(lookup.stream?.transfer).toEqual({ source: "n2", target: "n4" });
    // The restarted log keeps ordering from where it stopped.
    const next = await restarted.propose({ type: "CreateStream", name: "after-restart", config: {} });
    expect(next.ok && next.value.stream.id).toBe("s6");
    expect(next.version).toBe(before.version + 1);
  });

  it("entries are pruned on cadence, and a restart loads the head and the rest of the state, not the entries", async () => {
    const stub = await setUp("snapshots");
    await runInDurableObject(metaLogStub("snapshots"), (instance) => {
      instance.tuning.snapshotEveryEntries = 5;
      instance.tuning.watchRetainEntries = 2;
    });
    for (let i = 0; i < 12; i++) await stub.propose({ type: "CreateStream", name: `s-${i}`, config: {} });
    const stats = await stub.stats();
    expect(stats.version).toBe(16);
    // The nodes, transfers, lease and tables were last changed by the fourth registration: creates only
    // write their stream rows and the head.
    expect(stats.snapshot?.version).toBe(4);
    expect(stats.streams).toBe(12);
    // Pruned at 15 through 13, keeping the two retained for watchers: 14, 15 and the entry after, 16.
    expect(stats.log).toEqual({ entries: 3, oldest: 14, newest: 16 });
    const before = await stub.view();

    await abortAllDurableObjects();

    const restarted = metaLog("snapshots");
    expect(await restarted.view()).toEqual(before);
    // The same state; the group commit's counts are since this incarnation started (one lookup, no proposal).
    const { proposals, ...stored } = stats;
    expect(proposals.immediate + proposals.grouped).toBe(16);
    const { proposals: since, ...restored } = await restarted.stats();
    expect(restored).toEqual(stored);
    expect(since).toEqual({ immediate: 0, grouped: 0, groups: 0, refused: 0 });
  });

  it("a snapshot larger than SQLite's value limit is stored in chunks and read back intact", async () => {
    const text = "ünïcode-€-".repeat(300_000); // about 4 MB of UTF-8
    const info = await runInDurableObject(metaLogStub("chunks"), async (_instance, state) => {
      const { MetaLogStore } = await import("../../durable-objects/meta-log-store.ts");
      const store = new MetaLogStore(state.storage.sql);
      store.migrate();
      const written = store.writeSnapshot(7, text);
      expect(store.readSnapshot()).toEqual({ version: 7, text });
      return written;
    });
    expect(info.chunks).toBeGreaterThan(3);
    expect(info.bytes).toBeGreaterThan(3 * 1024 * 1024);
  });

  it("a malformed proposal is rejected as invalid and writes nothing", async () => {
    const stub = await setUp("malformed");
    const result = await stub.propose({ type: "OpenStream", streamId: "s1" } as unknown as CommandOf<"OpenStream">);
    expect(result).toMatchObject({ ok: false, error: { code: "invalid" }, version: 4 });
    expect((await stub.stats()).log.entries).toBe(4);
  });
});

describe("MetaLog ordering of concurrent proposals", () => {
  it("group commit: proposals that arrive together are applied together, each answered with its own entry, and all survive a restart", async () => {
    const stub = await setUp("grouped");
    const names = Array.from({ length: 64 }, (_, i) => `g-${i}`);
    const results = await Promise.all(names.map((name) => stub.propose({ type: "CreateStream", name, config: {} })));
    expect(results.every(accepted)).toBe(true);
    // Each proposal got an entry of its own (versions 5..68, each once), whatever group it was applied in.
    expect(new Set(results.map((result) => result.version))).toEqual(new Set(names.map((_, i) => 5 + i)));
    const { proposals } = await stub.stats();
    expect(proposals.grouped).toBeGreaterThan(0);
    expect(proposals.groups).toBeLessThan(proposals.grouped);
    expect(proposals.immediate + proposals.grouped).toBe(NODES.length + names.length);
    await abortAllDurableObjects();
    const restarted = metaLog("grouped");
    for (const name of names) expect((await restarted.lookupStream({ name })).stream?.name).toBe(name);
  });

  it("racing PlaceStream proposals from every node: one places, the others are no-ops naming the same owner", async () => {
    const stub = await setUp("race-place");
    await stub.propose({ type: "CreateStream", name: "raced", config: {} });
    const results = await Promise.all(
      NODES.map((nodeId) => stub.propose({ type: "PlaceStream", streamId: "s1", by: { nodeId, nodeEpoch: 1 } })),
    );
    expect(results.filter(accepted)).toHaveLength(1);
    // Every node is empty, so placement ties and the tie goes to the proposer (PS5): the proposal applied
    // first, whichever node's it is, places the stream on its proposer. Arrival order is the runtime's.
    const placer = NODES[results.findIndex(accepted)];
    const owners = new Set(results.map((r) => (r.ok ? r.value.stream.owner : null)));
    expect(owners).toEqual(new Set([placer]));
    expect((await stub.view()).version).toBe(6);
  });

  it("racing OpenStream proposals: exactly one node opens, every other is held_by it; a closed stream goes to one opener", async () => {
    const stub = await setUp("race-open");
    await stub.propose({ type: "CreateStream", name: "raced", config: {} });
    await stub.propose({ type: "PlaceStream", streamId: "s1" });
    const open = (nodeId: string) => stub.propose({ type: "OpenStream", streamId: "s1", nodeId, nodeEpoch: 1 });

    const first = await Promise.all(NODES.map(open));
    expect(first.filter(accepted).map((r) => r.ok && r.value.stream)).toEqual([expect.objectContaining({ owner: "n1", epoch: 1 })]);
    // A loser decided before n1's open sees the placement (epoch 0), one decided after it the open (epoch 1):
    // the proposals race, so either order happens.
    for (const result of first.filter((r) => !r.ok)) {
      expect(result).toMatchObject({ ok: false, error: { code: "held_by", details: { owner: "n1" } } });
      expect([0, 1]).toContain(result.ok ? null : result.error.details?.["epoch"]);
    }

    await stub.propose({ type: "CloseStream", streamId: "s1", nodeId: "n1", nodeEpoch: 1, epoch: 1 });
    const second = await Promise.all(NODES.map(open));
    const winners = second.filter(accepted);
    expect(winners).toHaveLength(1);
    const winner = winners[0]?.ok === true ? winners[0].value.stream : null;
    expect(winner).toMatchObject({ epoch: 2, ownership: "opened" });
    const losers = second.filter((r) => !accepted(r));
    expect(losers).toHaveLength(NODES.length - 1);
    for (const result of losers) {
      expect(result).toMatchObject({ ok: false, error: { code: "held_by", details: { owner: winner?.owner, epoch: 2 } } });
    }
    const lookup = await stub.lookupStream({ id: "s1" });
    expect(lookup.stream).toMatchObject({ owner: winner?.owner, epoch: 2 });
    expect(lookup.ownerNode?.id).toBe(winner?.owner);
  });

  it("racing registrations of one node id: the highest epoch wins and every lower one is refused with it", async () => {
    const stub = metaLog("race-register");
    const epochs = [5, 3, 9, 7, 1];
    const results = await Promise.all(epochs.map((epoch) => stub.propose(register("n1", epoch))));
    const view = await stub.view();
    expect(view.nodes).toEqual([expect.objectContaining({ id: "n1", epoch: 9 })]);
    results.forEach((result, i) => {
      if (!result.ok) {
        expect(result.error.code).toBe("stale_epoch");
        expect(Number(result.error.details?.currentEpoch)).toBeGreaterThan(epochs[i] ?? 0);
      }
    });
    expect(results[epochs.indexOf(9)]?.ok).toBe(true);
    // The accepted registrations form an increasing sequence in the log.
    expect(view.version).toBe(results.filter(accepted).length);
  });

  it("a handoff proposed by source and target in turn follows tables BT and CT", async () => {
    const stub = await setUp("handoff");
    await stub.propose({ type: "CreateStream", name: "moving", config: {} });
    await stub.propose({ type: "PlaceStream", streamId: "s1" });
    await stub.propose({ type: "OpenStream", streamId: "s1", nodeId: "n1", nodeEpoch: 1 });
    expect(accepted(await stub.propose({ type: "BeginTransfer", streamId: "s1", target: "n3" }))).toBe(true);
    const early = await stub.propose({ type: "OpenStream", streamId: "s1", nodeId: "n3", nodeEpoch: 1 });
    expect(early).toMatchObject({ ok: false, error: { code: "transfer_pending", details: { target: "n3" } } });
    await stub.propose({ type: "CloseStream", streamId: "s1", nodeId: "n1", nodeEpoch: 1, epoch: 1 });
    const [done, duplicate] = await Promise.all([
      stub.propose({ type: "CompleteTransfer", streamId: "s1", closedEpoch: 1, by: { nodeId: "n1", nodeEpoch: 1 } }),
      stub.propose({ type: "CompleteTransfer", streamId: "s1", closedEpoch: 1, by: { nodeId: "n1", nodeEpoch: 1 } }),
    ]);
    expect([done, duplicate].filter(accepted)).toHaveLength(1);
    expect([done, duplicate].filter((r) => !r.ok).map((r) => !r.ok && r.error.code)).toEqual(["not_found"]);
    const opened = await stub.propose({ type: "OpenStream", streamId: "s1", nodeId: "n3", nodeEpoch: 1 });
    expect(opened).toMatchObject({ ok: true, value: { stream: { owner: "n3", epoch: 2, ownership: "opened" } } });
  });
});

describe("MetaLog watch, heartbeats and the lease", () => {
  it("a watch at the current version waits for the next change and returns it as a delta", async () => {
    const stub = await setUp("watch");
    const since = (await stub.view()).version;
    const watching = stub.watch(since, 30_000);
    await stub.propose({ type: "CreateStream", name: "watched", config: { a: 1 } });
    const changes = await watching;
    expect(changes).toMatchObject({ full: false, since, version: since + 1, nodes: [], removedStreamIds: [] });
    expect(!changes.full && changes.streams.map((s) => s.name)).toEqual(["watched"]);
  });

  it("a watch with nothing new answers an empty delta at the same version when it times out", async () => {
    const stub = await setUp("watch-timeout");
    expect(await stub.watch(4, 10)).toEqual({ full: false, since: 4, version: 4, nodes: [], streams: [], removedStreamIds: [] });
  });

  it("a watch from before the retained log, or from a version the log never reached, gets the full view", async () => {
    const stub = await setUp("watch-full");
    await runInDurableObject(metaLogStub("watch-full"), (instance) => {
      instance.tuning.snapshotEveryEntries = 3;
      instance.tuning.watchRetainEntries = 1;
    });
    for (let i = 0; i < 4; i++) await stub.propose({ type: "CreateStream", name: `w-${i}`, config: {} });
    const old = await stub.watch(1, 0);
    expect(old.full && old.view.streams.length).toBe(4);
    const ahead = await stub.watch(100, 0);
    expect(ahead).toMatchObject({ full: true, version: 8 });
    const recent = await stub.watch(7, 0);
    expect(recent).toMatchObject({ full: false, since: 7, version: 8 });
  });

  it("heartbeats keep nodes live for leaseTtlMs; stale epochs are refused; a restarted MetaLog gives every node a grace period", async () => {
    const stub = await setUp("liveness");
    expect(await stub.heartbeat("n1", 0)).toMatchObject({ ok: false, error: { code: "stale_epoch", details: { currentEpoch: 1 } } });
    expect(await stub.heartbeat("n9", 1)).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(await stub.heartbeat("n1", 1)).toEqual({ ok: true, version: 4 });
    const nowMs = Date.now();
    expect((await stub.liveNodes(nowMs)).map((n) => n.id)).toEqual(["n1", "n2", "n3", "n4"]);
    expect(await stub.liveNodes(nowMs + 10 * 60_000)).toEqual([]);

    await abortAllDurableObjects();

    const restarted = metaLog("liveness");
    expect((await restarted.liveNodes(Date.now())).map((n) => n.id)).toEqual(["n1", "n2", "n3", "n4"]);
    expect(await restarted.liveNodes(Date.now() + 10 * 60_000)).toEqual([]);
  });

  it("the coordinator lease is granted with MetaLog's clock and fences a second acquirer", async () => {
    const stub = await setUp("lease");
    const first = await stub.propose({ type: "AcquireLease", nodeId: "n1", nodeEpoch: 1, ttlMs: 30_000 });
    expect(first).toMatchObject({ ok: true, changed: true, value: { lease: { holder: "n1", coordinatorEpoch: 1 } } });
    const second = await stub.propose({ type: "AcquireLease", nodeId: "n2", nodeEpoch: 1, ttlMs: 30_000 });
    expect(second).toMatchObject({ ok: false, error: { code: "held_by", details: { holder: "n1", coordinatorEpoch: 1 } } });
    const renewed = await stub.propose({ type: "RenewLease", nodeId: "n2", nodeEpoch: 1, coordinatorEpoch: 1, ttlMs: 30_000 });
    expect(renewed).toMatchObject({ ok: false, error: { code: "fenced" } });
  });
});

describe("MetaLog bounds (MAX_STREAMS, MAX_TOKENS)", () => {
  it("MAX_STREAMS: a create of a new name in a full log is limit_reached and writes nothing; a repeat is still answered; a delete frees a slot", async () => {
    const stub = await setUp("max-streams");
    expect(await runInDurableObject(metaLogStub("max-streams"), (instance) => instance.tuning.maxStreams)).toBe(10_000_000);
    await runInDurableObject(metaLogStub("max-streams"), (instance) => {
      instance.tuning.maxStreams = 2;
    });
    expect(accepted(await stub.propose({ type: "CreateStream", name: "a", config: {} }))).toBe(true);
    expect(accepted(await stub.propose({ type: "CreateStream", name: "b", config: {} }))).toBe(true);
    const before = (await stub.stats()).version;
    const refused = await stub.propose({ type: "CreateStream", name: "c", config: {} });
    expect(refused).toMatchObject({ ok: false, error: { code: "limit_reached", details: { limit: "MAX_STREAMS", max: 2 } } });
    expect(refused.version).toBe(before);
    expect((await stub.stats()).version).toBe(before);
    expect(await stub.propose({ type: "CreateStream", name: "a", config: {} })).toMatchObject({ ok: true, changed: false });
    const a = await stub.lookupStream({ name: "a" });
    expect(accepted(await stub.propose({ type: "DeleteStream", streamId: a.stream?.id ?? "" }))).toBe(true);
    expect(accepted(await stub.propose({ type: "CreateStream", name: "c", config: {} }))).toBe(true);
  });
});
