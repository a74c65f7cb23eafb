// The tiering stall (docs/simulation.md, "Tiering"): on some table seeds, a tiering round stalls at the
// coordinator while the lease moves on, as a paused Durable Object would. A targeted fault (faults.ts) holds
// one of its store requests at the moment the scheduler picks it, after the round's heartbeat passed:
// - `read`: its GET of the version hint (the round is about to read the latest version);
// - `commit`: its create-only PUT of a version (its commit, or the fence or first version it writes first).
// From then on the stalled incarnation's lease calls fail (RenewLease, AcquireLease; its node heartbeats go
// on, so it is not declared dead) until another coordinator epoch holds the lease, for three leases at
// most, and the tiering actor, refused, tiers at the new holder, which writes a version of its epoch. Once
// the lease and the tiered table both moved past the stalled round's epoch, the request goes on (the
// `late` category): the read finds a newer epoch's version (table TC, row TC4: `fenced`), the late commit
// finds its version taken (the create-only PUT refused: `stale tiered commit`). Both are guards
// (guards.ts). Holds only in the active phase; the lease calls fail on into the settle phase (three leases at
// most), and what is held is delivered in any phase once its moment came (the final phase waits for it).
import type { StoreOperation } from "../../src/storage/memory-store.ts";
import { tieredVersionHintKey } from "../../src/storage/keys.ts";
import type { Incarnation } from "./cluster.ts";
import type { TargetedFaults } from "./faults.ts";
import { TIERED_VERSION, tieredEpochOf } from "./guards.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import type { GuardDeps } from "./guard-scenarios.ts";
import { SIM_TABLE } from "./table-clients.ts";

/** Stalls per seed at most. */
const MAX_STALLS = 2;

export interface StallDeps extends GuardDeps {
  /** The chance that a tiering request the scenario can hold is held (0: the scenario is off). */
  readonly chance: number;
}

interface Held {
  readonly owner: string;
  readonly kind: "read" | "commit";
  readonly key: string;
  /** The stalled round's coordinator epoch. */
  readonly epoch: number;
  readonly land: () => void;
}

export class TieringStall implements Actor, TargetedFaults {
  readonly name = "tiering-stall";
  private phase: Phase = "active";
  private stalls = 0;
  /** What the next stall holds: the first drawn, the second the other. */
  private next: Held["kind"];
  private readonly held: Held[] = [];
  /** The stalled incarnation whose lease calls fail, until when, and the epoch the lease must pass. */
  private paused: { readonly owner: string; readonly epoch: number; readonly untilMs: number } | null = null;

  constructor(private readonly deps: StallDeps) {
    this.next = deps.prng.chance(0.5) ? "read" : "commit";
  }

  choices(phase: Phase): readonly Choice[] {
    this.phase = phase;
    return this.held
      .filter((held) => this.movedOn(held.epoch))
      .map((held) => ({ category: "late", label: `deliver ${held.owner}'s stalled tiering ${held.kind} of ${held.key} (epoch ${held.epoch})`, run: () => this.deliver(held) }));
  }

  /** Nothing held whose moment came (the final phase waits for these deliveries). */
  get settled(): boolean {
    return !this.held.some((held) => this.movedOn(held.epoch));
  }

  meta(owner: string, label: string): "late" | "fail" | null {
    const paused = this.paused;
    if (paused === null || owner !== paused.owner || !/^propose (RenewLease|AcquireLease)/.test(label)) return null;
    if (this.deps.now() >= paused.untilMs || this.leaseEpoch() > paused.epoch) {
      this.paused = null;
      return null;
    }
    return "fail";
  }

  store(owner: string, op: StoreOperation, key: string, body: Uint8Array | undefined, land: () => void): boolean {
    if (this.phase !== "active" || this.stalls >= MAX_STALLS || this.deps.chance === 0) return false;
    const read = this.next === "read" && op === "get" && key === tieredVersionHintKey(SIM_TABLE);
    const commit = this.next === "commit" && op === "put" && body !== undefined && TIERED_VERSION.test(key);
    if ((!read && !commit) || !this.deps.prng.chance(this.deps.chance)) return false;
    const inc = this.incarnation(owner);
    const epoch = commit ? tieredEpochOf(body) : (inc?.runtime?.coordinator.coordinatorEpoch ?? null);
    if (inc === undefined || epoch === null) return false;
    this.stalls++;
    this.next = read ? "commit" : "read";
    this.held.push({ owner, kind: read ? "read" : "commit", key, epoch, land });
    this.paused = { owner, epoch, untilMs: this.deps.now() + 3 * this.deps.leaseTtlMs };
    this.deps.trace.write(`  tiering stall: ${owner}'s ${op} ${key} held (epoch ${epoch}); its lease calls fail until the lease moves on`);
    return true;
  }

  private incarnation(label: string): Incarnation | undefined {
    const { cluster } = this.deps;
    return cluster.nodeIds.flatMap((id) => cluster.live(id)).find((inc) => inc.label === label && inc.runtime !== null);
  }

  private leaseEpoch(): number {
    return this.deps.meta.service.state.lease?.coordinatorEpoch ?? 0;
  }

  /** The lease, and a version of the tiered table that landed, are both of an epoch above `epoch`. */
  private movedOn(epoch: number): boolean {
    if (this.leaseEpoch() <= epoch) return false;
    return this.deps.history.writes.some((write) => TIERED_VERSION.test(write.key) && tieredEpochOf(write.body) > epoch);
  }

  private deliver(held: Held): void {
    this.held.splice(this.held.indexOf(held), 1);
    held.land();
  }
}

/** Both scenarios' targeted faults: the first's decision, else the second's. */
export function bothTargeted(first: TargetedFaults | null, second: TargetedFaults): TargetedFaults {
  if (first === null) return second;
  return {
    meta: (owner, label, subject, deliverLate) => first.meta(owner, label, subject, deliverLate) ?? second.meta(owner, label, subject, deliverLate),
    store: (owner, op, key, body, land) => first.store(owner, op, key, body, land) || second.store(owner, op, key, body, land),
  };
}
