// Performing the subscription state machine's effects (docs/subscriptions.md). The MetaLog turns the core's
// `send_webhook` / `append_wake_event` into prepared effects: the webhook body serialized once and signed
// there (the private key never leaves the MetaLog), the wake event serialized with the origin of its
// subscription. Whoever receives them (the node that acknowledged the append, the Worker answering a
// callback, the MetaLog's alarm) performs them with `performSubscriptionEffects`: failures are logged and
// dropped, because the lease lapses and the next generation retries.
//
// A delivery follows no redirect (a 3xx is a failed delivery: a public URL must not bounce the signed body
// and its callback token to an address SUB-3 would refuse), and the receiver's reply is read to a bound
// (WEBHOOK_MAX_REPLY_BYTES) and no further: only `{"done": true}` matters in it.
import { workerLog } from "../log/logger.ts";
import { DEFAULT_EDGE_LIMITS } from "../core/edge-limits.ts";
import type { WakeRef } from "../core/subscriptions/wire.ts";
import type { PreparedEffect } from "../ports/meta-log-client.ts";
import { declaredLength, readAtMost } from "./bounded-read.ts";

export interface EffectPorts {
  /** Appends one JSON message to a wake stream; resolves once it is acknowledged (or throws). */
  appendWakeEvent(effect: Extract<PreparedEffect, { kind: "append_wake_event" }>): Promise<void>;
  /** Reports a 2xx webhook reply to the MetaLog; resolves to the effects that step returned. */
  webhookReplied(subscriptionId: string, ref: WakeRef, done: boolean): Promise<readonly PreparedEffect[]>;
  /** Defaults to the global fetch (tests pass their own). */
  fetch?: typeof fetch;
  /** WEBHOOK_MAX_REPLY_BYTES (default 65536): a longer reply is dropped unread past it, and acks nothing. */
  maxReplyBytes?: number;
}

/** A receiver that never answers must not hold the sender forever; its lease lapses anyway. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** A reply can wake the next generation at once; bound the chain one performer follows. */
const MAX_CHAINED_STEPS = 8;
/** Subscriptions whose effects one call performs side by side: a slow receiver holds one lane, not all. */
const MAX_CONCURRENT_LANES = 16;
/**
 * Deliveries in flight to one host from one isolate. A host that never answers (one tenant may aim up to
 * MAX_SUBSCRIPTIONS webhooks at it) holds at most these; more to it are dropped and logged, and their leases
 * lapse and redeliver later, so every other tenant's deliveries go on.
 */
export const MAX_WEBHOOKS_IN_FLIGHT_PER_HOST = 4;
const inFlightByHost = new Map<string, number>();

/**
 * Performs every effect; never throws. The effects of one subscription (or one wake stream) run in order;
 * different subscriptions run side by side, MAX_CONCURRENT_LANES at a time.
 */
export async function performSubscriptionEffects(
  effects: readonly PreparedEffect[],
  ports: EffectPorts,
  depth = 0,
): Promise<void> {
  const lanes = new Map<string, PreparedEffect[]>();
  for (const effect of effects) {
    const key = effect.kind === "send_webhook" ? `s:${effect.subscriptionId}` : `w:${effect.stream}`;
    const lane = lanes.get(key);
    if (lane === undefined) lanes.set(key, [effect]);
    else lane.push(effect);
  }
  const queue = [...lanes.values()];
  const worker = async (): Promise<void> => {
    for (let lane = queue.shift(); lane !== undefined; lane = queue.shift()) await performLane(lane, ports, depth);
  };
  await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT_LANES, queue.length) }, worker));
}

async function performLane(effects: readonly PreparedEffect[], ports: EffectPorts, depth: number): Promise<void> {
  for (const effect of effects) {
    try {
      if (effect.kind === "append_wake_event") {
        await ports.appendWakeEvent(effect);
        continue;
      }
      const next = await sendWithinHostShare(effect, ports);
      if (next.length > 0 && depth < MAX_CHAINED_STEPS) await performSubscriptionEffects(next, ports, depth + 1);
    } catch (error) {
      workerLog.log("subscription.error", { during: effect.kind }, error);
    }
  }
}

async function sendWithinHostShare(effect: Extract<PreparedEffect, { kind: "send_webhook" }>, ports: EffectPorts): Promise<readonly PreparedEffect[]> {
  const host = new URL(effect.url).host;
  const inFlight = inFlightByHost.get(host) ?? 0;
  if (inFlight >= MAX_WEBHOOKS_IN_FLIGHT_PER_HOST) {
    workerLog.log("subscription.error", { during: "send_webhook", host, reason: "host has the most deliveries in flight; dropped, the lease redelivers" });
    return [];
  }
  inFlightByHost.set(host, inFlight + 1);
  try {
    return await sendWebhook(effect, ports);
  } finally {
    const left = (inFlightByHost.get(host) ?? 1) - 1;
    if (left === 0) inFlightByHost.delete(host);
    else inFlightByHost.set(host, left);
  }
}

async function sendWebhook(
  effect: Extract<PreparedEffect, { kind: "send_webhook" }>,
  ports: EffectPorts,
): Promise<readonly PreparedEffect[]> {
  const doFetch = ports.fetch ?? fetch;
  const response = await doFetch(effect.url, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-signature": effect.signature },
    body: effect.rawBody,
    redirect: "manual",
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
  });
  // A 3xx (or the opaque answer some runtimes give a manual redirect, status 0) is a failed delivery.
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel();
    return [];
  }
  const maxBytes = ports.maxReplyBytes ?? DEFAULT_EDGE_LIMITS.webhookMaxReplyBytes;
  const reply = await readAtMost(response.body, maxBytes, { declaredBytes: declaredLength(response.headers) });
  if (!reply.ok) {
    // Dropped: the wake waits for callbacks.
    workerLog.log("subscription.error", { during: "webhook_reply", host: new URL(effect.url).host, maxBytes, reason: "reply too large" });
    return [];
  }
  const text = new TextDecoder().decode(reply.bytes);
  // SUB-4: a 2xx `{"done": true}` acks the wake's snapshot; anything else leaves the wake to callbacks.
  let done = false;
  try {
    const reply: unknown = JSON.parse(text);
    done = typeof reply === "object" && reply !== null && (reply as Record<string, unknown>)["done"] === true;
  } catch {
    done = false;
  }
  if (!done) return [];
  return ports.webhookReplied(effect.subscriptionId, { wakeId: effect.wakeId, generation: effect.generation }, true);
}

/** Appends a wake event through the public stream API (`POST <origin>/v1/stream/<stream>`). */
export async function appendWakeEventByFetch(
  effect: Extract<PreparedEffect, { kind: "append_wake_event" }>,
  doFetch: typeof fetch = fetch,
): Promise<void> {
  const url = `${effect.origin}/v1/stream/${effect.stream.split("/").map(encodeURIComponent).join("/")}`;
  const response = await doFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(effect.authorization === undefined ? {} : { authorization: effect.authorization }) },
    body: effect.rawBody,
  });
  await response.body?.cancel();
  // A missing wake stream is skipped (docs/subscriptions.md); anything else is worth a log line.
  if (!response.ok && response.status !== 404) {
    throw new Error(`wake event append to ${effect.stream} answered ${response.status}`);
  }
}
