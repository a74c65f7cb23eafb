// Shared helpers for the subscription core tests: a deterministic context (clock, ids, tokens) and
// configurations built the way the shell would build them.
import { formatOffset } from "../../../src/core/protocol/offsets.ts";
import {
  newSubscription,
  parseSubscriptionConfig,
  type StreamTail,
  type SubscriptionConfig,
  type SubscriptionPutPolicy,
  type SubscriptionRecord,
  type WakeContext,
  type WebhookUrlParts,
} from "../../../src/core/subscriptions/index.ts";

export const ORIGIN = "https://streams.example.com";

/** What the shell passes: WHATWG URL parsing (Node has the same URL as workerd). */
export function splitUrl(raw: string): WebhookUrlParts | null {
  try {
    const url = new URL(raw);
    return {
      scheme: url.protocol.slice(0, -1),
      host: url.hostname,
      origin: url.origin,
      hasCredentials: url.username !== "" || url.password !== "",
    };
  } catch {
    return null;
  }
}

/** What a development deployment allows (WEBHOOK_ALLOW_LOOPBACK=1): the receivers of these tests are on loopback. */
export const DEV_POLICY: SubscriptionPutPolicy = { webhook: { allowLoopback: true, serviceOrigins: [ORIGIN] }, maxStreams: 1_000 };

export function config(body: Record<string, unknown>): SubscriptionConfig {
  const parsed = parseSubscriptionConfig(body, splitUrl, DEV_POLICY);
  if (!parsed.ok) throw new Error(`bad test config: ${parsed.error.message}`);
  return parsed.value;
}

export const off = formatOffset;

/** A context factory: every call gets a new wake id and token, at the time given. */
export function contexts(): (nowMs: number) => WakeContext {
  let n = 0;
  return (nowMs) => {
    n += 1;
    return { nowMs, freshWakeId: `w_${n}`, freshToken: `tok_${n}`, publicOrigin: ORIGIN };
  };
}

export function webhookSub(extra: Record<string, unknown> = {}, known: readonly StreamTail[] = []): SubscriptionRecord {
  const c = config({ type: "webhook", pattern: "events/*", webhook: { url: "http://127.0.0.1:9999/webhook" }, lease_ttl_ms: 1000, ...extra });
  return newSubscription("sub-1", c, 0, known);
}

export function pullSub(extra: Record<string, unknown> = {}, known: readonly StreamTail[] = []): SubscriptionRecord {
  const c = config({ type: "pull-wake", pattern: "events/*", wake_stream: "wake/pool", lease_ttl_ms: 1000, ...extra });
  return newSubscription("pull-1", c, 0, known);
}
