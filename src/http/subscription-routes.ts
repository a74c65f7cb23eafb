// The reserved subscription API (`/v1/stream/__ds/...`, SUB-1..7 and NAME-3; docs/subscriptions.md), served
// by the Worker: every route parses its request with the pure core, asks the MetaLog (where records and
// wake state live, so every node and Worker sees the same ones), answers, and performs the effects the
// MetaLog returned after the answer (waitUntil). Anything else under `__ds` is 404 SUBSCRIPTION_NOT_FOUND.
import { workerLog } from "../log/logger.ts";
import { Hono, type Context } from "hono";
import {
  parseAckRequest,
  parseBearer,
  parseClaimRequest,
  parseStreamList,
  parseStreamPath,
  parseSubscriptionConfig,
  parseSubscriptionId,
  parseWakeRef,
  subscriptionError,
  JWKS_CONTENT_TYPE,
  type Checked,
  type SplitUrl,
  type SubscriptionError,
} from "../core/subscriptions/index.ts";
import { edgeLimits, type EdgeLimits } from "../core/edge-limits.ts";
import { type Env, metaLogClient } from "../env.ts";
import type { MetaLogClient, PreparedEffect, SubscriptionAnswer } from "../ports/meta-log-client.ts";
import { declaredLength, readAtMost } from "../subscriptions/bounded-read.ts";
import { appendWakeEventByFetch, performSubscriptionEffects } from "../subscriptions/effects.ts";
import { subscriptionErrorResponse } from "../subscriptions/error-wire.ts";
import { preflightResponse, withSecurityHeaders } from "./security-headers.ts";
import { targetOf } from "./request-target.ts";

type Ctx = Context<{ Bindings: Env }>;


const splitUrl: SplitUrl = (raw) => {
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
};

const warned = new Set<string>();

/** The bounds of docs/limits.md from the vars (read per request: cheap; a bad value is logged once per isolate). */
function limitsOf(env: Env): EdgeLimits {
  const { limits, warnings } = edgeLimits(env);
  for (const warning of warnings) {
    if (warned.has(warning)) continue;
    warned.add(warning);
    workerLog.log("warning", { message: warning });
  }
  return limits;
}

/** The service's own origins, which no webhook may point at: PUBLIC_ORIGIN and the request's. */
function serviceOrigins(env: Env, request: Request): string[] {
  const origins = [new URL(request.url).origin];
  const configured = env.PUBLIC_ORIGIN;
  if (configured !== undefined && configured !== "") {
    try {
      origins.push(new URL(configured).origin);
    } catch {
      // Not a URL: nodes could not advertise it either; the request's origin still counts.
    }
  }
  return origins;
}


/**
 * The base URL the request came through, which callback, JWKS and wake-stream URLs are built on: the public
 * origin (the configured one, else the request's), followed by `/n/<node-id>` when the client used a node's
 * advertised address as its base URL. Every entry serves the whole protocol, so either base reaches the
 * same records from anywhere.
 */
function publicBase(env: Env, request: Request): string {
  const configured = env.PUBLIC_ORIGIN;
  const url = new URL(request.url);
  const origin = (configured !== undefined && configured !== "" ? configured : url.origin).replace(/\/+$/, "");
  const target = targetOf(request);
  const node = "node" in target ? target.node : null;
  return `${origin}${node === null ? "" : `/n/${encodeURIComponent(node)}`}`;
}

/** The subscription a request is about, from its target (src/http/request-target.ts). */
function subscriptionTarget(c: Ctx): { readonly id: string; readonly stream: string | null } {
  const target = targetOf(c.req.raw);
  return target.kind === "subscription" ? target : { id: "", stream: null };
}

function metaOf(c: Ctx): MetaLogClient {
  return metaLogClient(c.env.META_LOG);
}

function json(status: number, body: unknown, contentType = "application/json"): Response {
  const headers = withSecurityHeaders(new Headers({ "content-type": contentType, "cache-control": "no-store" }));
  return new Response(status === 204 ? null : JSON.stringify(body), { status, headers });
}

function rejection(error: SubscriptionError): Response {
  const { status, headers: extra, body } = subscriptionErrorResponse(error);
  const headers = withSecurityHeaders(new Headers({ "content-type": "application/json", "cache-control": "no-store", ...extra }));
  return new Response(body, { status, headers });
}

/** A refused body is read and dropped up to this multiple of the bound (the client sees its 413), then cancelled. */
const DRAIN_FACTOR = 4;

/**
 * The request body as JSON, read to MAX_DS_BODY_BYTES and no further: over it is 413 PAYLOAD_TOO_LARGE,
 * before any parsing; a body that is not JSON is 400 INVALID_REQUEST.
 */
async function jsonBody(c: Ctx): Promise<Checked<unknown>> {
  const max = limitsOf(c.env).maxDsBodyBytes;
  const read = await readAtMost(c.req.raw.body, max, { declaredBytes: declaredLength(c.req.raw.headers), drainBytes: max * DRAIN_FACTOR });
  if (!read.ok) {
    return { ok: false, error: subscriptionError("too_large", `request bodies here are at most ${max} bytes`, { limit: "MAX_DS_BODY_BYTES", max }) };
  }
  const text = new TextDecoder().decode(read.bytes);
  try {
    return { ok: true, value: text === "" ? undefined : (JSON.parse(text) as unknown) };
  } catch {
    return { ok: false, error: subscriptionError("invalid", "the request body must be JSON") };
  }
}

/** Effects run after the answer; performSubscriptionEffects never throws. */
function perform(c: Ctx, meta: MetaLogClient, effects: readonly PreparedEffect[]): void {
  if (effects.length === 0) return;
  c.executionCtx.waitUntil(
    performSubscriptionEffects(effects, {
      appendWakeEvent: (effect) => appendWakeEventByFetch(effect),
      webhookReplied: (id, ref, done) => meta.onWebhookReply(id, ref, done),
      maxReplyBytes: limitsOf(c.env).webhookMaxReplyBytes,
    }),
  );
}

/** Answers a MetaLog step: its value as JSON (or 204), or the rejection; then performs its effects. */
function answer<T>(c: Ctx, meta: MetaLogClient, result: SubscriptionAnswer<T>, ok: (value: T) => Response): Response {
  perform(c, meta, result.effects);
  return result.ok ? ok(result.value) : rejection(result.error);
}

export const subscriptionRoutes = new Hono<{ Bindings: Env }>();

subscriptionRoutes.options("*", () => preflightResponse());

subscriptionRoutes.get("/jwks.json", async (c) => json(200, await metaOf(c).jwks(), JWKS_CONTENT_TYPE));

subscriptionRoutes.put("/subscriptions/:id", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  const body = await jsonBody(c);
  if (!body.ok) return rejection(body.error);
  const limits = limitsOf(c.env);
  const config = parseSubscriptionConfig(body.value, splitUrl, {
    webhook: { allowLoopback: limits.webhookAllowLoopback, serviceOrigins: serviceOrigins(c.env, c.req.raw) },
    maxStreams: limits.maxSubscriptionStreams,
  });
  if (!config.ok) return rejection(config.error);
  const meta = metaOf(c);
  const put = await meta.putSubscription(id.value, config.value, publicBase(c.env, c.req.raw));
  return answer(c, meta, put, (value) => json(value.created ? 201 : 200, value.view));
});

subscriptionRoutes.get("/subscriptions/:id", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  const meta = metaOf(c);
  return answer(c, meta, await meta.getSubscription(id.value), (view) => json(200, view));
});

subscriptionRoutes.delete("/subscriptions/:id", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  await metaOf(c).deleteSubscription(id.value);
  return json(204, null);
});

subscriptionRoutes.post("/subscriptions/:id/streams", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  const body = await jsonBody(c);
  if (!body.ok) return rejection(body.error);
  const raw = typeof body.value === "object" && body.value !== null ? (body.value as Record<string, unknown>)["streams"] : undefined;
  const paths = parseStreamList(raw, false);
  if (!paths.ok) return rejection(paths.error);
  const meta = metaOf(c);
  return answer(c, meta, await meta.addStreams(id.value, paths.value), () => json(204, null));
});

subscriptionRoutes.delete("/subscriptions/:id/streams/*", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  // The stream path as the entry decoded it (`manual%2Fb` and `manual/b` are the same path).
  const decoded = subscriptionTarget(c).stream ?? "";
  const path = parseStreamPath(decoded);
  if (!path.ok) return rejection(path.error);
  const meta = metaOf(c);
  return answer(c, meta, await meta.removeStream(id.value, path.value), () => json(204, null));
});

subscriptionRoutes.post("/subscriptions/:id/callback", (c) => acknowledgeRoute(c, "callback"));
subscriptionRoutes.post("/subscriptions/:id/ack", (c) => acknowledgeRoute(c, "ack"));

async function acknowledgeRoute(c: Ctx, kind: "callback" | "ack"): Promise<Response> {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  const body = await jsonBody(c);
  if (!body.ok) return rejection(body.error);
  const request = parseAckRequest(body.value, limitsOf(c.env).maxAcksPerRequest);
  if (!request.ok) return rejection(request.error);
  const bearer = parseBearer(c.req.header("authorization") ?? null);
  const meta = metaOf(c);
  const result =
    kind === "callback"
      ? await meta.webhookCallback(id.value, request.value, bearer)
      : await meta.ack(id.value, request.value, bearer);
  return answer(c, meta, result, (reply) => json(200, reply));
}

subscriptionRoutes.post("/subscriptions/:id/claim", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  const body = await jsonBody(c);
  if (!body.ok) return rejection(body.error);
  const request = parseClaimRequest(body.value);
  if (!request.ok) return rejection(request.error);
  const meta = metaOf(c);
  return answer(c, meta, await meta.claim(id.value, request.value.worker), (grant) => json(200, grant));
});

subscriptionRoutes.post("/subscriptions/:id/release", async (c) => {
  const id = parseSubscriptionId(subscriptionTarget(c).id);
  if (!id.ok) return rejection(id.error);
  const body = await jsonBody(c);
  if (!body.ok) return rejection(body.error);
  const ref = parseWakeRef(body.value);
  if (!ref.ok) return rejection(ref.error);
  const bearer = parseBearer(c.req.header("authorization") ?? null);
  const meta = metaOf(c);
  return answer(c, meta, await meta.release(id.value, ref.value, bearer), () => json(204, null));
});

// NAME-3: the reserved segment never reaches stream handling.
subscriptionRoutes.all("*", () => rejection(subscriptionError("not_found", "no such subscription route")));

subscriptionRoutes.onError((error) => {
  workerLog.log("worker.error", { during: "subscription_request" }, error);
  return json(503, { error: { code: "UNAVAILABLE", message: "the subscription service is unavailable; retry" } });
});
