// The JSON the subscription API speaks (snake_case, as the protocol names it): request bodies parsed into
// typed values, and the bodies the server sends built from a record. URLs are built from the public
// origin the shell is configured with (`https://streams.example.com`, no trailing slash).
import { RESERVED_SEGMENT, STREAM_PATH_PREFIX } from "../protocol/headers.ts";
import { fail, ok, type Checked } from "./errors.ts";
import type { SubscriptionType } from "./config.ts";
import { parseStreamPath } from "./paths.ts";
import { linkHasPending, type LinkType, type SubscriptionRecord, type WakeSnapshotEntry } from "./record.ts";

const JWKS_PATH = `${STREAM_PATH_PREFIX}${RESERVED_SEGMENT}/jwks.json`;
export const JWKS_CONTENT_TYPE = "application/jwk-set+json";

function jwksUrl(publicOrigin: string): string {
  return `${publicOrigin}${JWKS_PATH}`;
}

export function subscriptionUrl(publicOrigin: string, id: string): string {
  return `${publicOrigin}${STREAM_PATH_PREFIX}${RESERVED_SEGMENT}/subscriptions/${encodeURIComponent(id)}`;
}

export interface StreamInfo {
  readonly path: string;
  readonly link_type: LinkType;
  readonly acked_offset: string;
  readonly tail_offset: string;
  readonly has_pending: boolean;
}

export function streamInfos(record: SubscriptionRecord): StreamInfo[] {
  return record.links.map((l) => ({
    path: l.path,
    link_type: l.explicit ? "explicit" : "glob",
    acked_offset: l.ackedOffset,
    tail_offset: l.tailOffset,
    has_pending: linkHasPending(l),
  }));
}

/** What the JSON needs about the signing key: `alg` is always ed25519. */
export interface SigningInfo {
  readonly kid: string;
  readonly publicOrigin: string;
}

export interface SubscriptionView {
  readonly id: string;
  readonly subscription_id: string;
  readonly type: SubscriptionType;
  readonly pattern?: string;
  readonly streams: readonly { readonly path: string; readonly link_type: LinkType; readonly acked_offset: string }[];
  readonly webhook?: {
    readonly url: string;
    readonly signing: { readonly alg: "ed25519"; readonly kid: string; readonly jwks_url: string };
  };
  readonly wake_stream?: string;
  readonly lease_ttl_ms: number;
  readonly created_at: string;
  readonly status: "active";
  readonly description?: string;
}

/** SUB-1/SUB-6: the body of PUT (201/200) and GET. Never a secret: signing is by the server's public key. */
export function subscriptionView(record: SubscriptionRecord, signing: SigningInfo): SubscriptionView {
  const c = record.config;
  return {
    id: record.id,
    subscription_id: record.id,
    type: c.type,
    ...(c.pattern !== null ? { pattern: c.pattern } : {}),
    streams: streamInfos(record).map(({ path, link_type, acked_offset }) => ({ path, link_type, acked_offset })),
    ...(c.webhookUrl !== null
      ? {
          webhook: {
            url: c.webhookUrl,
            signing: { alg: "ed25519" as const, kid: signing.kid, jwks_url: jwksUrl(signing.publicOrigin) },
          },
        }
      : {}),
    ...(c.wakeStream !== null ? { wake_stream: c.wakeStream } : {}),
    lease_ttl_ms: c.leaseTtlMs,
    created_at: new Date(record.createdAtMs).toISOString(),
    status: "active",
    ...(c.description !== null ? { description: c.description } : {}),
  };
}

/** SUB-4: the webhook POST body. The shell serializes it once and signs exactly those bytes. */
export interface WebhookBody {
  readonly subscription_id: string;
  readonly wake_id: string;
  readonly generation: number;
  readonly streams: readonly StreamInfo[];
  readonly callback_url: string;
  readonly callback_token: string;
}

/** SUB-7: one line of the pull-wake `wake_stream` (a JSON stream: one message per event). */
export interface WakeEvent {
  readonly type: "wake";
  readonly subscription_id: string;
  readonly stream: string;
  readonly generation: number;
  /** Unix milliseconds. */
  readonly ts: number;
}

/** SUB-7: the 200 body of a claim. */
export interface ClaimGrant {
  readonly wake_id: string;
  readonly generation: number;
  readonly token: string;
  readonly streams: readonly StreamInfo[];
  readonly lease_ttl_ms: number;
}

/** SUB-5/SUB-7: the 200 body of a callback or ack. */
export interface AckReply {
  readonly ok: true;
  /** Whether the ack left pending work and a new wake was created for it. */
  readonly next_wake: boolean;
}

/** The wake a callback, ack or release is about. */
export interface WakeRef {
  readonly wakeId: string;
  readonly generation: number;
}

export interface AckRequest extends WakeRef {
  readonly acks: readonly WakeSnapshotEntry[];
  readonly done: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `{wake_id, generation}`: a wrong shape is 400; a stale value is fenced later, by the state machine. */
export function parseWakeRef(body: unknown): Checked<WakeRef> {
  if (!isRecord(body)) return fail("invalid", "the request body must be a JSON object");
  const wakeId = body["wake_id"];
  const generation = body["generation"];
  if (typeof wakeId !== "string" || wakeId === "") return fail("invalid", "wake_id must be a non-empty string");
  if (typeof generation !== "number" || !Number.isSafeInteger(generation) || generation < 1) {
    return fail("invalid", "generation must be a positive integer");
  }
  return ok({ wakeId, generation });
}

/**
 * SUB-5/SUB-7: `{wake_id, generation, acks?: [{stream (or path), offset}], done?}`. More than `maxAcks`
 * acks (MAX_ACKS_PER_REQUEST) is too_large, checked before any ack is parsed.
 */
export function parseAckRequest(body: unknown, maxAcks: number = Number.POSITIVE_INFINITY): Checked<AckRequest> {
  const ref = parseWakeRef(body);
  if (!ref.ok) return ref;
  if (!isRecord(body)) return fail("invalid", "the request body must be a JSON object");
  const rawAcks = body["acks"] ?? [];
  if (!Array.isArray(rawAcks)) return fail("invalid", "acks must be an array");
  if (rawAcks.length > maxAcks) {
    return fail("too_large", `at most ${maxAcks} acks per request`, { limit: "MAX_ACKS_PER_REQUEST", max: maxAcks });
  }
  const acks: WakeSnapshotEntry[] = [];
  for (const raw of rawAcks) {
    if (!isRecord(raw) || typeof raw["offset"] !== "string") {
      return fail("invalid", "each ack needs stream and offset strings");
    }
    const path = parseStreamPath(raw["stream"] ?? raw["path"], "ack stream");
    if (!path.ok) return path;
    acks.push({ path: path.value, tailOffset: raw["offset"] });
  }
  const done = body["done"];
  if (done !== undefined && typeof done !== "boolean") return fail("invalid", "done must be a boolean");
  return ok({ ...ref.value, acks, done: done === true });
}

/** SUB-7: `{worker}` of a claim. */
export function parseClaimRequest(body: unknown): Checked<{ readonly worker: string }> {
  if (!isRecord(body)) return fail("invalid", "the request body must be a JSON object");
  const worker = body["worker"];
  if (typeof worker !== "string" || worker === "" || worker.length > 256) {
    return fail("invalid", "worker must be a non-empty string of at most 256 characters");
  }
  return ok({ worker });
}

/** `Authorization: Bearer <token>`: the token, or null. */
export function parseBearer(header: string | null): string | null {
  const match = header === null ? null : /^Bearer +(\S+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}
