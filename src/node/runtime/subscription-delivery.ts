// Subscription delivery on the node that acknowledged the append (docs/subscriptions.md):
// an acknowledgement observer that reports each acknowledged append (and create with data) to the MetaLog
// and performs the effects it answers: signed webhooks, wake events appended to wake streams.
//
// Ordering: the append's answer waits for the report to reach the MetaLog (bounded: announce in
// context.ts), so a claim sent after the answer is ordered after the report (pull-wake's "append, then
// claim at once"). The effects (webhooks, wake events) run in the background.
import { parseAppendRequest } from "../../core/protocol/append.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";
import type { StreamTail } from "../../core/subscriptions/record.ts";
import type { MetaLogClient, PreparedEffect, SubscriptionSet } from "../../ports/meta-log-client.ts";
import { appendWakeEventByFetch, performSubscriptionEffects, type EffectPorts } from "../../subscriptions/effects.ts";
import { appendToStream } from "../paths/append.ts";
import { type AcknowledgedChange, type NodeContext } from "../context.ts";

const encoder = new TextEncoder();

export type DeliveryMetaPort = Pick<MetaLogClient, "onStreamAppended" | "onWebhookReply" | "watchSubscriptions">;

/** How long one watch of the subscription set waits at the MetaLog. */
const WATCH_TIMEOUT_MS = 25_000;
/** Pause after a failed watch (the MetaLog restarting); meanwhile every append is reported. */
const WATCH_RETRY_MS = 1_000;

/** The observer to add to `NodeContext.observers`. */
export function subscriptionDelivery(
  ctx: NodeContext,
  meta: DeliveryMetaPort,
  /** Webhooks and wake events for streams held elsewhere go out through this (default: the global fetch). */
  doFetch: typeof fetch = (input, init) => fetch(input, init),
): (change: AcknowledgedChange) => Promise<unknown> | undefined {
  // Wake streams this node owns are appended through its own append path (no network hop); others, and
  // one that moved away meanwhile, go through the public origin, which routes them to their owner.
  const ports: EffectPorts = {
    appendWakeEvent: async (effect) => {
      if (ctx.registry.byName(effect.stream) === undefined) return appendWakeEventByFetch(effect, doFetch);
      const body = encoder.encode(effect.rawBody);
      const headers = { contentType: "application/json", closed: null, streamSeq: null, producerId: null, producerEpoch: null, producerSeq: null };
      const request = parseAppendRequest(headers, body.byteLength, ctx.settings.maxBodyBytes);
      if (!request.ok) throw new Error(`wake event for ${effect.stream} refused: ${request.error.message}`);
      const answer = await appendToStream(ctx, { name: effect.stream, request: request.value, body, bodyText: effect.rawBody });
      if (answer.kind === "reply" || (answer.kind === "error" && answer.error.code === "not_found")) return;
      // Not served here after all (moved, held by another node, being transferred): through its owner.
      if (answer.kind === "redirect" || ["held_by", "conflict", "unavailable"].includes(answer.error.code)) {
        return appendWakeEventByFetch(effect, doFetch);
      }
      throw new Error(`wake event append to ${effect.stream} failed: ${answer.error.code} ${answer.error.message}`);
    },
    webhookReplied: (id, ref, done) => meta.onWebhookReply(id, ref, done),
    fetch: doFetch,
    maxReplyBytes: ctx.settings.webhookMaxReplyBytes,
  };
  // The cached set of subscriptions: appends are not reported while none exist. Unknown (null) until the
  // first watch answers, and after a failed one: then every append is reported. The MetaLog holds a new
  // subscription's PUT until this node confirmed the new version (its next watch call, made right after
  // the cache was updated), so no append answered after that PUT goes unreported.
  let known: SubscriptionSet | null = null;
  const watchLoop = async (): Promise<void> => {
    let since = -1;
    while (ctx.stopped === null) {
      try {
        known = await meta.watchSubscriptions(ctx.nodeId, since, WATCH_TIMEOUT_MS);
        since = known.version;
      } catch (error) {
        known = null;
        since = -1;
        // Meanwhile every append is reported (nothing is missed, only more is sent).
        ctx.log.log("node.error", { during: "watch_subscriptions" }, error);
        await new Promise((resolve) => setTimeout(resolve, WATCH_RETRY_MS));
      }
    }
  };
  ctx.background(watchLoop());
  return (change) => {
    if (known !== null && known.subscriptions === 0) return undefined;
    const tail: StreamTail = { path: change.name, tailOffset: formatOffset(change.tailPositionBytes) };
    const reported = reportTail(meta, tail, () => ctx.stopped !== null);
    ctx.background(reported.then(({ effects }) => perform(effects, ports)));
    return reported;
  };
}

/** Attempts at one report, and the pause before the first retry (doubling after each). */
const REPORT_ATTEMPTS = 6;
const REPORT_RETRY_MS = 100;

/**
 * Reports one acknowledged append, again after a failure (a MetaLog call that broke): the append is
 * answered whether or not its report arrived, and a report never sent would leave its subscribers without
 * it until the stream's next append (found by the simulation, seed 328). Tails are kept by the largest, so
 * a report that arrived although its call failed, sent again, changes nothing. Gives up after
 * REPORT_ATTEMPTS (about 3 s), or when the node stopped.
 */
export async function reportTail(
  meta: Pick<DeliveryMetaPort, "onStreamAppended">,
  tail: StreamTail,
  stopped: () => boolean,
  pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<{ effects: readonly PreparedEffect[]; subscriptions: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await meta.onStreamAppended([tail]);
    } catch (error) {
      if (attempt >= REPORT_ATTEMPTS || stopped()) throw error;
      await pause(REPORT_RETRY_MS * 2 ** (attempt - 1));
    }
  }
}

function perform(effects: readonly PreparedEffect[], ports: EffectPorts): Promise<void> {
  return effects.length === 0 ? Promise.resolve() : performSubscriptionEffects(effects, ports);
}
