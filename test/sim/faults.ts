// Faults, decided when the scheduler completes an operation (never in advance), from a per-seed profile.
// Each seed draws its own profile ("swarm testing": some seeds have no faults at all, some a storm of
// them, most something between), so the same bounded number of steps explores very different worlds.
//
// Object store: `fail` (nothing happens, the caller gets a retryable error), `lost` (the write takes
// effect, the caller gets a retryable error: it cannot tell the two apart), `delay` (the store waits on a
// virtual timer before acting). Metadata calls: `fail` and `lost` the same way (a Durable Object RPC that
// broke before or after the MetaLog applied it). Either kind may also have its answer held back as a
// separate step (`split`), so a crash can fall between the effect and the caller hearing of it.
// Seeds that run the guard scenarios (guard-scenarios.ts) also aim faults at single calls: `targeted`.
import type { StoreOperation } from "../../src/storage/memory-store.ts";
import type { Prng } from "./prng.ts";

export type StoreFault = { readonly kind: "none" | "fail" | "lost" } | { readonly kind: "delay"; readonly delayMs: number };
export type MetaFault = "none" | "fail" | "lost";

export interface FaultProfile {
  readonly storeFail: number;
  readonly storeLost: number;
  readonly storeDelay: number;
  readonly metaFail: number;
  readonly metaLost: number;
  /** Probability that an answer is delivered in a later step than the effect. */
  readonly split: number;
}

const CALM: FaultProfile = { storeFail: 0, storeLost: 0, storeDelay: 0, metaFail: 0, metaLost: 0, split: 0 };

export function drawFaultProfile(prng: Prng): FaultProfile {
  const level = prng.pick(["calm", "light", "light", "moderate", "moderate", "storm"] as const);
  const scale = { calm: 0, light: 0.01, moderate: 0.04, storm: 0.15 }[level];
  const jitter = (): number => scale * (0.5 + prng.float());
  return {
    storeFail: jitter(),
    storeLost: jitter(),
    storeDelay: jitter(),
    metaFail: jitter() / 3,
    metaLost: jitter() / 3,
    split: prng.pick([0, 0.1, 0.3]),
  };
}

/**
 * Faults aimed at one call, decided when the scheduler picks it (before the profile's fault is drawn).
 * Set only on seeds that run the guard scenarios (guard-scenarios.ts).
 */
export interface TargetedFaults {
  /**
   * A metadata call from `owner` arriving: `late` keeps it (the caller hears a timeout now, `deliverLate`
   * makes it arrive later, its answer going nowhere), `fail` fails it (not applied); null: as usual.
   */
  meta(owner: string, label: string, subject: object | undefined, deliverLate: () => void): "late" | "fail" | null;
  /** An object-store request from `owner` about to reach the store: true when held back (`land` sends it later). */
  store(owner: string, op: StoreOperation, key: string, body: Uint8Array | undefined, land: () => void): boolean;
}

export class FaultPlan {
  private healed = false;
  /** Faults aimed at single calls (the guard scenarios); null on most seeds. */
  targeted: TargetedFaults | null = null;

  constructor(
    private readonly prng: Prng,
    readonly profile: FaultProfile,
  ) {}

  /** No more faults from now on (the settle phase). */
  heal(): void {
    this.healed = true;
  }

  private get active(): FaultProfile {
    return this.healed ? CALM : this.profile;
  }

  store(): StoreFault {
    const p = this.active;
    const x = this.prng.float();
    if (x < p.storeFail) return { kind: "fail" };
    if (x < p.storeFail + p.storeLost) return { kind: "lost" };
    if (x < p.storeFail + p.storeLost + p.storeDelay) return { kind: "delay", delayMs: this.prng.between(1, 400) };
    return { kind: "none" };
  }

  meta(): MetaFault {
    const p = this.active;
    const x = this.prng.float();
    if (x < p.metaFail) return "fail";
    if (x < p.metaFail + p.metaLost) return "lost";
    return "none";
  }

  /** A webhook delivery that gets no answer (the receiver down or the connection lost). */
  webhookDropped(): boolean {
    return this.prng.chance(this.healed ? 0 : Math.min(0.3, 0.05 + 2 * this.profile.storeFail));
  }

  split(): boolean {
    return this.prng.chance(this.active.split);
  }
}
