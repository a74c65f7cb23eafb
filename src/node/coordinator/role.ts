// The coordinator role (docs/failover.md). Every node asks for the
// coordinator lease on each heartbeat; the holder renews it and, every `coordinatorTickMs`, runs the tick:
// dead nodes declared, their streams re-led (MetaLogService.coordinatorTick, where the state is, so it
// never acts on a stale view). Every command the tick proposes carries the coordinator epoch, so a holder
// that lost the lease (a zombie, a paused node) is refused at its first command and changes nothing. The
// schedule lives only in memory: a new holder starts from the log's state, with nothing to rebuild but
// the time of its next tick.
import type { DomainError } from "../../core/errors.ts";
import type { Logger } from "../../log/logger.ts";
import type { Coordinator } from "../../core/meta/commands.ts";
import type { CoordinatorTickAnswer, MetaLogClient } from "../../ports/meta-log-client.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { collectRound } from "./stream-gc.ts";

export interface CoordinatorStats {
  /** Ticks this incarnation ran as the lease holder. */
  ticks: number;
  /** Nodes it declared dead (failovers begun). */
  failovers: number;
  /** Deleted streams whose objects its collection loop deleted. */
  streamsCollected: number;
  /** Streams it re-led away from dead nodes. */
  reassigned: number;
  /** Times it acquired the lease (at a new coordinator epoch). */
  leasesAcquired: number;
}

export interface CoordinatorDeps {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly meta: Pick<MetaLogClient, "propose" | "coordinatorTick" | "collectable">;
  /** Where the collection loop deletes the objects of deleted streams. */
  readonly store: ObjectStore;
  readonly now: () => number;
  readonly leaseTtlMs: number;
  readonly tickMs: number;
  readonly maxMovesPerTick: number;
  readonly log: Logger;
}

export class CoordinatorRole {
  readonly stats: CoordinatorStats = { ticks: 0, failovers: 0, reassigned: 0, leasesAcquired: 0, streamsCollected: 0 };
  /** Where the collection loop lists from next (one page per tick). */
  private collectCursor: string | undefined = undefined;
  /** The coordinator epoch while this incarnation believes it holds the lease. */
  private held: number | null = null;
  /** When the held lease expires, as the log last answered. */
  private expiresAtMs = 0;
  private nextTickMs = 0;

  constructor(private readonly deps: CoordinatorDeps) {}

  /** When another node's lease expires, as the log last answered (0: unknown). */
  otherLeaseExpiresAtMs = 0;

  /** The coordinator epoch this incarnation holds the lease at, or null. */
  get coordinatorEpoch(): number | null {
    return this.held;
  }

  /** One heartbeat's worth: renew or acquire the lease, then tick when due. */
  async step(): Promise<CoordinatorTickAnswer | null> {
    await this.holdLease();
    if (this.held === null || this.deps.now() < this.nextTickMs) return null;
    this.nextTickMs = this.deps.now() + this.deps.tickMs;
    const coordinator: Coordinator = { nodeId: this.deps.nodeId, nodeEpoch: this.deps.nodeEpoch, coordinatorEpoch: this.held };
    const answer = await this.deps.meta.coordinatorTick(coordinator, this.deps.maxMovesPerTick);
    this.stats.ticks++;
    if (!answer.ok) {
      this.lost(answer.error);
      return answer;
    }
    this.stats.failovers += answer.declared.length;
    this.stats.reassigned += answer.reassigned;
    if (answer.declared.length > 0 || answer.reassigned > 0) {
      this.deps.log.log("coordinator.declared_dead", { coordinatorEpoch: this.held, declared: answer.declared, reassigned: answer.reassigned });
    }
    // Orphans still waiting: the next tick comes at once rather than a whole tick later.
    if (answer.orphansLeft && answer.reassigned > 0) this.nextTickMs = 0;
    await this.collect(coordinator);
    return answer;
  }

  /** One page of the collection loop; its failures wait for the next tick (nothing is lost by waiting). */
  private async collect(coordinator: Coordinator): Promise<void> {
    try {
      const round = await collectRound(this.deps.store, this.deps.meta, coordinator, this.collectCursor);
      if ("fenced" in round) return;
      this.collectCursor = round.cursor;
      this.stats.streamsCollected += round.streamsCollected;
      if (round.streamsCollected > 0) {
        this.deps.log.log("stream.collected", { coordinatorEpoch: coordinator.coordinatorEpoch, streams: round.streamsCollected, objects: round.objectsDeleted });
      }
    } catch (error) {
      this.deps.log.log("node.error", { during: "collection_round" }, error);
    }
  }

  private async holdLease(): Promise<void> {
    const { nodeId, nodeEpoch, leaseTtlMs: ttlMs } = this.deps;
    if (this.held !== null) {
      // Renewed once half the lease is used up: a log entry per half lease, not per heartbeat.
      if (this.expiresAtMs - this.deps.now() > ttlMs / 2) return;
      const renewed = await this.deps.meta.propose({ type: "RenewLease", nodeId, nodeEpoch, coordinatorEpoch: this.held, ttlMs });
      if (renewed.ok) {
        this.expiresAtMs = renewed.value.lease.expiresAtMs;
        return;
      }
      this.lost(renewed.error);
    }
    const acquired = await this.deps.meta.propose({ type: "AcquireLease", nodeId, nodeEpoch, ttlMs });
    if (!acquired.ok) {
      // Held by another node (or this node is refused: its heartbeat says why). Its expiry lets the shell
      // ask again right when it runs out rather than up to a heartbeat later.
      const expiresAtMs = acquired.error.details?.["expiresAtMs"];
      this.otherLeaseExpiresAtMs = typeof expiresAtMs === "number" ? expiresAtMs : 0;
      return;
    }
    if (acquired.value.lease.coordinatorEpoch !== this.held) {
      this.stats.leasesAcquired++;
      this.nextTickMs = 0;
      this.deps.log.log("coordinator.lease_acquired", { coordinatorEpoch: acquired.value.lease.coordinatorEpoch, expiresAtMs: acquired.value.lease.expiresAtMs });
    }
    this.held = acquired.value.lease.coordinatorEpoch;
    this.expiresAtMs = acquired.value.lease.expiresAtMs;
  }

  private lost(error: DomainError): void {
    if (this.held !== null) this.deps.log.log("coordinator.lease_lost", { coordinatorEpoch: this.held, code: error.code }, error.message);
    this.held = null;
  }
}
