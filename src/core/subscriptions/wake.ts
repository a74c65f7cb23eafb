// The wake/lease state machine of one subscription (SUB-4, SUB-5, SUB-7; tables in docs/subscriptions.md).
// At most one wake is current. Appends to linked streams create a wake when none is current and work is
// pending; every wake gets the next generation, and a callback, ack or release must name the current
// wake id and generation and bear its token, or it is fenced. A lease lapses at `leaseExpiresAtMs`: the
// wake is dropped and, if work is still pending, the next generation is woken.
//
// Pure: the clock (`nowMs`), fresh wake ids and tokens and the public origin come in through
// `WakeContext`; sending webhooks and appending wake events are effects the shell performs. Rejections
// change nothing beyond the lease check every step starts with (`settleLease`).
import { compareOffsets, OFFSET_START_SENTINEL } from "../protocol/offsets.ts";
import {
  fail,
  ok,
  subscriptionError,
  type Checked,
  type SubscriptionError,
  type SubscriptionErrorCode,
} from "./errors.ts";
import {
  applyAckOffsets,
  hasPendingWork,
  recordTail,
  type StreamTail,
  type SubscriptionRecord,
  type Wake,
} from "./record.ts";
import {
  streamInfos,
  subscriptionUrl,
  type AckReply,
  type AckRequest,
  type ClaimGrant,
  type WakeEvent,
  type WakeRef,
  type WebhookBody,
} from "./wire.ts";

export interface WakeContext {
  readonly nowMs: number;
  /** Unguessable values the shell generated for this step; used only if the step creates a wake or lease. */
  readonly freshWakeId: string;
  readonly freshToken: string;
  /** Where callback URLs point: `https://host`, no trailing slash. */
  readonly publicOrigin: string;
  /** MAX_SUBSCRIPTION_STREAMS: an append links no new stream by pattern past this many links (default: no bound). */
  readonly maxLinks?: number;
}

export type SubscriptionEffect =
  /** POST `body` (serialized once, signed) to `url`; report a 2xx reply with `onWebhookReply`. */
  | { readonly kind: "send_webhook"; readonly url: string; readonly body: WebhookBody }
  /** Append `event` as one JSON message to the pull-wake subscription's wake stream. */
  | { readonly kind: "append_wake_event"; readonly stream: string; readonly event: WakeEvent };

export interface Step<V> {
  readonly state: SubscriptionRecord;
  readonly effects: readonly SubscriptionEffect[];
  readonly result: Checked<V>;
}

function done<V>(state: SubscriptionRecord, effects: readonly SubscriptionEffect[], value: V): Step<V> {
  return { state, effects, result: ok(value) };
}

function refused<V>(
  state: SubscriptionRecord,
  effects: readonly SubscriptionEffect[],
  code: SubscriptionErrorCode,
  message: string,
  details?: SubscriptionError["details"],
): Step<V> {
  return { state, effects, result: { ok: false, error: subscriptionError(code, message, details) } };
}

/**
 * Create the next wake (generation + 1). Webhooks: the lease starts now and the webhook is sent.
 * Pull-wake: the wake waits for a claim; a wake event is appended unless a claim is creating it.
 */
function createWake(record: SubscriptionRecord, ctx: WakeContext, trigger: string | null): Step<null> {
  const generation = record.generation + 1;
  const snapshot = record.links.map((l) => ({ path: l.path, tailOffset: l.tailOffset }));
  const isWebhook = record.config.type === "webhook";
  const wake: Wake = {
    wakeId: ctx.freshWakeId,
    generation,
    snapshot,
    token: isWebhook ? ctx.freshToken : null,
    holder: null,
    leaseExpiresAtMs: isWebhook ? ctx.nowMs + record.config.leaseTtlMs : null,
  };
  const state: SubscriptionRecord = { ...record, generation, wake };
  const effects: SubscriptionEffect[] = [];
  if (isWebhook && record.config.webhookUrl !== null) {
    const body: WebhookBody = {
      subscription_id: record.id,
      wake_id: wake.wakeId,
      generation,
      streams: streamInfos(state),
      callback_url: `${subscriptionUrl(ctx.publicOrigin, record.id)}/callback`,
      callback_token: ctx.freshToken,
    };
    effects.push({ kind: "send_webhook", url: record.config.webhookUrl, body });
  } else if (!isWebhook && record.config.wakeStream !== null && trigger !== null) {
    const event: WakeEvent = { type: "wake", subscription_id: record.id, stream: trigger, generation, ts: ctx.nowMs };
    effects.push({ kind: "append_wake_event", stream: record.config.wakeStream, event });
  }
  return done(state, effects, null);
}

function firstPendingPath(record: SubscriptionRecord): string | null {
  return record.links.find((l) => compareOffsets(l.tailOffset, l.ackedOffset) > 0)?.path ?? null;
}

/** The current wake ends (acked, released, lapsed); wake the next generation if work is still pending. */
function endWake(record: SubscriptionRecord, ctx: WakeContext): Step<boolean> {
  const idle: SubscriptionRecord = { ...record, wake: null };
  if (!hasPendingWork(idle)) return done(idle, [], false);
  const next = createWake(idle, ctx, firstPendingPath(idle));
  return done(next.state, next.effects, true);
}

/** Drop a wake whose lease has lapsed at `ctx.nowMs`. The alarm calls this at `nextDeadlineMs`. */
export function settleLease(record: SubscriptionRecord, ctx: WakeContext): Step<null> {
  const lease = record.wake?.leaseExpiresAtMs ?? null;
  if (lease === null || ctx.nowMs < lease) return done(record, [], null);
  const next = endWake(record, ctx);
  return done(next.state, next.effects, null);
}

/** When the shell must call `settleLease` next, or null. */
export function nextDeadlineMs(record: SubscriptionRecord): number | null {
  return record.wake?.leaseExpiresAtMs ?? null;
}

/**
 * SUB-4/SUB-7: an acknowledged append to `tail.path` (a create with a body counts). Links the stream if
 * the pattern matches; wakes the subscription if nothing is current. `followed` is false (and the state
 * unchanged) when the subscription does not follow the stream.
 */
export function onStreamAppend(
  record: SubscriptionRecord,
  tail: StreamTail,
  ctx: WakeContext,
): Step<{ readonly followed: boolean }> {
  const settled = settleLease(record, ctx);
  const tracked = recordTail(settled.state, tail, ctx.maxLinks);
  if (tracked === null) return done(settled.state, settled.effects, { followed: false });
  if (tracked.wake !== null || !hasPendingWork(tracked)) return done(tracked, settled.effects, { followed: true });
  const woken = createWake(tracked, ctx, tail.path);
  return done(woken.state, [...settled.effects, ...woken.effects], { followed: true });
}

/** SUB-4: the webhook receiver answered 2xx; `{"done": true}` acks every tail of the wake's snapshot. */
export function onWebhookReply(
  record: SubscriptionRecord,
  ref: WakeRef,
  replyDone: boolean,
  ctx: WakeContext,
): Step<{ readonly nextWake: boolean }> {
  const settled = settleLease(record, ctx);
  const wake = settled.state.wake;
  if (!replyDone || wake === null || wake.wakeId !== ref.wakeId || wake.generation !== ref.generation) {
    return done(settled.state, settled.effects, { nextWake: false });
  }
  const next = endWake(applyAckOffsets(settled.state, wake.snapshot), ctx);
  return done(next.state, [...settled.effects, ...next.effects], { nextWake: next.result.ok && next.result.value });
}

/** Fencing: the current wake, its generation and its token, or why not. */
function checkWake(record: SubscriptionRecord, ref: WakeRef, bearer: string | null): Checked<Wake> {
  const wake = record.wake;
  if (wake === null || wake.wakeId !== ref.wakeId || wake.generation !== ref.generation) {
    return fail("stale_wake", "the wake is no longer current", { generation: record.generation });
  }
  if (bearer === null || wake.token === null || bearer !== wake.token) {
    return fail("unauthorized", "missing or wrong token for this wake");
  }
  return ok(wake);
}

function checkAcks(record: SubscriptionRecord, request: AckRequest): Checked<null> {
  for (const ack of request.acks) {
    const stream = ack.path;
    const target = record.links.find((l) => l.path === stream);
    if (target === undefined) return fail("ack_rejected", "the subscription does not follow this stream", { stream });
    const { ackedOffset, tailOffset } = target;
    if (ack.tailOffset === OFFSET_START_SENTINEL) return fail("ack_rejected", "an ack offset must not be -1", { stream });
    if (compareOffsets(ack.tailOffset, ackedOffset) < 0) {
      return fail("ack_rejected", "the ack offset is behind the acked offset", { stream, ackedOffset });
    }
    if (compareOffsets(ack.tailOffset, tailOffset) > 0) {
      return fail("ack_rejected", "the ack offset is past the stream's tail", { stream, tailOffset });
    }
  }
  return ok(null);
}

function requireType<V>(record: SubscriptionRecord, type: "webhook" | "pull-wake"): Step<V> | null {
  if (record.config.type === type) return null;
  return refused(record, [], "invalid", `this is a ${record.config.type} subscription, not ${type}`);
}

/** Apply acks for the current wake; renew its lease, or end it when `done`. */
function acknowledge(
  record: SubscriptionRecord,
  request: AckRequest,
  bearer: string | null,
  ctx: WakeContext,
): Step<AckReply> {
  const settled = settleLease(record, ctx);
  const wake = checkWake(settled.state, request, bearer);
  if (!wake.ok) return { state: settled.state, effects: settled.effects, result: wake };
  const acks = checkAcks(settled.state, request);
  if (!acks.ok) return { state: settled.state, effects: settled.effects, result: acks };
  const acked = applyAckOffsets(settled.state, request.acks);
  if (!request.done) {
    const lease = { ...wake.value, leaseExpiresAtMs: ctx.nowMs + record.config.leaseTtlMs };
    return done({ ...acked, wake: lease }, settled.effects, { ok: true, next_wake: false });
  }
  const next = endWake(acked, ctx);
  const nextWake = next.result.ok && next.result.value;
  return done(next.state, [...settled.effects, ...next.effects], { ok: true, next_wake: nextWake });
}

/** SUB-5: `POST .../callback` of a webhook subscription. */
export function webhookCallback(
  record: SubscriptionRecord,
  request: AckRequest,
  bearer: string | null,
  ctx: WakeContext,
): Step<AckReply> {
  return requireType<AckReply>(record, "webhook") ?? acknowledge(record, request, bearer, ctx);
}

/** SUB-7: `POST .../ack` of a pull-wake subscription. */
export function ackWake(
  record: SubscriptionRecord,
  request: AckRequest,
  bearer: string | null,
  ctx: WakeContext,
): Step<AckReply> {
  return requireType<AckReply>(record, "pull-wake") ?? acknowledge(record, request, bearer, ctx);
}

/**
 * SUB-7: `POST .../claim`. Takes the current wake (creating one if work is pending but none is current,
 * as after an ack followed by an append the shell has not reported yet) and leases it to `worker`.
 */
export function claimWake(record: SubscriptionRecord, worker: string, ctx: WakeContext): Step<ClaimGrant> {
  const wrongType = requireType<ClaimGrant>(record, "pull-wake");
  if (wrongType !== null) return wrongType;
  const settled = settleLease(record, ctx);
  let state = settled.state;
  const holder = state.wake?.holder ?? null;
  if (holder !== null) {
    return refused(state, settled.effects, "already_claimed", "another worker holds this subscription's lease", {
      currentHolder: holder,
      generation: state.generation,
    });
  }
  if (!hasPendingWork(state)) {
    return refused(state, settled.effects, "no_pending_work", "no followed stream has unacknowledged data");
  }
  const effects = [...settled.effects];
  if (state.wake === null) {
    const created = createWake(state, ctx, null);
    state = created.state;
    effects.push(...created.effects);
  }
  const current = state.wake;
  if (current === null) throw new Error("unreachable: a wake was just ensured");
  const leaseExpiresAtMs = ctx.nowMs + record.config.leaseTtlMs;
  const wake: Wake = { ...current, holder: worker, token: ctx.freshToken, leaseExpiresAtMs };
  const claimed: SubscriptionRecord = { ...state, wake };
  return done(claimed, effects, {
    wake_id: current.wakeId,
    generation: current.generation,
    token: ctx.freshToken,
    streams: streamInfos(claimed),
    lease_ttl_ms: record.config.leaseTtlMs,
  });
}

/** SUB-7: `POST .../release` (204): give the lease back without acking; pending work wakes again. */
export function releaseWake(
  record: SubscriptionRecord,
  ref: WakeRef,
  bearer: string | null,
  ctx: WakeContext,
): Step<null> {
  const wrongType = requireType<null>(record, "pull-wake");
  if (wrongType !== null) return wrongType;
  const settled = settleLease(record, ctx);
  const wake = checkWake(settled.state, ref, bearer);
  if (!wake.ok) return { state: settled.state, effects: settled.effects, result: wake };
  const next = endWake(settled.state, ctx);
  return done(next.state, [...settled.effects, ...next.effects], null);
}
