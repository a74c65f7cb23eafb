// The core's effects made ready for whoever performs them (src/subscriptions/effects.ts): a webhook body
// serialized once and signed here, so the private key never leaves the MetaLog and the performer sends
// exactly the signed bytes; a wake event serialized with its subscription's origin and, in token mode, the
// `Authorization` its append carries.
import type { SubscriptionEffect } from "../../core/subscriptions/index.ts";
import type { PreparedEffect } from "../../ports/meta-log-client.ts";
import type { SigningKeys } from "./signing-keys.ts";

/** The `Authorization` a wake event's append carries (token mode), or null (open mode). */
export type WakeAuthorization = (stream: string) => Promise<string | null>;

export async function prepareEffects(
  effects: readonly SubscriptionEffect[],
  origin: string,
  deps: { readonly keys: SigningKeys; readonly wakeAuthorization: WakeAuthorization; readonly now: () => number },
): Promise<PreparedEffect[]> {
  const out: PreparedEffect[] = [];
  for (const effect of effects) {
    if (effect.kind === "append_wake_event") {
      const authorization = await deps.wakeAuthorization(effect.stream);
      out.push({ kind: "append_wake_event", stream: effect.stream, origin, rawBody: JSON.stringify(effect.event), ...(authorization === null ? {} : { authorization }) });
      continue;
    }
    const rawBody = JSON.stringify(effect.body);
    const signer = await deps.keys.current();
    out.push({
      kind: "send_webhook",
      subscriptionId: effect.body.subscription_id,
      wakeId: effect.body.wake_id,
      generation: effect.body.generation,
      url: effect.url,
      rawBody,
      signature: await signer.sign(rawBody, deps.now()),
    });
  }
  return out;
}
