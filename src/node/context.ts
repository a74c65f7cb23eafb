// What the node's paths (create, append, read, delete) share: the registry, the WAL writer, the metadata
// log, the live readers, the settings and the clock. NodeRuntime builds one per incarnation (the Durable
// Object in workerd, the node tier and the simulation in plain Node). Also here: how an acknowledged
// change is announced, and how a path waits for the appends decided before it.
import type { LiveSlots } from "./state/live-slots.ts";
import type { DomainError } from "../core/errors.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { WalRecord } from "../storage/record-codec.ts";
import type { MetaLogClient } from "../ports/meta-log-client.ts";
import type { StreamLookup } from "../core/meta/view.ts";
import { settleWithin, type KeyedWaiters } from "../waits/keyed-waiters.ts";
import type { Logger } from "../log/logger.ts";
import type { KeyedLock } from "./state/keyed-lock.ts";
import { asDomainError } from "./state/replies.ts";
import type { NodeSettings } from "./settings.ts";
import type { NodeMeters } from "./state/store-metrics.ts";
import type { StreamRegistry, StreamState } from "./state/stream-registry.ts";

/** The part of the WAL writer the paths use. */
export interface WalPort {
  append(records: readonly WalRecord[]): Promise<{ seq: number }>;
  /** Bytes appended and not yet acknowledged (the append path refuses more past MAX_WAL_QUEUE_BYTES). */
  readonly queuedBytes: number;
}

/** The part of the metadata log client the paths use. */
type MetaPort = Pick<MetaLogClient, "propose" | "lookupStream" | "lookupTable">;

/** The node's view of the metadata log, for routing: cached lookups by name (src/router/view-cache.ts). */
export interface ViewPort {
  /** What the log says about a name; `fresh` skips the cache. */
  lookup(name: string, fresh?: boolean): Promise<StreamLookup>;
  /** Forget a name after this node changed its record. */
  invalidate(name: string): void;
}

/** An append or close that became durable and visible (for observers such as subscription delivery). */
export interface AcknowledgedChange {
  readonly streamId: string;
  readonly name: string;
  /** The stream's acknowledged tail after it, as a position (format with `formatOffset`). */
  readonly tailPositionBytes: number;
  readonly eof: boolean;
}

export interface NodeContext {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly settings: NodeSettings;
  readonly registry: StreamRegistry;
  readonly readers: KeyedWaiters;
  /** Long-polls waiting and SSE responses open on this node, in all and per token (docs/limits.md). */
  readonly liveReaders: LiveSlots;
  /** Bytes of request bodies held until answered: at most `settings.maxBodyBytesInFlight` (node-http/body-pool.ts). */
  readonly bodies: { heldBytes: number };
  /** Requests parked for a stream being handed here (R2), by name: woken when this node opens it. */
  readonly parked: KeyedWaiters;
  readonly wal: WalPort;
  /** The object store (stream objects and manifests: hand-offs and adoptions read and write them). */
  readonly store: ObjectStore;
  readonly meta: MetaPort;
  readonly view: ViewPort;
  readonly locks: KeyedLock;
  /** Structured log lines, bound to this node and epoch (docs/observability.md). Never on a hot path. */
  readonly log: Logger;
  /** Counters, latency histograms and the recent series for /metrics and GET /admin/series. */
  readonly meters: NodeMeters;
  now(): number;
  /** A uniform draw in [0, 1) (cursor jitter). */
  random(): number;
  /** Keeps background work (removals) alive past the response. */
  background(work: Promise<unknown>): void;
  /**
   * Called after every acknowledged append or close, in acknowledgement order, before readers wake.
   * Observers must not throw; the answer waits (bounded) for the promise one returns. Subscriptions
   * report appends from here.
   */
  readonly observers: Set<(change: AcknowledgedChange) => Promise<unknown> | undefined>;
  /** Set once the WAL writer stopped: the node acknowledges nothing more and must restart. */
  stopped: DomainError | null;
  /**
   * Until when this incarnation may serve without hearing from the metadata log again: the send time of
   * its last acknowledged heartbeat plus `leaseTtlMs − heartbeatMs`. The log declares it dead `leaseTtlMs`
   * after it received that heartbeat, so a node that cannot reach it stops serving first (no stale read
   * from a node whose streams were taken over; writes are fenced by the seal anyway).
   */
  liveUntilMs: number;
}

/** How long an answer waits for the observers' work on its change (a report to the metadata log). */
const OBSERVER_WAIT_MS = 2_000;

/**
 * Tells the observers, then the live readers, that the stream's acknowledged state moved on. Resolves when
 * the observers' work for it is done (at most OBSERVER_WAIT_MS): the append's answer waits for it, so what
 * a client does after the answer (a pull-wake claim) is ordered after the report.
 */
export async function announce(ctx: NodeContext, stream: StreamState): Promise<void> {
  const change = { streamId: stream.id, name: stream.name, tailPositionBytes: stream.tail, eof: stream.eof };
  const work: Promise<unknown>[] = [];
  for (const observe of ctx.observers) {
    try {
      const done = observe(change);
      if (done !== undefined) work.push(done.catch((error: unknown) => ctx.log.log("node.error", { during: "ack_observer", stream: stream.name }, error)));
    } catch (error) {
      ctx.log.log("node.error", { during: "ack_observer", stream: stream.name }, error);
    }
  }
  ctx.readers.notify(stream.id);
  if (work.length > 0) await settleWithin(Promise.all(work), OBSERVER_WAIT_MS);
}

/** Waits until every decided append of the stream is acknowledged; null, or the error to answer with. */
export async function settled(ctx: NodeContext, stream: StreamState): Promise<DomainError | null> {
  try {
    await stream.pending;
    return ctx.stopped;
  } catch (error) {
    return asDomainError(error);
  }
}
