// Start-up of one incarnation, before any request is served: register with the metadata log at this
// epoch (taking over its own dead past first, if the log declared it dead), fence (seal) and replay the
// node's own WAL chain, open a WAL writer above the seal, build the context every path shares, attach forks
// to their sources, then start the transfer watcher, subscription delivery and the coordinator role. If the
// WAL writer stops (fenced, or the store kept failing) the incarnation acknowledges nothing more and tells
// its shell, which replaces it with a new one.
import type { DomainError } from "../../core/errors.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import type { TabletStorage } from "../../ports/tablet-storage.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { WalWriter } from "../../storage/wal-writer.ts";
import { WalFencedError } from "../../storage/wal-writer-bounds.ts";
import { createLogger, type Logger, type LogSink } from "../../log/logger.ts";
import { KeyedWaiters } from "../../waits/keyed-waiters.ts";
import type { NodeContext, ViewPort, WalPort } from "../context.ts";
import type { NodeSettings } from "../settings.ts";
import { KeyedLock } from "../state/keyed-lock.ts";
import { LiveSlots } from "../state/live-slots.ts";
import { manifestObjects, StreamObjectCache } from "../state/object-cache.ts";
import { asDomainError } from "../state/replies.ts";
import { countAcknowledged, meteredStore, newNodeMeters, type NodeMeters } from "../state/store-metrics.ts";
import { StreamRegistry } from "../state/stream-registry.ts";
import { recoverNode, type RecoveryResult } from "../streams/recovery.ts";
import { attachMissingSources } from "../ownership/adopt.ts";
import { takeOverOwnPast } from "../ownership/takeover-use.ts";
import { TransferWatcher } from "../ownership/transfer-watcher.ts";
import { TableBuckets, type TableContext } from "../tables/buckets.ts";
import { CoordinatorRole } from "../coordinator/role.ts";
import type { ChangelogPeers } from "../coordinator/tiering.ts";
import { selfLeaseMs } from "./heartbeat.ts";
import { subscriptionDelivery } from "./subscription-delivery.ts";

/** The part of the metadata log a node uses. */
export type NodeMetaPort = Pick<
  MetaLogClient,
  | "propose"
  | "lookupStream"
  | "lookupTable"
  | "createTable"
  | "addPartition"
  | "listTables"
  | "watchDuties"
  | "heartbeat"
  | "coordinatorTick"
  | "collectable"
  | "onStreamAppended"
  | "onWebhookReply"
  | "watchSubscriptions"
>;

export interface NodeRuntimeDeps {
  readonly nodeId: string;
  /** This incarnation's epoch: the wall clock at its start (docs/node.md), so every start is newer. */
  readonly nodeEpoch: number;
  /** The address the node advertises (`<origin>/n/<id>`). */
  readonly addr: string;
  readonly settings: NodeSettings;
  readonly store: ObjectStore;
  /** Where this node keeps the tablets of the table buckets it leads (SQLite in the Durable Object). */
  readonly tablets: TabletStorage;
  readonly meta: NodeMetaPort;
  /** Cached lookups of the metadata log (the shell decides how long they are trusted). */
  readonly view: ViewPort;
  readonly now: () => number;
  /** Monotonic ms for latencies (performance.now in workerd and Node; virtual time in the simulation). */
  readonly clockMs: () => number;
  readonly random: () => number;
  /** Where the node's structured log lines go (the console in workerd; tests capture them). */
  readonly logSink: LogSink;
  /** Keeps background work alive past the response (waitUntil in workerd). */
  readonly background: (work: Promise<unknown>) => void;
  /** Called once when the WAL writer stopped: the shell must replace this incarnation. */
  readonly onStopped: (error: DomainError) => void;
  /** How subscription effects reach webhooks and other nodes' wake streams (default: the global fetch; the simulation's network). */
  readonly effectsFetch?: typeof fetch;
  /** Where this node tiers tables (`s3://<bucket>`) and how it reads other leaders' buckets (docs/tiering.md); absent: it does not tier. */
  readonly tiering?: { readonly storeUri: string; readonly peers: ChangelogPeers | null };
}

/** What start-up hands the runtime: the context and the parts its jobs drive. */
export interface Incarnation {
  readonly ctx: TableContext;
  readonly recovery: RecoveryResult;
  readonly wal: WalWriter;
  readonly watcher: TransferWatcher;
  readonly coordinator: CoordinatorRole;
  /** Counters and histograms for /metrics, from the start on (recovery's store requests included). */
  readonly meters: NodeMeters;
}

/** Registers, fences and replays, then serves. Throws when the metadata log refuses the registration. */
export async function startIncarnation(deps: NodeRuntimeDeps): Promise<Incarnation> {
  const { nodeId, nodeEpoch } = deps;
  const log = createLogger(deps.logSink, { node: nodeId, nodeEpoch }, deps.now);
  const registeredAtMs = deps.now();
  const startedMs = deps.clockMs();
  const meters = newNodeMeters(registeredAtMs, deps.clockMs);
  const store = meteredStore(deps.store, meters);
  const dead = await register(deps);
  const registerMs = deps.clockMs() - startedMs;
  // Back from the dead: its old incarnation's chain goes into manifests first (by this node, or by the
  // node that claimed it), so this start replays none of it and opens nothing it no longer owns.
  if (dead !== undefined) {
    const takeoverDeps = { nodeId, nodeEpoch, store, meta: deps.meta, now: deps.now, claimTtlMs: deps.settings.leaseTtlMs, log };
    await takeOverOwnPast(takeoverDeps, { nodeId, nodeEpoch: dead.epoch });
  }
  const objects = new StreamObjectCache(store);
  const registry = new StreamRegistry((key) => objects.get(key), manifestObjects(store));
  const recoveringMs = deps.clockMs();
  const recovery = await recoverNode(store, registry, nodeId, nodeEpoch, deps.now());
  const recoverMs = deps.clockMs() - recoveringMs;
  const wal = new WalWriter(store, nodeId, nodeEpoch, recovery.sealSeq + 1, {
    batchDeadlineMs: deps.settings.walBatchDeadlineMs,
    maxInFlight: deps.settings.walMaxInFlight,
    now: deps.clockMs,
  });
  const ctx = buildContext(deps, { registry, store, log, meters, registeredAtMs, wal: walPort(wal, meters, () => ctx, deps) });
  ctx.observers.add(subscriptionDelivery(ctx, deps.meta, deps.effectsFetch));
  await attachMissingSources(ctx);
  // Transfers this node takes part in, from now on and left over from before a crash (docs/transfers.md).
  const watcher = new TransferWatcher(ctx, deps.meta);
  deps.background(watcher.run());
  const coordinator = coordinatorRole(deps, store, log);
  log.log("node.start", {
    addr: deps.addr,
    registerMs: roundMs(registerMs),
    recoverMs: roundMs(recoverMs),
    totalMs: roundMs(deps.clockMs() - startedMs),
    tookOverOwnPast: dead === undefined ? null : dead.epoch,
    fromSeq: recovery.fromSeq,
    sealSeq: recovery.sealSeq,
    walObjects: recovery.objectsReplayed,
    walRecords: recovery.recordsReplayed,
    walBytes: recovery.bytesReplayed,
    streams: recovery.streams,
  });
  return { ctx, recovery, wal, watcher, coordinator, meters };
}

/** RegisterNode at this epoch: the dead past the log names for this node, if any. */
async function register(deps: NodeRuntimeDeps): Promise<{ readonly epoch: number } | undefined> {
  const registered = await deps.meta.propose({ type: "RegisterNode", nodeId: deps.nodeId, nodeEpoch: deps.nodeEpoch, addr: deps.addr });
  if (!registered.ok) throw new Error(`RegisterNode refused: ${registered.error.message}`);
  return registered.value.node.dead;
}

/** The WAL writer as the paths see it: a failed append stops the incarnation; an acknowledged one is counted. */
function walPort(wal: WalWriter, meters: NodeMeters, ctx: () => NodeContext, deps: NodeRuntimeDeps): WalPort {
  return {
    get queuedBytes() {
      return wal.queuedBytes;
    },
    append: async (records) => {
      let ack: { seq: number };
      try {
        ack = await wal.append(records);
      } catch (error) {
        stopServing(ctx(), error, deps);
        throw error;
      }
      countAcknowledged(meters, records);
      return ack;
    },
  };
}

interface ContextParts {
  readonly registry: StreamRegistry;
  readonly store: ObjectStore;
  readonly wal: WalPort;
  readonly log: Logger;
  readonly meters: NodeMeters;
  readonly registeredAtMs: number;
}

function buildContext(deps: NodeRuntimeDeps, parts: ContextParts): TableContext {
  return {
    nodeId: deps.nodeId,
    nodeEpoch: deps.nodeEpoch,
    settings: deps.settings,
    registry: parts.registry,
    // Every waiter is an admitted live reader (paths/read.ts, takeLiveSlot): the cap is never reached first.
    readers: new KeyedWaiters(deps.settings.maxLiveReaders),
    liveReaders: new LiveSlots(),
    bodies: { heldBytes: 0 },
    parked: new KeyedWaiters(),
    wal: parts.wal,
    store: parts.store,
    meta: deps.meta,
    view: deps.view,
    locks: new KeyedLock(),
    tables: new TableBuckets(deps.tablets, deps.settings.maxLiveReaders),
    log: parts.log,
    meters: parts.meters,
    observers: new Set(),
    now: deps.now,
    random: deps.random,
    background: deps.background,
    stopped: null,
    // The registration counts as a heartbeat (the log records it as one).
    liveUntilMs: parts.registeredAtMs + selfLeaseMs(deps.settings),
  };
}

function coordinatorRole(deps: NodeRuntimeDeps, store: ObjectStore, log: Logger): CoordinatorRole {
  const { settings } = deps;
  return new CoordinatorRole({
    nodeId: deps.nodeId,
    nodeEpoch: deps.nodeEpoch,
    meta: deps.meta,
    store,
    now: deps.now,
    leaseTtlMs: settings.leaseTtlMs,
    tickMs: settings.coordinatorTickMs,
    maxMovesPerTick: settings.maxReassignPerTick,
    log,
  });
}

export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The WAL writer stopped: acknowledge nothing more, end live readers, tell the shell (once). */
function stopServing(ctx: NodeContext, error: unknown, deps: NodeRuntimeDeps): void {
  if (ctx.stopped !== null) return;
  const stopped = asDomainError(error);
  ctx.stopped = stopped;
  if (error instanceof WalFencedError) ctx.log.log("node.fenced", { code: stopped.code }, error);
  else ctx.log.log("node.stopped", { code: stopped.code }, error);
  ctx.readers.shutdown();
  deps.onStopped(stopped);
}
