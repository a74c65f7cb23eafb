// The subscription workload: two subscriptions created at the seed's start (before any node runs, so every
// acknowledged append to a stream they follow must reach them) and their consumers, actors whose moves are
// of the `consumer` category:
// - `hook` follows every stream by the pattern `sim/*` with a webhook: it answers a delivery `{"done": true}`
//   (the synchronous ack), or `{}` and calls back later (all of the wake's tails, or now and then only the
//   first stream's, not done), or refuses it, or forgets it (the lease lapses and the next generation
//   redelivers); deliveries themselves are dropped and delayed by the network (subscription-meta.ts);
// - `puller` follows one or two streams explicitly with pull-wake (wake stream `wake/pull`, which it creates):
//   it claims, then acks everything (done), acks the first stream only, releases, or abandons its lease.
// After the active phase both only make progress (no refusals, partial acks or abandoned leases), so the
// run can check that they caught up. Callbacks, claims, acks and releases are MetaLog calls with the metadata
// faults; the effects they answer are performed as the Worker does.
import { parseSubscriptionConfig, type AckRequest, type ClaimGrant, type StreamInfo, type WebhookBody } from "../../src/core/subscriptions/index.ts";
import type { SubscriptionAnswer } from "../../src/ports/meta-log-client.ts";
import type { History } from "./history.ts";
import { ORIGIN } from "./cluster.ts";
import type { Network } from "./network.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import type { Gate, SimMetaLog } from "./sim-meta.ts";
import { offsetBytes, type LinkState } from "./subscription-history.ts";
import { HOOK_ORIGIN, type WebhookReceiver } from "./subscription-meta.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

export const WAKE_STREAM = "wake/pull";
const HOOK = "hook";
const PULL = "pull";
/** The Worker's calls to the MetaLog never crash (a Worker request that fails is the consumer's to retry). */
const WORKER: Gate = { crashed: false };

export interface ConsumerDeps {
  readonly meta: SimMetaLog;
  readonly net: Network;
  readonly prng: Prng;
  readonly trace: Trace;
  readonly history: History;
  readonly clock: VirtualClock;
}

const linkStates = (streams: readonly StreamInfo[]): LinkState[] =>
  streams.map((s) => ({ path: s.path, acked: offsetBytes(s.acked_offset), tail: offsetBytes(s.tail_offset) }));

/** Creates both subscriptions (the PUTs a client would send), before the nodes start. */
export async function createSubscriptions(deps: ConsumerDeps, streams: readonly string[], leaseTtlMs: number): Promise<void> {
  const { prng, meta, history } = deps;
  const pulled = [...new Set([prng.pick(streams), prng.pick(streams)])].sort();
  const bodies = {
    [HOOK]: { type: "webhook", pattern: "sim/*", webhook: { url: `${HOOK_ORIGIN}/in` }, lease_ttl_ms: leaseTtlMs },
    [PULL]: { type: "pull-wake", streams: pulled, wake_stream: WAKE_STREAM, lease_ttl_ms: leaseTtlMs },
  };
  for (const [id, body] of Object.entries(bodies)) {
    const config = parseSubscriptionConfig(body, (raw) => {
      const url = new URL(raw);
      return { scheme: url.protocol.slice(0, -1), host: url.hostname };
    });
    if (!config.ok) throw new Error(`sim: subscription ${id} refused: ${config.error.message}`);
    const put = await meta.subscriptions.service.put(id, config.value, ORIGIN);
    if (!put.ok) throw new Error(`sim: subscription ${id} not created: ${put.error.message}`);
    history.subscriptions.followed.push({ id, pattern: id === HOOK ? /^sim\/[^/]+$/ : null, streams: id === PULL ? pulled : [] });
  }
}

/** A consumer: one move at a time; `phase` is the scheduler's, so it stops making trouble after the active phase. */
abstract class Consumer implements Actor {
  protected busy = false;
  protected phase: Phase = "active";

  constructor(
    readonly name: string,
    protected readonly deps: ConsumerDeps,
  ) {}

  choices(phase: Phase): readonly Choice[] {
    this.phase = phase;
    if (this.busy) return [];
    return this.moves().map(([label, act]) => ({
      category: "consumer",
      label: `consumer ${this.name} ${label}`,
      run: () => {
        this.busy = true;
        act()
          .catch((error: unknown) => this.deps.trace.write(`  consumer ${this.name} ${label}: ${String(error)}`))
          .finally(() => (this.busy = false));
      },
    }));
  }

  protected abstract moves(): Array<[string, () => Promise<void>]>;

  /** A MetaLog call through the Worker; the effects it answers are performed as the Worker does. */
  protected async ask<T>(label: string, invoke: () => Promise<SubscriptionAnswer<T>>): Promise<SubscriptionAnswer<T>> {
    const { meta } = this.deps;
    const answer = await meta.call(this.name, WORKER, label, invoke);
    this.deps.trace.write(`  consumer ${this.name} ${label}: ${answer.ok ? "ok" : answer.error.code}`);
    this.deps.history.count(`subscription ${label.split(" ")[0]} ${answer.ok ? "ok" : answer.error.code}`);
    void meta.subscriptions.perform("worker", answer.effects);
    return answer;
  }

  protected async sendAcks(subscription: string, ref: { generation: number; wakeId: string; token: string }, streams: readonly StreamInfo[], partial: boolean): Promise<void> {
    const service = this.deps.meta.subscriptions.service;
    const chosen = partial ? streams.slice(0, 1) : streams;
    const request: AckRequest = { wakeId: ref.wakeId, generation: ref.generation, acks: chosen.map((s) => ({ path: s.path, tailOffset: s.tail_offset })), done: !partial };
    const label = `${subscription === HOOK ? "callback" : "ack"} g${ref.generation}${partial ? " partial" : ""}`;
    const acks = chosen.map((s) => ({ path: s.path, offset: offsetBytes(s.tail_offset) }));
    const record = { step: this.deps.trace.currentStep, subscription, generation: ref.generation, acks };
    try {
      const answer = await this.ask(label, () => (subscription === HOOK ? service.callback(HOOK, request, ref.token) : service.ack(PULL, request, ref.token)));
      this.deps.history.subscriptions.acks.push({ ...record, answer: answer.ok ? "ok" : answer.error.code });
    } catch (error) {
      this.deps.history.subscriptions.acks.push({ ...record, answer: `no answer: ${String(error)}` });
    }
  }
}

export class WebhookConsumer extends Consumer implements WebhookReceiver {
  private readonly later: WebhookBody[] = [];

  constructor(deps: ConsumerDeps) {
    super("hook", deps);
  }

  receive(rawBody: string): { status: number; body: string } | null {
    const body = JSON.parse(rawBody) as WebhookBody;
    const { history, prng, trace } = this.deps;
    history.subscriptions.offers.push({ step: trace.currentStep, subscription: HOOK, via: "webhook", generation: body.generation, streams: linkStates(body.streams) });
    const x = prng.float();
    const troubled = this.phase === "active";
    const answer = troubled && x < 0.1 ? "refuse" : x < 0.55 ? "done" : troubled && x > 0.9 ? "forget" : "later";
    history.count(`subscription webhook ${answer}`);
    if (answer === "refuse") return { status: 503, body: "{}" };
    if (answer === "done") return { status: 200, body: '{"done": true}' };
    if (answer === "later") this.later.push(body);
    return { status: 200, body: "{}" };
  }

  protected moves(): Array<[string, () => Promise<void>]> {
    if (this.later.length === 0) return [];
    return [["calls back", () => this.callBack()]];
  }

  private async callBack(): Promise<void> {
    const body = this.later.splice(this.deps.prng.below(this.later.length), 1)[0]!;
    const partial = this.phase === "active" && body.streams.length > 1 && this.deps.prng.chance(0.3);
    const ref = { wakeId: body.wake_id, generation: body.generation, token: body.callback_token };
    await this.sendAcks(HOOK, ref, body.streams, partial);
  }
}

export class PullConsumer extends Consumer {
  private grant: ClaimGrant | null = null;
  private wakeStreamCreated = false;

  constructor(deps: ConsumerDeps) {
    super("puller", deps);
  }

  protected moves(): Array<[string, () => Promise<void>]> {
    if (!this.wakeStreamCreated) return [["creates its wake stream", () => this.createWakeStream()]];
    if (this.grant === null) return [["claims", () => this.claim()]];
    const grant = this.grant;
    const moves: Array<[string, () => Promise<void>]> = [["acks", () => this.ack(grant, false)]];
    if (this.phase !== "active") return moves;
    if (grant.streams.length > 1) moves.push(["acks partly", () => this.ack(grant, true)]);
    moves.push(["releases", () => this.release(grant)], ["abandons its lease", () => this.abandon()]);
    return moves;
  }

  private async createWakeStream(): Promise<void> {
    const answer = await this.deps.net.request(this.name, { method: "PUT", path: `/v1/stream/${WAKE_STREAM}`, headers: { "content-type": "application/json" }, body: "[]" });
    this.wakeStreamCreated = answer.status === 201 || answer.status === 200;
  }

  private async claim(): Promise<void> {
    const answer = await this.ask("claim", () => this.deps.meta.subscriptions.service.claim(PULL, this.name));
    if (!answer.ok) {
      // Nothing to claim (or still held): wait a while, as a worker waits for its next wake event.
      await new Promise<void>((resolve) => this.deps.clock.schedule(500, resolve, null, `backoff ${this.name}`));
      return;
    }
    this.grant = answer.value;
    const { history, trace } = this.deps;
    history.subscriptions.offers.push({ step: trace.currentStep, subscription: PULL, via: "claim", generation: answer.value.generation, streams: linkStates(answer.value.streams) });
  }

  private async ack(grant: ClaimGrant, partial: boolean): Promise<void> {
    if (!partial) this.grant = null;
    await this.sendAcks(PULL, { wakeId: grant.wake_id, generation: grant.generation, token: grant.token }, grant.streams, partial);
  }

  private async release(grant: ClaimGrant): Promise<void> {
    this.grant = null;
    await this.ask(`release g${grant.generation}`, () => this.deps.meta.subscriptions.service.release(PULL, { wakeId: grant.wake_id, generation: grant.generation }, grant.token));
  }

  private abandon(): Promise<void> {
    this.grant = null;
    this.deps.history.count("subscription lease abandoned");
    return Promise.resolve();
  }
}

/** The subscription workload of a seed: its leases and how eager the consumers are (the `consumer` weight). */
export interface SubscriptionShape {
  readonly leaseTtlMs: number;
  readonly weight: number;
}

export function drawSubscriptionShape(prng: Prng, share: number): SubscriptionShape | null {
  if (!prng.chance(share)) return null;
  return { leaseTtlMs: prng.pick([1_000, 2_000, 5_000]), weight: prng.pick([1, 2, 4]) };
}

/**
 * Creates the subscriptions and adds the consumers; `caughtUp` says whether every subscription is idle with
 * nothing pending (its consumers have acknowledged every tail the MetaLog knows).
 */
export async function startSubscriptions(
  deps: ConsumerDeps,
  streams: readonly string[],
  shape: SubscriptionShape,
  addActor: (actor: Actor) => void,
): Promise<{ caughtUp(): boolean }> {
  await createSubscriptions(deps, streams, shape.leaseTtlMs);
  const hook = new WebhookConsumer(deps);
  deps.meta.subscriptions.hook = hook;
  deps.meta.subscriptions.net = { origin: ORIGIN, request: (client, request) => deps.net.request(client, request) };
  addActor(hook);
  addActor(new PullConsumer(deps));
  const service = deps.meta.subscriptions.service;
  return {
    caughtUp: () =>
      [HOOK, PULL].every((id) => {
        const record = service.record(id);
        return record !== null && record.wake === null && record.links.every((link) => link.ackedOffset === link.tailOffset);
      }),
  };
}
