// The guard scenarios (issue 24): moves that make one guard (guards.ts) the only defence against a stale
// actor, where the usual faults always let an earlier defence refuse it first. Each is a targeted fault
// (faults.ts `TargetedFaults`) armed by a move of its own scheduler category, on seeds drawn from a
// generator of their own (the seed mixed with a constant), so a seed without them runs as before:
// - late-proposal: the next CompleteTransfer is held back (its sender times out and retries, so the
//   transfer completes), then arrives once a later transfer of the stream closed it again, its proposer
//   still current: only the completion's own epoch check (CT5) refuses it;
// - paused-coordinator: the lease holder's next tick is held back and its lease calls fail (it pauses as
//   coordinator but heartbeats on, so it is never declared dead) until another coordinator epoch holds the
//   lease; then the tick arrives with its stale coordinator epoch: only table C refuses it. Either another
//   node takes the lease (`other`), or (`self`) the others' AcquireLease calls fail and the paused node,
//   once its lease lapsed, acquires it again at epoch + 1: then only the coordinator epoch tells the
//   stale tick from a current one;
// - sealed-zombie: an incarnation's next WAL data PUT is held, and at that moment it turns zombie (no
//   heartbeat); the PUT lands only once its chain was recovered by someone else (the log records the
//   takeover of its epoch, or a later incarnation of its node finished its start): only the seal that
//   recovery wrote stops it. (Judged by the recovery, not by the seal, so a recovery that forgot to seal
//   lets the PUT land and the checker sees the consequences.)
// - late-put: an incarnation's next WAL data PUT is held past the writer's deadline (the seed's
//   WAL_BATCH_DEADLINE_MS is short); the writer stops, the node restarts (its start seals the chain), then
//   the PUT lands, on the seal.
// Delivering what was held is the `late` category, offered in every phase once it is ripe.
import type { CompleteTransfer, Coordinator } from "../../src/core/meta/index.ts";
import type { StoreOperation } from "../../src/storage/memory-store.ts";
import { decodeWalObject } from "../../src/storage/wal-format.ts";
import type { Incarnation, SimCluster } from "./cluster.ts";
import type { TargetedFaults } from "./faults.ts";
import { guardCounter } from "./guards.ts";
import type { History } from "./history.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase, Weights } from "./scheduler.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";

/** The share of seeds that run the guard scenarios. */
const GUARD_SEEDS = 0.3;
/** The writer's deadline on late-put seeds: short enough to pass within a seed. */
const LATE_PUT_DEADLINE_MS = 2_000;
/** Arms of one scenario per seed. */
const ARMS_PER_SCENARIO = 1;
/** Delivering what was held (any phase). */
export const LATE_WEIGHTS: Weights = { late: 2 };
const SCENARIOS = ["late-proposal", "paused-coordinator", "sealed-zombie", "late-put"] as const;
type Scenario = (typeof SCENARIOS)[number];

export interface GuardShape {
  /** Each scenario's weight (0: not on this seed), and the `late` deliveries'. */
  readonly weights: Weights;
  /** WAL_BATCH_DEADLINE_MS on late-put seeds; null: the default. */
  readonly walDeadlineMs: number | null;
}

export function drawGuardShape(prng: Prng): GuardShape | null {
  if (!prng.chance(GUARD_SEEDS)) return null;
  const weights: Record<string, number> = { ...LATE_WEIGHTS };
  for (const scenario of SCENARIOS) weights[scenario] = prng.chance(0.6) ? prng.pick([0.2, 0.5, 1]) : 0;
  if (SCENARIOS.every((scenario) => weights[scenario] === 0)) weights[prng.pick(SCENARIOS)] = 0.5;
  return { weights, walDeadlineMs: weights["late-put"]! > 0 ? LATE_PUT_DEADLINE_MS : null };
}

export function describeGuardShape(shape: GuardShape): string {
  return SCENARIOS.filter((scenario) => shape.weights[scenario]! > 0)
    .map((scenario) => `${scenario} ${shape.weights[scenario]}`)
    .join(", ");
}

export interface GuardDeps {
  readonly cluster: SimCluster;
  readonly meta: SimMetaLog;
  readonly history: History;
  readonly trace: Trace;
  readonly prng: Prng;
  readonly now: () => number;
  readonly leaseTtlMs: number;
}

interface LateProposal {
  readonly owner: string;
  readonly command: CompleteTransfer;
  readonly deliver: () => void;
}

interface PausedCoordinator {
  readonly inc: Incarnation;
  /** Who holds the lease next: another node, or the paused node itself at a new coordinator epoch. */
  readonly next: "other" | "self";
  /** The tick held back, and when. */
  tick: { readonly coordinator: Coordinator; readonly deliver: () => void; readonly atMs: number } | null;
}

interface HeldPut {
  readonly inc: Incarnation;
  readonly kind: "sealed-zombie" | "late-put";
  readonly key: string;
  readonly land: () => void;
}

export class GuardScenarios implements Actor, TargetedFaults {
  readonly name = "guards";
  private readonly arms = new Map<Scenario, number>();
  private completionsToHold = 0;
  private readonly lateProposals: LateProposal[] = [];
  private paused: PausedCoordinator | null = null;
  /** Incarnations whose next WAL data PUT is to be held, and why. */
  private readonly putArms = new Map<string, { readonly inc: Incarnation; readonly kind: HeldPut["kind"] }>();
  private readonly heldPuts: HeldPut[] = [];

  constructor(private readonly deps: GuardDeps) {}

  choices(phase: Phase): readonly Choice[] {
    const moves = this.deliveries();
    if (phase !== "active") return moves;
    const arm = (scenario: Scenario, label: string, run: () => void): void => {
      if ((this.arms.get(scenario) ?? 0) >= ARMS_PER_SCENARIO) return;
      moves.push({ category: scenario, label, run: () => (this.arms.set(scenario, (this.arms.get(scenario) ?? 0) + 1), run()) });
    };
    if (this.completionsToHold === 0) arm("late-proposal", "hold back the next CompleteTransfer", () => this.completionsToHold++);
    const coordinator = this.running().find((inc) => inc.runtime?.coordinator.coordinatorEpoch != null);
    if (this.paused === null && coordinator !== undefined) {
      arm("paused-coordinator", `pause ${coordinator.label} as coordinator (its next tick held back)`, () => {
        this.paused = { inc: coordinator, next: this.deps.prng.chance(0.5) ? "self" : "other", tick: null };
        this.deps.trace.write(`  guards: the lease goes next to ${this.paused.next === "self" ? `${coordinator.label} again` : "another node"}`);
      });
    }
    const writers = this.running().filter((inc) => this.ownsOpenStream(inc) && !this.putArms.has(inc.label));
    if (writers.length > 0) {
      arm("sealed-zombie", "hold an incarnation's next WAL PUT and turn it zombie", () => this.armPut(this.deps.prng.pick(writers), "sealed-zombie"));
      arm("late-put", "hold an incarnation's next WAL PUT past its deadline", () => this.armPut(this.deps.prng.pick(writers), "late-put"));
    }
    return moves;
  }

  meta(owner: string, label: string, subject: object | undefined, deliverLate: () => void): "late" | "fail" | null {
    if (this.completionsToHold > 0 && label.startsWith("propose CompleteTransfer") && subject !== undefined) {
      this.completionsToHold--;
      this.lateProposals.push({ owner, command: subject as CompleteTransfer, deliver: deliverLate });
      return "late";
    }
    return this.pauseCoordinator(owner, label, subject, deliverLate);
  }

  /**
   * The paused coordinator's tick is held; for up to three leases after it its lease calls fail (its
   * heartbeats go through) until its lease lapsed, and with `self` the other nodes' AcquireLease fail.
   */
  private pauseCoordinator(owner: string, label: string, subject: object | undefined, deliverLate: () => void): "late" | "fail" | null {
    const paused = this.paused;
    if (paused === null) return null;
    if (paused.tick === null) {
      if (owner !== paused.inc.label || label !== "coordinatorTick" || subject === undefined) return null;
      paused.tick = { coordinator: subject as Coordinator, deliver: deliverLate, atMs: this.deps.now() };
      return "late";
    }
    if (this.deps.now() >= paused.tick.atMs + 3 * this.deps.leaseTtlMs || !/^propose (RenewLease|AcquireLease)/.test(label)) return null;
    if (owner === paused.inc.label) return paused.next === "other" || !this.leaseLapsed(paused.tick.coordinator) ? "fail" : null;
    return paused.next === "self" && label.startsWith("propose AcquireLease") ? "fail" : null;
  }

  /** The lease the paused node held at `coordinator`'s epoch has run out (or moved on). */
  private leaseLapsed(coordinator: Coordinator): boolean {
    const lease = this.deps.meta.service.state.lease;
    return lease === null || lease.coordinatorEpoch !== coordinator.coordinatorEpoch || this.deps.now() >= lease.expiresAtMs;
  }

  store(owner: string, op: StoreOperation, key: string, body: Uint8Array | undefined, land: () => void): boolean {
    const armed = this.putArms.get(owner);
    if (armed === undefined || op !== "put" || body === undefined || !key.startsWith("wal/")) return false;
    if (decodeWalObject(body, key).kind !== "records") return false;
    this.putArms.delete(owner);
    this.heldPuts.push({ inc: armed.inc, kind: armed.kind, key, land });
    const runtime = armed.inc.runtime;
    if (armed.kind === "sealed-zombie" && runtime !== null) {
      // Healed long after the takeover (its next heartbeat then learns it was declared dead): until then
      // it runs on, so should the PUT land unfenced its append would be acknowledged.
      runtime.fault = { mode: "zombie" };
      this.deps.cluster.healLater(runtime, 5 * this.deps.leaseTtlMs);
    }
    return true;
  }

  private armPut(inc: Incarnation, kind: HeldPut["kind"]): void {
    this.putArms.set(inc.label, { inc, kind });
  }

  private running(): Incarnation[] {
    const { cluster } = this.deps;
    return cluster.nodeIds.flatMap((id) => cluster.live(id)).filter((inc) => inc.state === "running" && inc.runtime !== null && inc.runtime.fault === null);
  }

  private ownsOpenStream(inc: Incarnation): boolean {
    for (const stream of this.deps.meta.service.state.streams.values()) if (stream.owner === inc.id.nodeId && stream.ownership === "opened") return true;
    return false;
  }

  /** Held calls whose moment came. */
  private deliveries(): Choice[] {
    const moves: Choice[] = [];
    for (const late of this.lateProposals) {
      if (!this.completionIsStale(late.command)) continue;
      moves.push({ category: "late", label: `deliver ${late.owner}'s late CompleteTransfer of ${late.command.streamId} at ${late.command.closedEpoch}`, run: () => this.deliverProposal(late) });
    }
    const tick = this.paused?.tick;
    if (tick != null && this.leaseMovedOn(tick.coordinator)) {
      moves.push({ category: "late", label: `deliver ${this.paused!.inc.label}'s late tick at coordinator epoch ${tick.coordinator.coordinatorEpoch}`, run: () => this.deliverTick() });
    }
    for (const held of this.heldPuts) {
      if (!this.recoveredByAnother(held.inc)) continue;
      moves.push({ category: "late", label: `land ${held.inc.label}'s held WAL PUT ${held.key} (${held.kind})`, run: () => this.landPut(held) });
    }
    return moves;
  }

  /** Closed again at a later epoch, for a later transfer, its proposer still the node's current epoch. */
  private completionIsStale(command: CompleteTransfer): boolean {
    const state = this.deps.meta.service.state;
    const stream = state.streams.get(command.streamId);
    const proposer = command.by === undefined ? undefined : state.nodes.get(command.by.nodeId);
    return (
      stream?.ownership === "closed" &&
      stream.epoch > command.closedEpoch &&
      state.transfers.has(stream.id) &&
      (command.by === undefined || proposer?.epoch === command.by.nodeEpoch)
    );
  }

  /** Another coordinator epoch holds the lease, and the paused node is still registered at its epoch. */
  private leaseMovedOn(coordinator: Coordinator): boolean {
    const state = this.deps.meta.service.state;
    return (state.lease?.coordinatorEpoch ?? 0) > coordinator.coordinatorEpoch && state.nodes.get(coordinator.nodeId)?.epoch === coordinator.nodeEpoch;
  }

  /** The writer's chain was recovered since: its takeover completed, or a later incarnation of its node started. */
  private recoveredByAnother(writer: Incarnation): boolean {
    const { nodeId, epoch } = writer.id;
    if ((this.deps.meta.service.state.nodes.get(nodeId)?.takenOver ?? 0) >= epoch) return true;
    return (this.deps.cluster.incarnations.get(nodeId) ?? []).some((inc) => inc.id.epoch > epoch && inc.runtime !== null);
  }

  private deliverProposal(late: LateProposal): void {
    this.lateProposals.splice(this.lateProposals.indexOf(late), 1);
    late.deliver();
  }

  private deliverTick(): void {
    const tick = this.paused!.tick!;
    this.paused = null;
    tick.deliver();
  }

  private landPut(held: HeldPut): void {
    this.heldPuts.splice(this.heldPuts.indexOf(held), 1);
    // Stopped as unavailable while this PUT, its writer's only one in flight, was on its way: the writer
    // gave up at its deadline (with a deadline it retries nothing else for ever), the node answers 503.
    if (held.kind === "late-put" && /^stopped \(unavailable/.test(held.inc.record.end ?? "")) this.deps.history.count(guardCounter("wal deadline"));
    held.land();
  }
}
