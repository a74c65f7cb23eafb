// The residency scenario: a node that holds evicted streams dies, and their new owners adopt them from the
// sessions their evictions left (src/node/ownership/adopt.ts, table RL's RL5 for an orphan). Under the usual
// faults this never happens (0 in seeds 1-500): clients touch every stream so often that an evicted stream
// is rare during the active phase, and the crash budget is spent long before one appears. On seeds drawn
// from a generator of its own (the seed mixed with a constant), so a seed without it runs as before, two
// moves of their own scheduler categories:
// - quiet: clients leave one stream alone (World.quiet), so it goes idle, is compacted and evicted while
//   the rest of the workload goes on. It is theirs again once the log shows it reopened (by the node that
//   adopted it, or by its old node back), or after QUIET_MS without a hold;
// - hold-evicted: a running node holds streams the log has opened by it that its registry has let go
//   (evicted, and compacted since: its next compaction is not due), and another node runs: crash it and
//   keep it down past the lease (Chaos.holdDown). The coordinator declares it dead and re-leads its
//   streams; the new owner takes it over (its WAL replay no longer knows an evicted stream) and opens
//   each orphan from its manifest: an evicted one from the eviction's session (`evicted orphan adopted`).
//   Should the takeover's replay still know the stream (a compaction in flight), the takeover closes it
//   and the new owner adopts the close instead: also correct.
import { checkpointKey, manifestKey } from "../../src/storage/keys.ts";
import { decodeManifest, type Manifest } from "../../src/storage/manifest.ts";
import type { Chaos } from "./chaos.ts";
import type { Incarnation, SimCluster } from "./cluster.ts";
import type { World } from "./clients.ts";
import type { History } from "./history.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase, Weights } from "./scheduler.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";

/** The share of seeds that run the residency scenario. */
const RESIDENCY_SEEDS = 0.4;
/** A quiet stream with no hold of its node this long (virtual) is the clients' again. */
const QUIET_MS = 2_000;

export interface ResidencyShape {
  /** The `quiet` and `hold-evicted` weights. */
  readonly weights: Weights;
  /** Holds of a node with evicted streams per seed. */
  readonly holds: number;
}

export function drawResidencyShape(prng: Prng): ResidencyShape | null {
  if (!prng.chance(RESIDENCY_SEEDS) || process.env["NO_RES"] === "1") return null;
  const timer = process.env["RES_TIMER"] === undefined ? {} : { timer: Number(process.env["RES_TIMER"]) };
  return { weights: { ...timer, quiet: prng.pick([0.2, 0.5, 1]), "hold-evicted": prng.pick([0.5, 1, 2]) }, holds: prng.between(1, 2) };
}

export function describeResidencyShape(shape: ResidencyShape): string {
  return `quiet ${shape.weights["quiet"]}, hold-evicted ${shape.weights["hold-evicted"]} x${shape.holds}`;
}

interface ResidencyDeps {
  readonly cluster: SimCluster;
  readonly meta: SimMetaLog;
  readonly world: World;
  readonly chaos: Chaos;
  readonly history: History;
  readonly trace: Trace;
  readonly prng: Prng;
  readonly now: () => number;
}

interface Quiet {
  readonly stream: string;
  readonly sinceMs: number;
  /** The stream's epoch in the log when its node was held down (null: not held yet). */
  heldAtEpoch: number | null;
}

export class ResidencyScenario implements Actor {
  readonly name = "residency";
  private holdsLeft: number;
  private quiet: Quiet | null = null;
  /** How far history.writes has been read. */
  private writesRead = 0;
  /** Each stream's manifest as last written, and the index of that write in history.writes. */
  private readonly manifests = new Map<string, { readonly at: number; readonly manifest: Manifest }>();
  /** The index in history.writes of each node's last checkpoint write (a compaction or takeover landed). */
  private readonly checkpoints = new Map<string, number>();

  constructor(
    private readonly deps: ResidencyDeps,
    shape: ResidencyShape,
  ) {
    this.holdsLeft = shape.holds;
  }

  choices(phase: Phase): readonly Choice[] {
    this.readWrites();
    this.releaseQuiet(phase);
    if (phase !== "active") return [];
    const moves: Choice[] = [];
    const { world, prng } = this.deps;
    const served = this.quiet === null && this.holdsLeft > 0 ? world.streams.filter((stream) => this.servedByRunningNode(stream)) : [];
    if (served.length > 0) {
      moves.push({ category: "quiet", label: "clients leave a stream alone", run: () => this.quietOne(prng.pick(served)) });
    }
    const candidates = this.holdsLeft > 0 ? this.nodesHoldingEvicted() : [];
    if (candidates.length > 0) {
      moves.push({
        category: "hold-evicted",
        label: "crash a node that holds evicted streams and keep it down past the lease",
        run: () => this.hold(prng.pick(candidates)),
      });
    }
    return moves;
  }

  /** The log has `stream` opened by a node whose only incarnation runs. */
  private servedByRunningNode(stream: string): boolean {
    const record = this.record(stream);
    if (record === undefined || record.ownership !== "opened" || record.owner === null || this.runningIncarnation(record.owner) === null) return false;
    if (process.env["RES_FILTER"] === "1" && this.manifests.get(record.id)?.manifest.closed !== undefined) return false;
    return true;
  }

  private quietOne(stream: string): void {
    this.quiet = { stream, sinceMs: this.deps.now(), heldAtEpoch: null };
    this.deps.world.quiet.add(stream);
    const record = this.record(stream);
    this.deps.trace.write(`  residency: clients leave ${stream} alone (${record === undefined ? "not in the log" : `${record.id} ${record.ownership} by ${record.owner}`})`);
  }

  /** The quiet stream back to the clients: reopened since its node was held, unheld for QUIET_MS, or the active phase over. */
  private releaseQuiet(phase: Phase): void {
    const quiet = this.quiet;
    if (quiet === null) return;
    const record = this.record(quiet.stream);
    const reopened = quiet.heldAtEpoch !== null && record !== undefined && record.ownership === "opened" && record.epoch > quiet.heldAtEpoch;
    const stale = quiet.heldAtEpoch === null && this.deps.now() - quiet.sinceMs >= QUIET_MS;
    if (phase === "active" && !reopened && !stale) return;
    this.quiet = null;
    this.deps.world.quiet.delete(quiet.stream);
    if (phase === "active") this.deps.trace.write(`  residency: clients touch ${quiet.stream} again (${reopened ? `reopened by ${record!.owner} at ${record!.epoch}` : "no hold"})`);
  }

  private hold(nodeId: string): void {
    this.holdsLeft--;
    const evicted = this.evictedOn(nodeId);
    this.deps.trace.write(`  residency: ${nodeId} holds evicted ${evicted.map((stream) => `${stream.name} (${stream.id} at ${stream.epoch})`).join(", ")}`);
    const quiet = this.quiet;
    if (quiet !== null) {
      const record = this.record(quiet.stream);
      if (record !== undefined) quiet.heldAtEpoch = record.epoch;
    }
    this.deps.chaos.holdDown(nodeId);
  }

  /** The object store's writes since the last step: the latest manifest of each stream, each node's last checkpoint. */
  private readWrites(): void {
    const writes = this.deps.history.writes;
    for (; this.writesRead < writes.length; this.writesRead++) {
      const write = writes[this.writesRead]!;
      if (write.key.startsWith("streams/") && write.key.endsWith("/manifest")) {
        const streamId = decodeURIComponent(write.key.slice("streams/".length, -"/manifest".length));
        if (manifestKey(streamId) === write.key) this.manifests.set(streamId, { at: this.writesRead, manifest: decodeManifest(write.body, write.key, streamId) });
      } else if (write.key.startsWith("nodes/") && write.key.endsWith("/checkpoint")) {
        const nodeId = decodeURIComponent(write.key.slice("nodes/".length, -"/checkpoint".length));
        if (checkpointKey(nodeId) === write.key) this.checkpoints.set(nodeId, this.writesRead);
      }
    }
  }

  /** Nodes whose only incarnation runs and holds evicted streams compacted out of its WAL, while another node runs. */
  private nodesHoldingEvicted(): string[] {
    const running = this.deps.cluster.nodeIds.filter((id) => this.runningIncarnation(id) !== null);
    if (running.length < 2) return [];
    return running.filter((id) => this.evictedOn(id).length > 0);
  }

  /**
   * Streams the log has opened by `nodeId` at an epoch whose manifest holds an eviction's session (no close)
   * at that epoch, written before the node's last checkpoint (a compaction since: its WAL replay no longer
   * knows them), and which its running incarnation does not hold and is not opening or reloading.
   */
  private evictedOn(nodeId: string): { id: string; name: string; epoch: number }[] {
    const inc = this.runningIncarnation(nodeId);
    if (inc === null) return [];
    const ctx = inc.runtime!.ctx;
    const checkpointAt = this.checkpoints.get(nodeId) ?? -1;
    const found: { id: string; name: string; epoch: number }[] = [];
    for (const stream of this.deps.meta.service.state.streams.values()) {
      if (stream.owner !== nodeId || stream.ownership !== "opened" || ctx.registry.get(stream.id) !== undefined) continue;
      if (ctx.locks.busy(`name:${stream.name}`) || ctx.locks.busy(`open:${stream.id}`)) continue;
      const latest = this.manifests.get(stream.id);
      if (latest === undefined || latest.at > checkpointAt) continue;
      const { manifest } = latest;
      if (manifest.closed !== undefined || manifest.session === undefined || manifest.epoch !== stream.epoch) continue;
      found.push({ id: stream.id, name: stream.name, epoch: stream.epoch });
    }
    return found;
  }

  /** The node's only live incarnation, running with no fault (null otherwise). */
  private runningIncarnation(nodeId: string): Incarnation | null {
    const live = this.deps.cluster.live(nodeId);
    const inc = live.length === 1 ? live[0]! : null;
    return inc !== null && inc.state === "running" && inc.runtime !== null && inc.runtime.fault === null ? inc : null;
  }

  private record(name: string) {
    for (const stream of this.deps.meta.service.state.streams.values()) if (stream.name === name) return stream;
    return undefined;
  }
}
