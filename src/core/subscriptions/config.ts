// Subscription configuration (SUB-1): the body of `PUT /v1/stream/__ds/subscriptions/<id>`, validated
// and normalized so that two requests asking for the same thing compare equal (201 new, 200 same, 409
// different). Explicit streams added later through `POST .../streams` are links, not configuration: they
// never turn a repeated identical PUT into a 409.
import { fail, ok, subscriptionError, type Checked, type SubscriptionError } from "./errors.ts";
import { parsePattern, parseStreamPath } from "./paths.ts";
import { checkConfigStreams } from "./limits.ts";
import { checkWebhookUrl, STRICT_WEBHOOK_POLICY, type WebhookPolicy, type WebhookUrlParts } from "./webhook-url.ts";

/** @public */
export const SUBSCRIPTION_TYPES = ["webhook", "pull-wake"] as const;
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number];

export const DEFAULT_LEASE_TTL_MS = 30_000;
const MIN_LEASE_TTL_MS = 1_000;
const MAX_LEASE_TTL_MS = 600_000;
const MAX_DESCRIPTION_LENGTH = 1_024;
/** A bound on explicit streams per request and per configuration. */
const MAX_EXPLICIT_STREAMS = 1_000;

export interface SubscriptionConfig {
  readonly type: SubscriptionType;
  readonly pattern: string | null;
  /** Explicit streams named at creation: normalized, deduplicated, sorted. */
  readonly streams: readonly string[];
  /** The URL exactly as registered (webhook subscriptions only). */
  readonly webhookUrl: string | null;
  /** The JSON stream wake events are appended to (pull-wake subscriptions only). */
  readonly wakeStream: string | null;
  readonly leaseTtlMs: number;
  readonly description: string | null;
}

/** The shell's URL parser (WHATWG `new URL()`): the parts, or null when the text is not a URL. */
export type SplitUrl = (raw: string) => WebhookUrlParts | null;

/** Subscription ids travel in URLs and log records: a short, URL-safe token. */
export function parseSubscriptionId(raw: string): Checked<string> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/.test(raw)) {
    return fail("invalid", "subscription id must be 1-128 characters of [A-Za-z0-9._~-], starting alphanumeric");
  }
  return ok(raw);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A `streams` array (creation, or `POST .../streams`): normalized, deduplicated, sorted. */
export function parseStreamList(raw: unknown, allowEmpty: boolean): Checked<readonly string[]> {
  if (!Array.isArray(raw)) return fail("invalid", "streams must be an array of stream paths");
  if (!allowEmpty && raw.length === 0) return fail("invalid", "streams must not be empty");
  if (raw.length > MAX_EXPLICIT_STREAMS) return fail("invalid", `at most ${MAX_EXPLICIT_STREAMS} streams`);
  const paths = new Set<string>();
  for (const item of raw) {
    const path = parseStreamPath(item, "streams entry");
    if (!path.ok) return path;
    paths.add(path.value);
  }
  return ok([...paths].sort());
}

function parseLeaseTtl(raw: unknown): Checked<number> {
  if (raw === undefined || raw === null) return ok(DEFAULT_LEASE_TTL_MS);
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < MIN_LEASE_TTL_MS || raw > MAX_LEASE_TTL_MS) {
    return fail("invalid", `lease_ttl_ms must be an integer from ${MIN_LEASE_TTL_MS} to ${MAX_LEASE_TTL_MS}`);
  }
  return ok(raw);
}

/** What a PUT is checked against besides its own shape. */
export interface SubscriptionPutPolicy {
  readonly webhook: WebhookPolicy;
  /** MAX_SUBSCRIPTION_STREAMS: more explicit streams than this is too_large. */
  readonly maxStreams: number;
}

const DEFAULT_PUT_POLICY: SubscriptionPutPolicy = { webhook: STRICT_WEBHOOK_POLICY, maxStreams: MAX_EXPLICIT_STREAMS };

function parseWebhook(raw: unknown, splitUrl: SplitUrl, policy: WebhookPolicy): Checked<string> {
  if (!isRecord(raw) || typeof raw["url"] !== "string" || raw["url"] === "") {
    return fail("invalid", "webhook subscriptions require webhook.url");
  }
  const url = raw["url"];
  const parts = splitUrl(url);
  if (parts === null) return fail("webhook_url_rejected", "webhook.url is not a valid URL");
  const safe = checkWebhookUrl(parts, policy);
  return safe.ok ? ok(url) : safe;
}

/**
 * SUB-1 and SUB-3: the JSON body of a subscription PUT. Failures are 400 (`invalid`, or
 * `webhook_url_rejected` for an unsafe or unparsable webhook URL), or 413 (`too_large`: more explicit
 * streams than MAX_SUBSCRIPTION_STREAMS).
 */
export function parseSubscriptionConfig(
  body: unknown,
  splitUrl: SplitUrl,
  policy: SubscriptionPutPolicy = DEFAULT_PUT_POLICY,
): Checked<SubscriptionConfig> {
  if (!isRecord(body)) return fail("invalid", "the request body must be a JSON object");
  const type = body["type"];
  if (type !== "webhook" && type !== "pull-wake") return fail("invalid", 'type must be "webhook" or "pull-wake"');

  let pattern: string | null = null;
  if (body["pattern"] !== undefined && body["pattern"] !== null) {
    const parsed = parsePattern(body["pattern"]);
    if (!parsed.ok) return parsed;
    pattern = parsed.value;
  }
  const rawStreams = body["streams"];
  const streams = rawStreams === undefined || rawStreams === null ? ok([]) : parseStreamList(rawStreams, true);
  if (!streams.ok) return streams;
  const bounded = checkConfigStreams(streams.value, policy.maxStreams);
  if (!bounded.ok) return bounded;
  if (pattern === null && streams.value.length === 0) {
    return fail("invalid", "a subscription needs a pattern or streams");
  }

  const leaseTtlMs = parseLeaseTtl(body["lease_ttl_ms"]);
  if (!leaseTtlMs.ok) return leaseTtlMs;

  const description = body["description"];
  if (description !== undefined && description !== null && typeof description !== "string") {
    return fail("invalid", "description must be a string");
  }
  if (typeof description === "string" && description.length > MAX_DESCRIPTION_LENGTH) {
    return fail("invalid", `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }

  let webhookUrl: string | null = null;
  let wakeStream: string | null = null;
  if (type === "webhook") {
    const url = parseWebhook(body["webhook"], splitUrl, policy.webhook);
    if (!url.ok) return url;
    webhookUrl = url.value;
  } else {
    if (body["wake_stream"] === undefined || body["wake_stream"] === null) {
      return fail("invalid", "pull-wake subscriptions require wake_stream");
    }
    const parsed = parseStreamPath(body["wake_stream"], "wake_stream");
    if (!parsed.ok) return parsed;
    wakeStream = parsed.value;
  }

  return ok({
    type,
    pattern,
    streams: streams.value,
    webhookUrl,
    wakeStream,
    leaseTtlMs: leaseTtlMs.value,
    description: typeof description === "string" ? description : null,
  });
}

/** Which field differs between two normalized configurations, or null when they are the same. */
function subscriptionConfigDifference(a: SubscriptionConfig, b: SubscriptionConfig): string | null {
  if (a.type !== b.type) return "type";
  if (a.pattern !== b.pattern) return "pattern";
  if (a.streams.length !== b.streams.length || a.streams.some((s, i) => s !== b.streams[i])) return "streams";
  if (a.webhookUrl !== b.webhookUrl) return "webhook";
  if (a.wakeStream !== b.wakeStream) return "wake_stream";
  if (a.leaseTtlMs !== b.leaseTtlMs) return "lease_ttl_ms";
  if (a.description !== b.description) return "description";
  return null;
}

export type SubscriptionPutDecision =
  /** No subscription with this id: create it (201). */
  | { readonly kind: "create" }
  /** The same configuration: answer 200 with the current subscription. */
  | { readonly kind: "exists" }
  /** A different configuration: 409, code `conflict`, `reason` naming the first differing field. */
  | { readonly kind: "reject"; readonly error: SubscriptionError };

/** SUB-1: 201, 200 or 409 for a PUT, given the configuration already recorded under the id (or null). */
export function decideSubscriptionPut(
  existing: SubscriptionConfig | null,
  requested: SubscriptionConfig,
): SubscriptionPutDecision {
  if (existing === null) return { kind: "create" };
  const difference = subscriptionConfigDifference(existing, requested);
  if (difference === null) return { kind: "exists" };
  const message = "the subscription exists with a different configuration";
  return { kind: "reject", error: subscriptionError("conflict", message, { reason: difference }) };
}
