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
//
// Latency is not a fault. Every pending operation already has one (scheduler.ts: mostly 1-20 ms, now and
// then up to 5 s), but as a bound only: no timer due after it fires while it is pending, yet the scheduler
// may complete it at once. SIM_S3_LATENCY_MS (and SIM_S3_LATENCY_JITTER_MS) put a floor under every
// object-store request instead, R2's round trip in virtual time, as MINK_S3_LATENCY_MS does for the
// embedded S3 endpoint: a request picked by the scheduler waits that long on a virtual timer before it
// reaches the store (sim-store.ts). Unset (the default, and CI's), nothing changes: not a draw, not a step.
// Set, the checkers stay as they are, and one of their bounds is absolute: the liveness checker's 500 ms
// wake bound, sized for the scheduler's latencies. At 30 ms plus 10 of jitter 2 seeds of 1-500 exceed it,
// both a long-poll woken while its stream was being handed off (ten or so sequential round trips); at a flat
// 30 ms all 500 pass. Fewer appends are acknowledged in the same steps (3,750 against 8,049 over 1-500): each
// store request costs a timer step more; every coverage count stays above its floor (floors.ts), the
// lowest at about half its usual level.
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

/** The floor under each object-store request's latency, in virtual milliseconds: `latencyMs` + a draw below `jitterMs`. */
export interface StoreLatency {
  readonly latencyMs: number;
  readonly jitterMs: number;
}

const MAX_STORE_LATENCY_MS = 60_000;

/** SIM_S3_LATENCY_MS and SIM_S3_LATENCY_JITTER_MS: whole milliseconds from 0 to 60,000; unset or empty is 0. */
export function storeLatencyFromEnv(env: Record<string, string | undefined>): StoreLatency {
  const read = (name: string): number => {
    const text = env[name];
    if (text === undefined || text === "") return 0;
    const ms = Number(text);
    if (!/^[0-9]+$/.test(text) || ms > MAX_STORE_LATENCY_MS) {
      throw new Error(`${name} must be a whole number of milliseconds from 0 to ${MAX_STORE_LATENCY_MS} (got '${text}')`);
    }
    return ms;
  };
  return { latencyMs: read("SIM_S3_LATENCY_MS"), jitterMs: read("SIM_S3_LATENCY_JITTER_MS") };
}

export class FaultPlan {
  private healed = false;
  /** Faults aimed at single calls (the guard scenarios); null on most seeds. */
  targeted: TargetedFaults | null = null;

  constructor(
    private readonly prng: Prng,
    readonly profile: FaultProfile,
    /** Not a fault: it holds in every phase, healed or not. */
    readonly storeLatency: StoreLatency = storeLatencyFromEnv(process.env),
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

  /** How long this object-store request waits before it reaches the store; 0 (no timer) unless a latency is set. */
  storeLatencyMs(): number {
    const { latencyMs, jitterMs } = this.storeLatency;
    return jitterMs === 0 ? latencyMs : latencyMs + this.prng.below(jitterMs);
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
