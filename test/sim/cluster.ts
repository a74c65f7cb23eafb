// The simulated cluster: stream nodes in plain Node (NodeRuntime and the node's protocol app, as in the
// node tier) over one MemoryStore and the simulation's metadata log, every store and metadata call of an
// incarnation going through the scheduler. A node has a sequence of incarnations, each at a newer epoch:
// - crash: the incarnation stops at whatever await it is in; its in-flight client requests fail (the
//   connection resets), its calls already sent may still land, nothing it sends later goes out;
// - zombie restart: a new incarnation starts while the old one keeps running and keeps getting some
//   requests (a Durable Object instance that has not noticed it was replaced); fencing must stop it;
// - the incarnation's own stop (its WAL writer fenced or failing) closes it like a crash, as the
//   Durable Object resets itself; it is restarted by a later step.
// A heartbeat loop per incarnation mirrors the Durable Object's alarm: heartbeat (a `stale_epoch` answer
// aborts the incarnation) and compaction when due.
import { fromWorker } from "../support/from-worker.ts";
import { MemoryTabletStorage } from "../support/memory-tablet-storage.ts";
import type { Hono } from "hono";
import { streamRoutes } from "../../src/node-http/stream-routes.ts";
import type { NodeRuntimeDeps } from "../../src/node/runtime/wiring.ts";
import { NodeRuntime } from "../../src/node/runtime/node-runtime.ts";
import { nodeSettings, type SettingsVars } from "../../src/node/settings.ts";
import { ViewCache } from "../../src/router/view-cache.ts";
import type { MemoryStore } from "../../src/storage/memory-store.ts";
import type { FaultPlan } from "./faults.ts";
import { incarnationLabel, type History, type IncarnationId, type IncarnationRecord } from "./history.ts";
import type { Prng } from "./prng.ts";
import type { IoQueue } from "./scheduler.ts";
import type { Gate, SimMetaLog } from "./sim-meta.ts";
import { scheduledStore } from "./sim-store.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";
import { consoleSink } from "../../src/log/logger.ts";
import { CorruptObjectError } from "../../src/storage/record-codec.ts";

export const ORIGIN = "http://127.0.0.1:8787";
/** How long a node trusts a cached lookup (as the Durable Object does). */
const NODE_VIEW_TTL_MS = 1_000;

export interface ClusterDeps {
  readonly clock: VirtualClock;
  readonly prng: Prng;
  readonly io: IoQueue;
  readonly faults: FaultPlan;
  readonly trace: Trace;
  readonly history: History;
  readonly store: MemoryStore;
  readonly meta: SimMetaLog;
  readonly settings: SettingsVars;
  /** Probability that a request for a node goes to an older, still running incarnation. */
  readonly zombieRouting: number;
  /** An incarnation's tiering location and RPC to its peers (table seeds, tiering-peers.ts); absent: it does not tier. */
  readonly tiering?: (inc: Incarnation) => NonNullable<NodeRuntimeDeps["tiering"]>;
}

type IncarnationState = "starting" | "running" | "ended";

export class Incarnation {
  readonly gate: Gate = { crashed: false };
  state: IncarnationState = "starting";
  runtime: NodeRuntime | null = null;
  app: Hono | null = null;
  /** Client requests this incarnation is answering: failed when it dies. */
  readonly inflight = new Set<(reason: string) => void>();
  readonly label: string;
  started!: Promise<boolean>;
  /** Evictions and reloads already counted into the history's coverage. */
  readonly residencyCounted = { evicted: 0, reloaded: 0, handedOff: 0, adoptedFromEviction: 0 };

  /** Whether it crashed, aborted or stopped (read afresh after every await). */
  get ended(): boolean {
    return this.state === "ended";
  }

  constructor(
    readonly id: IncarnationId,
    readonly record: IncarnationRecord,
  ) {
    this.label = incarnationLabel(id);
  }
}

export class SimCluster {
  readonly incarnations = new Map<string, Incarnation[]>();
  private lastEpoch = 0;
  private readonly random: () => number;

  constructor(
    private readonly deps: ClusterDeps,
    readonly nodeIds: readonly string[],
  ) {
    const nodeRandom = deps.prng.fork();
    this.random = () => nodeRandom.float();
    for (const id of nodeIds) this.incarnations.set(id, []);
  }

  /** Incarnations of `nodeId` not ended, oldest first. */
  live(nodeId: string): Incarnation[] {
    return (this.incarnations.get(nodeId) ?? []).filter((inc) => !inc.ended);
  }

  newest(nodeId: string): Incarnation | undefined {
    return this.live(nodeId).at(-1);
  }

  /** Nodes with no incarnation starting or running. */
  downNodes(): string[] {
    return this.nodeIds.filter((id) => this.live(id).length === 0);
  }

  /** Each node's tablets, kept across its restarts (the Durable Object's SQLite survives them). */
  private readonly tablets = new Map<string, MemoryTabletStorage>();

  tabletsOf(nodeId: string): MemoryTabletStorage {
    let tablets = this.tablets.get(nodeId);
    if (tablets === undefined) this.tablets.set(nodeId, (tablets = new MemoryTabletStorage()));
    return tablets;
  }

  /** Starts a new incarnation of `nodeId` at an epoch above every earlier one. */
  start(nodeId: string): Incarnation {
    const { clock, trace, history } = this.deps;
    const epoch = Math.max(clock.now(), this.lastEpoch + 1);
    this.lastEpoch = epoch;
    const id = { nodeId, epoch };
    const record: IncarnationRecord = { id, startedStep: trace.currentStep, endedStep: null, end: null };
    history.incarnations.push(record);
    const inc = new Incarnation(id, record);
    this.incarnations.get(nodeId)!.push(inc);
    trace.write(`  node ${inc.label} starting`);
    inc.started = this.boot(inc);
    return inc;
  }

  private async boot(inc: Incarnation): Promise<boolean> {
    const { clock, meta, trace } = this.deps;
    const { nodeId, epoch } = inc.id;
    const store = scheduledStore({ ...this.deps, base: this.deps.store }, inc.label, inc.gate);
    const port = meta.port(inc.label, inc.gate);
    const viewCache = new ViewCache({ ttlMs: NODE_VIEW_TTL_MS, now: () => clock.now() });
    const settings = nodeSettings(this.deps.settings);
    try {
      const runtime = await NodeRuntime.start({
        nodeId,
        nodeEpoch: epoch,
        addr: `${ORIGIN}/n/${nodeId}`,
        settings,
        store,
        tablets: this.tabletsOf(nodeId),
        meta: port,
        view: {
          lookup: (name, fresh) => viewCache.lookup((n) => port.lookupStream({ name: n }), name, fresh),
          invalidate: (name) => viewCache.invalidate(name),
        },
        now: () => clock.now(),
        clockMs: () => clock.now(),
        logSink: consoleSink,
        random: this.random,
        background: (work) => {
          work.catch((error: unknown) => {
            trace.write(`  node ${inc.label} background work failed: ${String(error)}`);
            this.noteCorruption(inc, error);
          });
        },
        onStopped: (error) => this.end(inc, `stopped (${error.code}: ${error.message})`),
        effectsFetch: meta.subscriptions.fetchFor(inc.label, () => inc.gate.crashed),
        ...(this.deps.tiering === undefined ? {} : { tiering: this.deps.tiering(inc) }),
      });
      if (inc.ended) {
        runtime.watcher.stop();
        return false;
      }
      inc.runtime = runtime;
      // The node's own extension point, called at each acknowledgement in acknowledgement order: the moment
      // itself, not the answer (which the subscription report may hold back).
      runtime.ctx.observers.add((change) => {
        this.deps.history.acknowledged.push({ by: inc.id, stream: change.name, tail: change.tailPositionBytes, step: trace.currentStep });
        return undefined;
      });
      inc.app = streamRoutes(() => runtime.ctx);
      inc.state = "running";
      trace.write(`  node ${inc.label} running (replayed ${runtime.recovery.recordsReplayed} records, seal at ${runtime.recovery.sealSeq})`);
      this.heartbeatLoop(inc, settings.heartbeatMs);
      return true;
    } catch (error) {
      this.noteCorruption(inc, error);
      if (!inc.ended) this.end(inc, `start failed: ${String(error)}`);
      return false;
    }
  }

  /**
   * A corrupt object (a WAL chain with a hole, a checksum that fails) is never a fault the simulation
   * injects: only a bug writes one. The run stops at the first (run-seed.ts) instead of restarting the node
   * until the liveness bound runs out, and the checker names it.
   */
  private noteCorruption(inc: Incarnation, error: unknown): void {
    if (!(error instanceof CorruptObjectError) || this.deps.history.fatal !== null) return;
    const step = this.deps.trace.currentStep;
    this.deps.history.fatal = { step, message: `${inc.label} found a corrupt object at step ${step}: ${error.message}`, focus: [inc.label] };
    this.deps.trace.write(`  FATAL: ${this.deps.history.fatal.message}`);
  }

  /** The Durable Object's alarm: heartbeat, abort on a newer epoch, compact when due. */
  private heartbeatLoop(inc: Incarnation, everyMs: number): void {
    const { clock, trace } = this.deps;
    const beat = async (): Promise<void> => {
      if (inc.ended || inc.runtime === null) return;
      try {
        const outcome = await inc.runtime.beat();
        if (outcome === "replaced") {
          this.end(inc, "aborted: the log refuses its epoch");
          return;
        }
        this.countResidency(inc);
        if (inc.runtime.compactionDue()) {
          // In the background, as the Durable Object's alarm does: heartbeats go on meanwhile.
          trace.write(`  node ${inc.label} compacting`);
          inc.runtime.compact().then(
            (report) => {
              if (report === null) return;
              this.deps.history.count("compaction");
              trace.write(`  node ${inc.label} compacted to seq ${report.snapshotSeq} (${report.streamsCompacted} streams)`);
            },
            (error: unknown) => trace.write(`  node ${inc.label} compaction failed: ${String(error)}`),
          );
        }
      } catch (error) {
        trace.write(`  node ${inc.label} heartbeat round failed: ${String(error)}`);
      }
      if (!inc.ended) clock.schedule(everyMs, () => void beat(), null, `heartbeat ${inc.label}`);
    };
    clock.schedule(everyMs, () => void beat(), null, `heartbeat ${inc.label}`);
  }

  /** Coverage of every incarnation's evictions and reloads not counted yet (the run's end: after the final reads). */
  countAllResidency(): void {
    for (const incs of this.incarnations.values()) for (const inc of incs) this.countResidency(inc);
  }

  /** Coverage: the streams this incarnation evicted and reloaded since the last heartbeat (streams/eviction.ts). */
  private countResidency(inc: Incarnation): void {
    const residency = inc.runtime?.ctx.meters.residency;
    if (residency === undefined) return;
    const names = { evicted: "stream evicted", reloaded: "stream reloaded", handedOff: "evicted stream handed off", adoptedFromEviction: "evicted orphan adopted" } as const;
    for (const kind of Object.keys(names) as (keyof typeof names)[]) {
      for (; inc.residencyCounted[kind] < residency[kind]; inc.residencyCounted[kind]++) this.deps.history.count(names[kind]);
    }
  }

  /** Lifts a zombie fault after `afterMs` (virtual): its next heartbeat learns whether it was declared dead. */
  healLater(runtime: NodeRuntime, afterMs: number): void {
    this.deps.clock.schedule(afterMs, () => (runtime.fault = null), null, `heal zombie ${runtime.ctx.nodeId}@${runtime.ctx.nodeEpoch}`);
  }

  /** Ends an incarnation: crash, abort or stop. Its in-flight client requests fail. */
  end(inc: Incarnation, why: string): void {
    if (inc.ended) return;
    inc.state = "ended";
    inc.gate.crashed = true;
    inc.runtime?.watcher.stop();
    inc.record.endedStep = this.deps.trace.currentStep;
    inc.record.end = why;
    this.deps.history.count(`node ${/^[a-z ]+/.exec(why)?.[0].trim() ?? why}`);
    this.deps.trace.write(`  node ${inc.label} ended: ${why}`);
    for (const fail of [...inc.inflight]) fail(`connection to ${inc.label} reset`);
    inc.inflight.clear();
  }

  /**
   * Delivers a request to a node (its newest incarnation, or now and then an older one still running).
   * Rejects like a lost connection when the node is down or the incarnation dies before it answers.
   */
  async deliver(nodeId: string, request: Request): Promise<{ response: Response; by: IncarnationId; arrivedStep: number }> {
    const live = this.live(nodeId);
    if (live.length === 0) throw new Error(`connection to ${nodeId} refused: node down`);
    const { prng } = this.deps;
    const inc = live.length > 1 && prng.chance(this.deps.zombieRouting) ? prng.pick(live.slice(0, -1)) : live.at(-1)!;
    const arrivedStep = this.deps.trace.currentStep;
    return new Promise((resolve, reject) => {
      const fail = (reason: string): void => reject(new Error(reason));
      inc.inflight.add(fail);
      const answer = async (): Promise<Response> => {
        if (inc.state === "starting" && !(await inc.started)) throw new Error(`${inc.label} failed to start`);
        if (inc.app === null || inc.ended) throw new Error(`connection to ${inc.label} reset`);
        return inc.app.fetch(fromWorker(request));
      };
      answer().then(
        (response) => {
          if (!inc.inflight.delete(fail)) return;
          resolve({ response, by: inc.id, arrivedStep });
        },
        (error: unknown) => {
          if (!inc.inflight.delete(fail)) return;
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }
}
