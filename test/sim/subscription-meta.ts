// The MetaLog's subscriptions in the simulation: the real SubscriptionService (src/metadata/subscriptions)
// over an in-memory book that records every row it writes, its lease alarm on a virtual timer, and the way
// effects leave a process: `fetchFor(owner)` routes a webhook to the webhook consumer as a pending network
// operation (dropped now and then by the fault plan, delayed by its latency, refused when its sender
// crashed) and a wake-stream append through the simulated network to a node. Wake ids and tokens are
// counters and the signing key a stand-in (no WebCrypto thread-pool work escapes the scheduler): the same
// seed gives the same trace.
import { SubscriptionService } from "../../src/metadata/subscriptions/subscription-service.ts";
import { MemorySubscriptionStorage, type SubscriptionRow } from "../../src/metadata/subscriptions/subscription-storage.ts";
import type { WebhookKeyMaker } from "../../src/metadata/subscriptions/signing-keys.ts";
import type { SubscriptionRecord } from "../../src/core/subscriptions/index.ts";
import type { PreparedEffect } from "../../src/ports/meta-log-client.ts";
import { appendWakeEventByFetch, performSubscriptionEffects } from "../../src/subscriptions/effects.ts";
import type { FaultPlan } from "./faults.ts";
import type { History } from "./history.ts";
import type { IoQueue } from "./scheduler.ts";
import { offsetBytes } from "./subscription-history.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

/** Where the webhook consumer listens. */
export const HOOK_ORIGIN = "https://hooks.sim.example";

/** The part of the simulated network a wake-stream append uses (network.ts). */
export interface WakeNetwork {
  readonly origin: string;
  request(
    client: string,
    request: { method: string; path: string; headers?: Record<string, string>; body?: string },
  ): Promise<{ readonly status: number; readonly headers: Headers; readonly text: string; readonly error: string | null }>;
}

/** What the webhook consumer answers: a status and a body, or null for no answer at all. */
export interface WebhookReceiver {
  receive(rawBody: string): { readonly status: number; readonly body: string } | null;
}

const SIM_KEYS: WebhookKeyMaker = {
  generate: () => Promise.resolve({ kid: "ds_sim", x: "sim-x", d: "sim-d" }),
  signer: (stored) =>
    Promise.resolve({
      kid: stored.kid,
      publicJwk: { kty: "OKP", crv: "Ed25519", x: stored.x, kid: stored.kid, use: "sig", alg: "EdDSA" },
      sign: (_raw: string, nowMs: number) => Promise.resolve(`t=${Math.floor(nowMs / 1000)},kid=${stored.kid},ed25519=sim`),
    }),
};

class RecordingStorage extends MemorySubscriptionStorage {
  constructor(
    private readonly history: History,
    private readonly trace: Trace,
  ) {
    super();
  }

  override write(row: SubscriptionRow): void {
    super.write(row);
    const record = JSON.parse(row.record) as SubscriptionRecord;
    const links = record.links.map((l) => ({ path: l.path, acked: offsetBytes(l.ackedOffset), tail: offsetBytes(l.tailOffset) }));
    this.history.subscriptions.rows.push({ step: this.trace.currentStep, id: record.id, generation: record.generation, wakeGeneration: record.wake?.generation ?? null, links });
    const wake = record.wake === null ? "idle" : `wake g${record.wake.generation}${record.wake.holder === null ? "" : ` held by ${record.wake.holder}`}`;
    this.trace.write(`  subscription ${record.id} ${wake}: ${links.map((l) => `${l.path} ${l.acked}/${l.tail}`).join(", ")}`);
  }
}

export class SimSubscriptions {
  readonly service: SubscriptionService;
  /** Set once the network exists (it needs the cluster, which needs the metadata log). */
  net: WakeNetwork | null = null;
  hook: WebhookReceiver | null = null;
  private alarm: { atMs: number; handle: number } | null = null;
  /** Webhook deliveries not answered yet: failed when the seed ends, so nothing waits past it. */
  private readonly unanswered = new Set<(why: string) => void>();
  private ids = 0;

  constructor(
    private readonly deps: { readonly clock: VirtualClock; readonly io: IoQueue; readonly faults: FaultPlan; readonly trace: Trace; readonly history: History },
  ) {
    const limits = { maxSubscriptions: 100, maxSubscriptionStreams: 1_000, maxSubscriptionBookBytes: 1 << 24 };
    this.service = new SubscriptionService(new RecordingStorage(deps.history, deps.trace), {
      limits,
      onDeadline: (deadlineMs) => this.setAlarm(deadlineMs),
      now: () => deps.clock.now(),
      freshWakeId: () => `wk${++this.ids}`,
      freshToken: () => `tok${++this.ids}`,
      keyMaker: SIM_KEYS,
    });
  }

  /** The fetch of one sender (an incarnation, the MetaLog, the Worker); `crashed` stops what it sends. */
  fetchFor(owner: string, crashed: () => boolean = () => false): typeof fetch {
    return (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (crashed()) return Promise.reject(new Error(`sim: ${owner} crashed, nothing leaves it`));
      if (url.origin === this.net?.origin) return this.viaNetwork(owner, url, init);
      if (url.origin === HOOK_ORIGIN) return this.toHook(owner, url, init, crashed);
      return Promise.reject(new Error(`sim: no route to ${url.origin}`));
    };
  }

  /** Performs effects as the MetaLog's alarm or the Worker does (failures are logged and dropped). */
  perform(owner: string, effects: readonly PreparedEffect[]): Promise<void> {
    if (effects.length === 0) return Promise.resolve();
    const doFetch = this.fetchFor(owner);
    return performSubscriptionEffects(effects, {
      appendWakeEvent: (effect) => appendWakeEventByFetch(effect, doFetch),
      webhookReplied: async (id, ref, done) => (await this.service.webhookReplied(id, ref, done)).effects,
      fetch: doFetch,
    });
  }

  /** The seed ends: every delivery still on its way fails (effects.ts counts deliveries per host across seeds). */
  close(): void {
    for (const fail of [...this.unanswered]) fail("the seed ended");
  }

  /** `work`, failed by `close` if it has not settled by then (a webhook reply a crashed node still waits on). */
  guard<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (why: string): void => {
        this.unanswered.delete(fail);
        reject(new Error(why));
      };
      this.unanswered.add(fail);
      work.then(
        (value) => {
          if (this.unanswered.delete(fail)) resolve(value);
        },
        (error: unknown) => {
          if (this.unanswered.delete(fail)) reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  private setAlarm(deadlineMs: number | null): void {
    if (deadlineMs === null) return;
    if (this.alarm !== null && this.alarm.atMs <= deadlineMs) return;
    const { clock } = this.deps;
    if (this.alarm !== null) clock.cancel(this.alarm.handle);
    const handle = clock.schedule(deadlineMs - clock.now(), () => void this.fire(), null, "subscription alarm");
    this.alarm = { atMs: deadlineMs, handle };
  }

  private async fire(): Promise<void> {
    this.alarm = null;
    const effects = await this.service.settleDue(this.deps.clock.now());
    await this.perform("metalog", effects);
  }

  private async viaNetwork(owner: string, url: URL, init: RequestInit | undefined): Promise<Response> {
    if (this.net === null) throw new Error("sim: no network yet");
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const body = typeof init?.body === "string" ? init.body : undefined;
    const answer = await this.net.request(`wake-append ${owner}`, { method: init?.method ?? "GET", path: `${url.pathname}${url.search}`, headers, ...(body === undefined ? {} : { body }) });
    if (answer.status === 0) throw new Error(answer.error ?? "no answer");
    return new Response([204, 304].includes(answer.status) ? null : answer.text, { status: answer.status, headers: answer.headers });
  }

  private toHook(owner: string, url: URL, init: RequestInit | undefined, crashed: () => boolean): Promise<Response> {
    const rawBody = typeof init?.body === "string" ? init.body : "";
    return new Promise<Response>((resolve, reject) => {
      const fail = (why: string): void => {
        this.unanswered.delete(fail);
        reject(new Error(`webhook from ${owner}: ${why}`));
      };
      this.unanswered.add(fail);
      this.deps.io.add({
        kind: "net",
        owner,
        label: `webhook POST ${url.pathname}`,
        run: () => {
          if (!this.unanswered.has(fail)) return;
          if (crashed()) return fail("its sender crashed");
          const reply = this.deps.faults.webhookDropped() ? null : (this.hook?.receive(rawBody) ?? null);
          this.deps.trace.write(`  webhook from ${owner} <- ${reply === null ? "no answer" : `${reply.status} ${reply.body}`}`);
          if (reply === null) return fail("no answer");
          this.unanswered.delete(fail);
          resolve(new Response(reply.body, { status: reply.status, headers: { "content-type": "application/json" } }));
        },
      });
    });
  }
}
