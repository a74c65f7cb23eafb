// Rows SUB-4 to SUB-7 of docs/protocol-rules.md: the wake/lease state machine, step by step as the
// conformance tests drive it, plus lease expiry and the other type's routes.
import { describe, expect, test } from "vitest";
import { ZERO_OFFSET } from "../../../src/core/protocol/offsets.ts";
import {
  ackWake,
  addExplicitStreams,
  claimWake,
  forgetStream,
  nextDeadlineMs,
  newSubscription,
  onStreamAppend,
  onWebhookReply,
  parseAckRequest,
  releaseWake,
  removeExplicitStream,
  settleLease,
  subscriptionView,
  webhookCallback,
  type SubscriptionRecord,
} from "../../../src/core/subscriptions/index.ts";
import { subscriptionErrorResponse } from "../../../src/subscriptions/error-wire.ts";
import { config, contexts, off, ORIGIN, pullSub, webhookSub } from "./fixtures.ts";

function ackedOf(record: SubscriptionRecord, path: string): string | undefined {
  return record.links.find((l) => l.path === path)?.ackedOffset;
}

describe("webhook wakes", () => {
  test("SUB-4: an append to a matching stream sends one webhook; {done: true} acks the snapshot", () => {
    const ctx = contexts();
    const sub = webhookSub();
    // The stream is created with a body after the subscription: it links at ZERO_OFFSET, so all of it is pending.
    const step = onStreamAppend(sub, { path: "events/sync-1", tailOffset: off(20) }, ctx(1_000));
    expect(step.result).toEqual({ ok: true, value: { followed: true } });
    expect(step.effects).toEqual([
      {
        kind: "send_webhook",
        url: "http://127.0.0.1:9999/webhook",
        body: {
          subscription_id: "sub-1",
          wake_id: "w_1",
          generation: 1,
          streams: [{ path: "events/sync-1", link_type: "glob", acked_offset: ZERO_OFFSET, tail_offset: off(20), has_pending: true }],
          callback_url: `${ORIGIN}/v1/stream/__ds/subscriptions/sub-1/callback`,
          callback_token: "tok_1",
        },
      },
    ]);
    expect(nextDeadlineMs(step.state)).toBe(2_000);

    // A second append while the wake is out: no second webhook.
    const again = onStreamAppend(step.state, { path: "events/sync-1", tailOffset: off(30) }, ctx(1_100));
    expect(again.effects).toEqual([]);

    // The receiver answered {"done": true}: the snapshot's tail (20) is acked; 30 is still pending → next wake.
    const reply = onWebhookReply(again.state, { wakeId: "w_1", generation: 1 }, true, ctx(1_200));
    expect(ackedOf(reply.state, "events/sync-1")).toBe(off(20));
    expect(reply.result).toEqual({ ok: true, value: { nextWake: true } });
    expect(reply.state.generation).toBe(2);
    expect(reply.effects).toMatchObject([{ kind: "send_webhook", body: { generation: 2 } }]);

    // Streams that do not match, and the unrelated: nothing.
    const other = onStreamAppend(sub, { path: "other/x", tailOffset: off(5) }, ctx(1_300));
    expect(other).toMatchObject({ state: sub, effects: [], result: { ok: true, value: { followed: false } } });
  });

  test("SUB-5: a callback acks and ends the wake; the same request again is FENCED", () => {
    const ctx = contexts();
    const woken = onStreamAppend(webhookSub(), { path: "events/cb-1", tailOffset: off(17) }, ctx(0));
    const body = { wake_id: "w_1", generation: 1, acks: [{ stream: "events/cb-1", offset: off(17) }], done: true };
    const request = parseAckRequest(body);
    if (!request.ok) throw new Error("unreachable");

    const wrongToken = webhookCallback(woken.state, request.value, "nope", ctx(10));
    expect(wrongToken.result).toMatchObject({ ok: false, error: { code: "unauthorized" } });
    expect(wrongToken.state).toBe(woken.state);

    const first = webhookCallback(woken.state, request.value, "tok_1", ctx(20));
    expect(first.result).toEqual({ ok: true, value: { ok: true, next_wake: false } });
    expect(ackedOf(first.state, "events/cb-1")).toBe(off(17));
    expect(first.state.wake).toBeNull();

    const stale = webhookCallback(first.state, request.value, "tok_1", ctx(30));
    expect(stale.result).toMatchObject({ ok: false, error: { code: "stale_wake" } });
    expect(stale.state).toBe(first.state);
    if (!stale.result.ok) {
      const wire = subscriptionErrorResponse(stale.result.error);
      expect(wire.status).toBe(409);
      expect(JSON.parse(wire.body)).toMatchObject({ error: { code: "FENCED" } });
    }
  });

  test("SUB-5: acks without done renew the lease; bad offsets are refused; a lapsed lease fences and re-wakes", () => {
    const ctx = contexts();
    let s = onStreamAppend(webhookSub(), { path: "events/a", tailOffset: off(10) }, ctx(0)).state;
    const partial = { wakeId: "w_1", generation: 1, acks: [{ path: "events/a", tailOffset: off(4) }], done: false };
    const renewed = webhookCallback(s, partial, "tok_1", ctx(900));
    expect(renewed.result.ok).toBe(true);
    expect(nextDeadlineMs(renewed.state)).toBe(1_900);
    s = renewed.state;
    for (const [path, offset] of [["events/zz", off(1)], ["events/a", off(3)], ["events/a", off(11)], ["events/a", "-1"]] as const) {
      const bad = webhookCallback(s, { ...partial, acks: [{ path, tailOffset: offset }] }, "tok_1", ctx(1_000));
      expect(bad.result).toMatchObject({ ok: false, error: { code: "ack_rejected" } });
      expect(bad.state).toBe(s);
    }
    // Past the deadline: the wake lapses, generation 2 is sent, and the old wake is fenced.
    const lapsed = webhookCallback(s, partial, "tok_1", ctx(1_900));
    expect(lapsed.result).toMatchObject({ ok: false, error: { code: "stale_wake", details: { generation: 2 } } });
    expect(lapsed.effects).toMatchObject([{ kind: "send_webhook", body: { generation: 2 } }]);
    expect(settleLease(s, ctx(1_899)).state).toBe(s);
  });
});

describe("explicit links", () => {
  test("SUB-6: streams added and removed explicitly; GET shows explicit links", () => {
    const c = config({ type: "webhook", streams: ["manual/a"], webhook: { url: "http://localhost:1/h" } });
    let s = newSubscription("sub-6", c, 0, [{ path: "manual/a", tailOffset: off(3) }]);
    s = addExplicitStreams(s, ["manual/b"], []);
    s = removeExplicitStream(s, "manual/b");
    const view = subscriptionView(s, { kid: "ds_k", publicOrigin: ORIGIN });
    expect(view.streams).toEqual([{ path: "manual/a", link_type: "explicit", acked_offset: off(3) }]);

    // A stream the pattern also matches stays linked as glob; deleting the stream drops the link.
    const both = addExplicitStreams(webhookSub({}, [{ path: "events/x", tailOffset: off(1) }]), ["events/x"], []);
    expect(subscriptionView(both, { kid: "k", publicOrigin: ORIGIN }).streams).toMatchObject([{ path: "events/x", link_type: "explicit" }]);
    const globOnly = removeExplicitStream(both, "events/x");
    expect(globOnly.links).toMatchObject([{ path: "events/x", glob: true, explicit: false }]);
    expect(forgetStream(globOnly, "events/x").links).toEqual([]);
    // Existing matching streams link at their tail: no backlog for a new subscription.
    expect(webhookSub({}, [{ path: "events/old", tailOffset: off(9) }]).links).toMatchObject([{ ackedOffset: off(9), tailOffset: off(9) }]);
  });
});

describe("pull-wake", () => {
  test("SUB-7: wake event, claim, ALREADY_CLAIMED, ack done, append, claim at once, release", () => {
    const ctx = contexts();
    const appended = onStreamAppend(pullSub(), { path: "events/pull-1", tailOffset: off(18) }, ctx(5_000));
    expect(appended.effects).toEqual([
      { kind: "append_wake_event", stream: "wake/pool", event: { type: "wake", subscription_id: "pull-1", stream: "events/pull-1", generation: 1, ts: 5_000 } },
    ]);

    const claim = claimWake(appended.state, "worker-1", ctx(5_010));
    expect(claim.result).toMatchObject({ ok: true, value: { wake_id: "w_1", generation: 1, token: "tok_2", lease_ttl_ms: 1000 } });
    expect(claim.effects).toEqual([]);
    if (!claim.result.ok) throw new Error("unreachable");
    expect(claim.result.value.streams).toMatchObject([{ path: "events/pull-1", tail_offset: off(18) }]);

    const busy = claimWake(claim.state, "worker-2", ctx(5_020));
    expect(busy.result).toMatchObject({ ok: false, error: { code: "already_claimed", details: { currentHolder: "worker-1" } } });
    if (!busy.result.ok) {
      expect(JSON.parse(subscriptionErrorResponse(busy.result.error).body)).toMatchObject({ error: { code: "ALREADY_CLAIMED", current_holder: "worker-1" } });
    }

    const ack = ackWake(claim.state, { wakeId: "w_1", generation: 1, acks: [{ path: "events/pull-1", tailOffset: off(18) }], done: true }, "tok_2", ctx(5_030));
    expect(ack.result).toEqual({ ok: true, value: { ok: true, next_wake: false } });

    // An append right after the ack wakes again at once, and the next claim succeeds.
    const second = onStreamAppend(ack.state, { path: "events/pull-1", tailOffset: off(37) }, ctx(5_040));
    expect(second.effects).toMatchObject([{ kind: "append_wake_event", event: { generation: 2 } }]);
    const claim2 = claimWake(second.state, "worker-1", ctx(5_050));
    expect(claim2.result).toMatchObject({ ok: true, value: { generation: 2 } });
    if (!claim2.result.ok) throw new Error("unreachable");

    const release = releaseWake(claim2.state, { wakeId: claim2.result.value.wake_id, generation: 2 }, claim2.result.value.token, ctx(5_060));
    expect(release.result).toEqual({ ok: true, value: null });
    // Work is still pending (nothing acked): the next generation is announced on the wake stream.
    expect(release.effects).toMatchObject([{ kind: "append_wake_event", event: { generation: 3 } }]);
  });

  test("SUB-7: a claim takes pending work even before the append was reported as a wake; none pending is refused", () => {
    const ctx = contexts();
    const idle = pullSub();
    expect(claimWake(idle, "w", ctx(0)).result).toMatchObject({ ok: false, error: { code: "no_pending_work" } });
    // A lease that lapses frees the subscription for the next worker, with a new generation.
    const appended = onStreamAppend(idle, { path: "events/p", tailOffset: off(2) }, ctx(0)).state;
    const held = claimWake(appended, "w1", ctx(10)).state;
    const taken = claimWake(held, "w2", ctx(1_010));
    expect(taken.result).toMatchObject({ ok: true, value: { generation: 2 } });
    expect(taken.state.wake?.holder).toBe("w2");
  });

  test("SUB-7: the wake stream never wakes its own subscription; the other type's routes are refused", () => {
    const ctx = contexts();
    const s = pullSub({ pattern: "**" });
    expect(onStreamAppend(s, { path: "wake/pool", tailOffset: off(50) }, ctx(0)).result).toEqual({ ok: true, value: { followed: false } });
    const hook = webhookSub();
    expect(claimWake(hook, "w", ctx(0)).result).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(ackWake(hook, { wakeId: "x", generation: 1, acks: [], done: true }, "t", ctx(0)).result).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(webhookCallback(s, { wakeId: "x", generation: 1, acks: [], done: true }, "t", ctx(0)).result).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("records survive a JSON round trip unchanged", () => {
    const ctx = contexts();
    const s = claimWake(onStreamAppend(pullSub(), { path: "events/p", tailOffset: off(2) }, ctx(0)).state, "w", ctx(1)).state;
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
});
