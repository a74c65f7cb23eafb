// Long-poll watches of the metadata log: of the view (a delta since a version, or the full view) and of
// one node's duties (its pending transfers and the streams handed to it). A watcher waits for the log's next
// change, bounded by maxWatchMs; MetaLogService wakes them after each accepted entry.
import {
  changesSince,
  checkHeartbeat,
  concernsNode,
  fullChanges,
  handedToNode,
  isHandedTo,
  nodesConcernedBy,
  transferDuties,
  type MetaState,
  type Touched,
  type ViewChanges,
  type ViewDelta,
} from "../core/meta/index.ts";
import type { NodeDuties } from "../ports/meta-log-client.ts";
import { KeyedWaiters } from "../waits/keyed-waiters.ts";

/** The key view watchers wait on: the log's next change. */
const CHANGE = "change";
/** The key a node's duty watchers wait on: an entry that concerns the node. */
const dutiesKey = (nodeId: string): string => `duties:${nodeId}`;

/** What the watches read of the log. */
export interface WatchedLog {
  readonly state: MetaState;
  readonly now: () => number;
  /** A watch's wait: at least 0, at most maxWatchMs. */
  boundedWaitMs(timeoutMs: number): number;
}

export class MetaLogWatches {
  /** Watchers waiting for the next change (one key). */
  private readonly waiters = new KeyedWaiters();

  constructor(
    private readonly log: WatchedLog,
    /** What the entries after `since` up to `upTo` touched, or null when they are no longer retained. */
    private readonly touchedBetween: (since: number, upTo: number) => Touched[] | null,
  ) {}

  /**
   * The log changed by an entry that touched `touched`: wakes every view watcher, and the duty watchers of
   * the nodes the entry concerns (nodesConcernedBy), only those.
   */
  changed(touched: Touched): void {
    this.waiters.notify(CHANGE);
    for (const nodeId of nodesConcernedBy(this.log.state, touched)) this.waiters.notify(dutiesKey(nodeId));
  }

  /**
   * What changed after version `since`: the current records of the nodes and streams touched since then
   * (a delta), or the full view when `since` is older than the retained log or ahead of it. When nothing
   * changed yet, waits up to timeoutMs (bounded by maxWatchMs) for the next change, then answers.
   */
  async watch(since: number, timeoutMs: number): Promise<ViewChanges> {
    if (!Number.isSafeInteger(since) || since < 0) throw new RangeError("since must be a non-negative integer");
    const waitMs = this.log.boundedWaitMs(timeoutMs);
    if (since === this.log.state.version && waitMs > 0) await this.waiters.wait(CHANGE, waitMs);
    return this.changesSince(since);
  }

  /**
   * The watcher loop of a node (docs/transfers.md): the pending transfers it is source or target of, and the streams
   * handed to it since `since` (to open at once). Waits like `watch` when nothing changed since `since`.
   * With `since` 0 (a node's start) or after a gap in the retained log, `handedTo` comes from a scan of
   * every stream, so a target that crashed between a completion and its open still opens at once.
   */
  async watchDuties(nodeId: string, since: number, timeoutMs: number, nodeEpoch?: number): Promise<NodeDuties> {
    if (!Number.isSafeInteger(since) || since < 0) throw new RangeError("since must be a non-negative integer");
    // Duties belong to an incarnation: a superseded one (a zombie) is told so and takes no step.
    const superseded = (): boolean => nodeEpoch !== undefined && checkHeartbeat(this.log.state, nodeId, nodeEpoch) !== null;
    if (superseded()) return { version: this.log.state.version, transfers: [], handedTo: [], superseded: true };
    const deadlineMs = this.log.now() + this.log.boundedWaitMs(timeoutMs);
    // It is woken only by entries that concern its node (`changed`), and each wake-up reads only the
    // entries after the last one it read: a stream passed over as not this node's concern, and touched
    // again later, is read again there (its record is current). Woken by every entry and reading from
    // `since` each time, the watchers took a third of the log's CPU under a stream of creates.
    let scannedTo = since;
    // A wait that ended without a change (its timeout, or the bound on waiters reached) answers at once.
    for (let woken = true; ; ) {
      const state = this.log.state;
      // From the start, or past the retained log: the node's own streams (an index read), never a full view.
      const changes = since === 0 ? null : this.deltaSince(scannedTo);
      scannedTo = state.version;
      const handedTo = changes === null ? handedToNode(state, nodeId) : changes.streams.filter((stream) => isHandedTo(stream, nodeId));
      // Answer at once when a change since `since` concerns this node's transfers (or at the end of the wait,
      // with every pending one: the retry); other changes (the creates and opens of a busy log) do not wake
      // it, so a watcher costs about one call per `timeoutMs` unless it has work.
      const remainingMs = deadlineMs - this.log.now();
      const relevant = changes === null || changes.streams.some((stream) => concernsNode(stream, nodeId));
      if (superseded()) return { version: state.version, transfers: [], handedTo: [], superseded: true };
      if (relevant || remainingMs <= 0 || !woken) return { version: state.version, transfers: transferDuties(state, nodeId), handedTo };
      woken = (await this.waiters.wait(dutiesKey(nodeId), remainingMs)) === "changed";
    }
  }

  /** The records touched after `since`, or null when `since` is not within the retained log. */
  private deltaSince(since: number): ViewDelta | null {
    const state = this.log.state;
    if (since > state.version) return null;
    const touched = since === state.version ? [] : this.touchedBetween(since, state.version);
    return touched === null ? null : changesSince(state, since, touched);
  }

  private changesSince(since: number): ViewChanges {
    const state = this.log.state;
    if (since > state.version) return fullChanges(state, since);
    if (since === state.version) return changesSince(state, since, []);
    const touched = this.touchedBetween(since, state.version);
    return touched === null ? fullChanges(state, since) : changesSince(state, since, touched);
  }
}
