// StreamNode: one owning node, a thin shell over src/node (the paths), src/core (the rules) and
// src/storage (WAL, seal, replay). Identity is the Durable Object's name; the epoch is the wall clock at
// construction, so every start is a new epoch. Start-up, before any request is served: register with
// the metadata log, fence (seal) and replay the node's own WAL chain, open a WAL writer above the seal.
// A heartbeat alarm keeps the node live and awake. If the WAL writer stops (fenced, or the store kept
// failing) the node answers 503 and resets itself, so the next request starts a new incarnation.
import { DurableObject } from "cloudflare:workers";
import type { Hono } from "hono";
import type { Env } from "../src/env.ts";
import { streamRoutes } from "../src/http/stream-routes.ts";
import { compactNode, type CompactionReport } from "../src/node/compaction.ts";
import { attachMissingSources } from "../src/node/adopt.ts";
import { LiveReaders } from "../src/node/live-readers.ts";
import { TransferWatcher } from "../src/node/transfer-watcher.ts";
import { StreamObjectCache } from "../src/node/object-cache.ts";
import { asDomainError, KeyedLock, type NodeContext, type WalPort } from "../src/node/node-context.ts";
import { recoverNode, type RecoveryResult } from "../src/node/recovery.ts";
import { nodeSettings } from "../src/node/settings.ts";
import { nodeObjectStore } from "../src/node/store-factory.ts";
import {
  countAcknowledged,
  countingStore,
  emptyStoreRequestCounts,
  type AppendCounts,
  type NodeMetrics,
} from "../src/node/store-metrics.ts";
import { StreamRegistry } from "../src/node/stream-registry.ts";
import { subscriptionDelivery } from "../src/node/subscription-delivery.ts";
import type { ObjectStore } from "../src/storage/object-store.ts";
import { WalWriter } from "../src/storage/wal-writer.ts";
import { ViewCache } from "../src/router/view-cache.ts";
import { META_LOG_NAME, metaLogClient, type MetaLogClient } from "./meta-log.ts";

const NODE_ID_KEY = "nodeId";

/**
 * How long the node trusts a cached lookup of a stream it holds but has not opened since its start. Names it
 * does not hold are always looked up afresh (node-routing.ts).
 */
const NODE_VIEW_TTL_MS = 1_000;

/** How long a stopped node keeps answering 503 before it resets itself. */
const RESET_AFTER_STOP_MS = 200;

export class StreamNode extends DurableObject<Env> {
  readonly nodeId: string;
  readonly nodeEpoch: number = Date.now();
  /** Null until start-up finished. */
  node: NodeContext | null = null;
  recovery: RecoveryResult | null = null;
  wal: WalWriter | null = null;
  watcher: TransferWatcher | null = null;
  private store: ObjectStore | null = null;
  /** The WAL seq replay starts at (the checkpoint), as far as this incarnation knows. */
  private checkpointSeq = 0;
  private compacting: Promise<CompactionReport> | null = null;
  /** WAL bytes this incarnation had written when its last compaction began. */
  private bytesAtCheckpoint = 0;
  private readonly meta: MetaLogClient;
  private readonly viewCache = new ViewCache({ ttlMs: NODE_VIEW_TTL_MS });
  private readonly app: Hono;
  /** Counters for /metrics, from construction on (recovery's store requests included). */
  private readonly storeRequests = emptyStoreRequestCounts();
  private readonly appendCounts: AppendCounts = { appends: 0, bytes: 0 };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The name comes with requests made through getByName; an alarm wakes the object without it, so the
    // first named start records it.
    const name = ctx.id.name ?? ctx.storage.kv.get<string>(NODE_ID_KEY) ?? null;
    if (name !== null && ctx.id.name !== undefined && ctx.storage.kv.get<string>(NODE_ID_KEY) !== name) {
      ctx.storage.kv.put(NODE_ID_KEY, name);
    }
    this.nodeId = name ?? "";
    this.meta = metaLogClient(env.META_LOG.getByName(META_LOG_NAME));
    this.app = streamRoutes(() => {
      if (this.node === null) throw new Error("node not started");
      return this.node;
    });
    if (name !== null) void ctx.blockConcurrencyWhile(() => this.start());
  }

  override async fetch(request: Request): Promise<Response> {
    if (this.nodeId === "") return new Response("a StreamNode is addressed by name (getByName)", { status: 500 });
    return this.app.fetch(request);
  }

  /** Starts the node (constructor start-up) and says who it is: the router wakes every node with it. */
  ping(): { nodeId: string; nodeEpoch: number; started: boolean } {
    return { nodeId: this.nodeId, nodeEpoch: this.nodeEpoch, started: this.node !== null };
  }

  /** This incarnation's counters and gauges (the Worker's GET /metrics asks every node). */
  metrics(): NodeMetrics {
    const node = this.node;
    let openStreams = 0;
    if (node !== null) for (const stream of node.registry.all()) if (!stream.removed) openStreams++;
    return {
      nodeId: this.nodeId,
      nodeEpoch: this.nodeEpoch,
      started: node !== null,
      appendsAcknowledged: this.appendCounts.appends,
      bytesAppended: this.appendCounts.bytes,
      storeRequests: { ...this.storeRequests },
      walFlushes: this.wal?.stats.objectsWritten ?? 0,
      walBytesWritten: this.wal?.stats.bytesWritten ?? 0,
      openStreams,
      liveReaders: node?.readers.size ?? 0,
      transferSteps: { ...(this.watcher?.stats ?? { handOffs: 0, completions: 0, adoptions: 0, failures: 0 }) },
    };
  }

  override async alarm(): Promise<void> {
    if (this.nodeId === "") {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const beat = await this.meta.heartbeat(this.nodeId, this.nodeEpoch);
    if (!beat.ok && beat.error.code === "stale_epoch") {
      // A newer incarnation registered: this one must not serve again.
      this.ctx.abort("a newer epoch of this node registered");
      return;
    }
    await this.ctx.storage.setAlarm(Date.now() + (this.node?.settings.heartbeatMs ?? 5_000));
    const node = this.node;
    const wal = this.wal;
    const due =
      node !== null &&
      wal !== null &&
      (wal.nextSeq - this.checkpointSeq >= node.settings.compactAfterWalObjects ||
        wal.stats.bytesWritten - this.bytesAtCheckpoint >= node.settings.compactAfterWalBytes);
    if (due) {
      try {
        await this.compact();
      } catch (error) {
        // Nothing is lost: the WAL stays until a compaction lands; the next heartbeat tries again.
        console.error(`node ${this.nodeId}: compaction failed`, error);
      }
    }
  }

  /**
   * Compacts the WAL into stream objects, moves the checkpoint and deletes the WAL below it (one run at
   * a time; a call during a run waits for it). Runs from the heartbeat alarm; tests call it directly.
   */
  async compact(): Promise<CompactionReport | null> {
    const node = this.node;
    const store = this.store;
    if (node === null || store === null || node.stopped !== null) return null;
    if (this.compacting === null) this.bytesAtCheckpoint = this.wal?.stats.bytesWritten ?? 0;
    this.compacting ??= compactNode(node, store)
      .then((report) => {
        this.checkpointSeq = report.snapshotSeq;
        return report;
      })
      .finally(() => {
        this.compacting = null;
      });
    return this.compacting;
  }

  private async start(): Promise<void> {
    const settings = nodeSettings(this.env);
    const store = countingStore(nodeObjectStore(this.env), this.storeRequests);
    const origin = this.env.PUBLIC_ORIGIN ?? "http://127.0.0.1:8787";
    const registered = await this.meta.propose({
      type: "RegisterNode",
      nodeId: this.nodeId,
      nodeEpoch: this.nodeEpoch,
      addr: `${origin}/n/${this.nodeId}`,
    });
    if (!registered.ok) throw new Error(`RegisterNode refused: ${registered.error.message}`);
    const objects = new StreamObjectCache(store);
    const registry = new StreamRegistry((key) => objects.get(key));
    this.recovery = await recoverNode(store, registry, this.nodeId, this.nodeEpoch, Date.now());
    this.store = store;
    this.checkpointSeq = this.recovery.fromSeq;
    const wal = new WalWriter(store, this.nodeId, this.nodeEpoch, this.recovery.sealSeq + 1);
    this.wal = wal;
    const port: WalPort = {
      append: async (records) => {
        let ack: { seq: number };
        try {
          ack = await wal.append(records);
        } catch (error) {
          this.stopServing(error);
          throw error;
        }
        countAcknowledged(this.appendCounts, records);
        return ack;
      },
    };
    this.node = {
      nodeId: this.nodeId,
      nodeEpoch: this.nodeEpoch,
      settings,
      registry,
      readers: new LiveReaders(),
      parked: new LiveReaders(),
      wal: port,
      store,
      meta: this.meta,
      view: {
        lookup: (name, fresh) => this.viewCache.lookup((n) => this.meta.lookupStream({ name: n }), name, fresh),
        invalidate: (name) => this.viewCache.invalidate(name),
      },
      locks: new KeyedLock(),
      observers: new Set(),
      now: () => Date.now(),
      random: () => Math.random(),
      background: (work) => this.ctx.waitUntil(work.catch((error: unknown) => console.error("background work failed", error))),
      stopped: null,
    };
    this.node.observers.add(subscriptionDelivery(this.node, this.meta));
    await attachMissingSources(this.node);
    await this.ctx.storage.setAlarm(Date.now() + settings.heartbeatMs);
    // Transfers this node takes part in, from now on and left over from before a crash (seed 003).
    this.watcher = new TransferWatcher(this.node, this.meta);
    void this.watcher.run();
  }

  /** The WAL writer stopped: acknowledge nothing more, end live readers, and reset shortly. */
  private stopServing(error: unknown): void {
    const node = this.node;
    if (node === null || node.stopped !== null) return;
    node.stopped = asDomainError(error);
    console.error(`node ${this.nodeId} epoch ${this.nodeEpoch} stops serving`, error);
    node.readers.shutdown();
    setTimeout(() => this.ctx.abort("the WAL writer stopped"), RESET_AFTER_STOP_MS);
  }
}
