// The residency scenario: a node that holds evicted streams dies, and their new owners adopt them from the
// sessions their evictions left (src/node/ownership/adopt.ts; table RL's RL5 for an orphan). Under the usual
// faults alone this never happened (0 in seeds 1-500): the active phase spans about a second of virtual
// time (the median), too short for a stream to go idle, be compacted, evicted and compacted out of its
// node's WAL and for that node then to be declared dead a lease later; and clients touch every stream all
// the time. (Building this scenario also found that a stream that came by a transfer or a takeover was
// never evicted by its new owner: its manifest kept the last owner's close, which the eviction refused.)
// On seeds drawn from a generator of its own (the seed mixed with a constant), so a seed without it runs
// as before, the nodes compact after 2 or 3 WAL objects (an idle stream's data reaches stream objects soon
// after its last append: table EV's EV5), and two moves of their own scheduler categories:
// - lull: the stream clients start nothing and the operator begins no transfer or drain for a while
//   (World.quiet holds every stream, Operator.paused), so virtual time passes: streams go idle, their
//   nodes compact and evict them, and compact again. Requests and transfers under way finish; the other
//   workloads (tables, subscriptions) and the faults go on. The lull ends when its time is up or after
//   LULL_MAX_STEPS steps, or, once a node was held down in it, when that node's evicted streams were all
//   reopened (or a few leases later): clients then touch those streams again, on their new owners. The
//   active phase does not count a lull's steps (run-seed.ts): the seed's clients take as many as before.
// - hold-evicted: a running node holds streams the log has opened by it whose manifests hold an eviction's
//   session written before the node's last checkpoint (evicted, then compacted out of its WAL), and
//   another node runs: crash it and keep it down past the lease (Chaos.holdDown, the `hold` fault; the
//   scenario's own budget, not the seed's crashes). The coordinator declares it dead and re-leads its
//   streams; the new owner takes it over (the replay of its WAL no longer knows those streams) and opens
//   each orphan from its manifest, an evicted one from the eviction's session (`evicted orphan adopted`).
//   The takeover, the adoption and what clients see after are judged by every checker as usual.
import { checkpointKey, manifestKey } from "../../src/storage/keys.ts";
import { decodeManifest, type Manifest } from "../../src/storage/manifest.ts";
import type { Chaos } from "./chaos.ts";
import type { World } from "./clients.ts";
import type { Incarnation, SimCluster } from "./cluster.ts";
import type { History } from "./history.ts";
import type { Operator } from "./operator.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase, Weights } from "./scheduler.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";

/** The share of seeds that run the residency scenario. */
const RESIDENCY_SEEDS = 0.4;
/** How long a lull lasts at most without a hold (virtual). */
const LULL_MS: readonly number[] = [1_500, 2_500, 4_000];
/** A lull ends after this many steps at most, whatever virtual time did meanwhile. */
const LULL_MAX_STEPS = 400;
/** After a hold, the lull ends at the latest this many leases later. */
const LEASES_AFTER_HOLD = 4;

export interface ResidencyShape {
  /** The `lull` and `hold-evicted` weights. */
  readonly weights: Weights;
  /** Lulls, and holds of a node with evicted streams, per seed. */
  readonly lulls: number;
  readonly holds: number;
  /** COMPACT_AFTER_WAL_OBJECTS on the seed. */
  readonly compactAfterWalObjects: number;
}

export function drawResidencyShape(prng: Prng): ResidencyShape | null {
  if (!prng.chance(RESIDENCY_SEEDS)) return null;
  return {
    weights: { lull: prng.pick([0.1, 0.3, 1]), "hold-evicted": prng.pick([0.5, 1, 2]) },
    lulls: prng.between(1, 2),
    holds: prng.between(1, 2),
    compactAfterWalObjects: prng.pick([2, 3]),
  };
}

export function describeResidencyShape(shape: ResidencyShape): string {
  const w = shape.weights;
  return `lull ${w["lull"]} x${shape.lulls}, hold-evicted ${w["hold-evicted"]} x${shape.holds}, compact after ${shape.compactAfterWalObjects} WAL objects`;
}

interface ResidencyDeps {
  readonly cluster: SimCluster;
  readonly meta: SimMetaLog;
  readonly world: World;
  readonly chaos: Chaos;
  readonly operator: Operator;
  readonly history: History;
  readonly trace: Trace;
  readonly prng: Prng;
  readonly now: () => number;
  readonly leaseTtlMs: number;
}

interface EvictedStream {
  readonly id: string;
  readonly name: string;
  readonly epoch: number;
}

interface Lull {
  readonly untilMs: number;
  /** Steps taken in it. */
  steps: number;
  /** The node held down during it, when, and its evicted streams then. */
  held: { readonly nodeId: string; readonly atMs: number; readonly streams: readonly EvictedStream[] } | null;
}

export class ResidencyScenario implements Actor {
  readonly name = "residency";
  private lullsLeft: number;
  private holdsLeft: number;
  private lull: Lull | null = null;
  /** Steps of the active phase taken during a lull. */
  lullSteps = 0;
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
    this.lullsLeft = shape.lulls;
    this.holdsLeft = shape.holds;
  }

  choices(phase: Phase): readonly Choice[] {
    this.readWrites();
    this.endLull(phase);
    if (phase !== "active") return [];
    if (this.lull !== null) {
      this.lull.steps++;
      this.lullSteps++;
    }
    const moves: Choice[] = [];
    if (this.lull === null && this.lullsLeft > 0) {
      moves.push({ category: "lull", label: "the stream clients pause (a lull)", run: () => this.beginLull() });
    }
    const candidates = this.holdsLeft > 0 ? this.nodesHoldingEvicted() : [];
    if (candidates.length > 0) {
      moves.push({
        category: "hold-evicted",
        label: "crash a node that holds evicted streams and keep it down past the lease",
        run: () => this.hold(this.deps.prng.pick(candidates)),
      });
    }
    return moves;
  }

  private beginLull(): void {
    const { world, prng, now, trace } = this.deps;
    this.lullsLeft--;
    const forMs = prng.pick(LULL_MS);
    this.lull = { untilMs: now() + forMs, steps: 0, held: null };
    for (const stream of world.streams) world.quiet.add(stream);
    this.deps.operator.paused = true;
    trace.write(`  residency: the stream clients pause for up to ${forMs} ms`);
  }

  /** The lull over: its time passed (no hold), the held node's evicted streams reopened elsewhere, a few leases after the hold, or the active phase over. */
  private endLull(phase: Phase): void {
    const lull = this.lull;
    if (lull === null) return;
    const now = this.deps.now();
    let why: string | null = phase === "active" ? null : "the active phase is over";
    if (lull.held === null && now >= lull.untilMs) why = "its time is up";
    if (lull.steps >= LULL_MAX_STEPS) why = `${LULL_MAX_STEPS} steps passed`;
    if (lull.held !== null) {
      if (lull.held.streams.every((stream) => this.reopened(stream))) why = `the evicted streams of ${lull.held.nodeId} were reopened`;
      else if (now >= lull.held.atMs + LEASES_AFTER_HOLD * this.deps.leaseTtlMs) why = `${LEASES_AFTER_HOLD} leases passed since the hold`;
    }
    if (why === null) return;
    this.lull = null;
    this.deps.world.quiet.clear();
    this.deps.operator.paused = false;
    if (phase === "active") this.deps.trace.write(`  residency: the stream clients resume (${why})`);
  }

  /** The log has the stream opened again since (by its new owner, or by its node back from the dead), or gone. */
  private reopened(stream: EvictedStream): boolean {
    const record = this.deps.meta.service.state.streams.get(stream.id);
    return record === undefined || (record.ownership === "opened" && record.epoch > stream.epoch);
  }

  private hold(nodeId: string): void {
    this.holdsLeft--;
    const streams = this.evictedOn(nodeId);
    this.deps.trace.write(`  residency: ${nodeId} holds evicted ${streams.map((stream) => `${stream.name} (${stream.id} at ${stream.epoch})`).join(", ")}`);
    if (this.lull !== null && this.lull.held === null) this.lull.held = { nodeId, atMs: this.deps.now(), streams };
    this.deps.chaos.holdDown(nodeId);
  }

  /** The object store's writes since the last step: the latest manifest of each stream, each node's last checkpoint. */
  private readWrites(): void {
    const writes = this.deps.history.writes;
    for (; this.writesRead < writes.length; this.writesRead++) {
      const write = writes[this.writesRead]!;
      const manifest = /^streams\/([^/]+)\/manifest$/.exec(write.key);
      if (manifest !== null) {
        const streamId = decodeURIComponent(manifest[1]!);
        if (manifestKey(streamId) !== write.key) continue;
        try {
          this.manifests.set(streamId, { at: this.writesRead, manifest: decodeManifest(write.body, write.key, streamId) });
        } catch {
          // A corrupt manifest is the node's to find (and the run's to fail on): not a hold candidate.
          this.manifests.delete(streamId);
        }
        continue;
      }
      const checkpoint = /^nodes\/([^/]+)\/checkpoint$/.exec(write.key);
      if (checkpoint !== null) {
        const nodeId = decodeURIComponent(checkpoint[1]!);
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
   * Streams the log has opened by `nodeId` whose manifest holds an eviction's session (no close) at that
   * epoch, written before the node's last checkpoint (a compaction since: its WAL replay no longer knows
   * them), and which its running incarnation does not hold, open or reload.
   */
  private evictedOn(nodeId: string): EvictedStream[] {
    const inc = this.runningIncarnation(nodeId);
    if (inc === null) return [];
    const ctx = inc.runtime!.ctx;
    const checkpointAt = this.checkpoints.get(nodeId) ?? -1;
    const found: EvictedStream[] = [];
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
}
