// Access to the subscription API (`/v1/stream/__ds/subscriptions/...`), table AS. A subscription is bound
// to the prefixes its streams, pattern and wake stream lie in: the token that makes it must cover all of
// them with `subscribe`, and any later request about it (read, delete, add or remove streams, claim) must
// come with a token that covers them too, so a token for `a/` never sees or alters a subscription over
// `b/`. The acknowledgement routes (callback, ack, release) are authorized by the subscription's own
// callback or claim token, as the protocol says; the signing keys (jwks.json) are public.
//
// | #   | route                                        | needs `subscribe` on                           |
// |-----|----------------------------------------------|------------------------------------------------|
// | AS1 | PUT subscriptions/<id>                       | the new config's streams, pattern, wake stream, and the existing subscription's |
// | AS2 | GET, DELETE subscriptions/<id>; POST claim   | the existing subscription's                    |
// | AS3 | POST subscriptions/<id>/streams              | the streams added, and the existing subscription's |
// | AS4 | DELETE subscriptions/<id>/streams/<path>     | the existing subscription's                    |
// | AS5 | POST callback, ack, release; GET jwks.json   | nothing (their own token)                      |
// | AS6 | anything else under __ds                     | `subscribe` (the route answers 404)            |
//
// Every row but AS5 needs `subscribe` granted even when the subscription does not exist, so a token
// without it learns nothing about which ids exist.
import { parsePattern, parseStreamPath } from "../subscriptions/paths.ts";
import type { RequestTarget } from "../protocol/request-target.ts";
import type { AccessNeed } from "./access.ts";

export type SubscriptionRoute =
  | { readonly kind: "put"; readonly id: string }
  | { readonly kind: "about"; readonly id: string }
  | { readonly kind: "add_streams"; readonly id: string }
  | { readonly kind: "own_token" }
  | { readonly kind: "other" };

/** The paths a subscription is bound to: its streams, its pattern's literal start, its wake stream. */
export interface SubscriptionScope {
  readonly streams: readonly string[];
  readonly pattern: string | null;
  readonly wakeStream: string | null;
}

/** Which row of AS a `__ds` request is, from its method and its target (request-target.ts). */
export function subscriptionRoute(method: string, target: RequestTarget): SubscriptionRoute {
  if (target.kind === "jwks") return { kind: "own_token" };
  if (target.kind !== "subscription") return { kind: "other" };
  const { id, action } = target;
  if (action === "callback" || action === "ack" || action === "release") return { kind: "own_token" };
  if (action === "config" && method === "PUT") return { kind: "put", id };
  if (action === "streams" && method === "POST") return { kind: "add_streams", id };
  return { kind: "about", id };
}

/**
 * The literal start of a pattern: every name it matches begins with it. Segments before the first
 * wildcard; a `*` needs one more segment (so the slash is part of it), a `**` may match none.
 */
export function patternLiteralStart(pattern: string): string {
  const segments = pattern.split("/");
  const first = segments.findIndex((segment) => segment === "*" || segment === "**");
  if (first === -1) return pattern;
  const literal = segments.slice(0, first).join("/");
  return segments[first] === "*" && literal !== "" ? `${literal}/` : literal;
}

/** `subscribe` itself, and on every path of the scopes given. */
export function subscriptionNeeds(...scopes: readonly (SubscriptionScope | null)[]): AccessNeed[] {
  const paths = new Set<string>();
  for (const scope of scopes) {
    if (scope === null) continue;
    for (const stream of scope.streams) paths.add(stream);
    if (scope.pattern !== null) paths.add(patternLiteralStart(scope.pattern));
    if (scope.wakeStream !== null) paths.add(scope.wakeStream);
  }
  return [{ op: "subscribe", stream: null }, ...[...paths].sort().map((stream): AccessNeed => ({ op: "subscribe", stream }))];
}

function pathsIn(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((item) => {
    const path = parseStreamPath(item);
    return path.ok ? [path.value] : [];
  });
}

/**
 * The scope a request body names (`streams`, `pattern`, `wake_stream` of a PUT; `streams` of an add).
 * Entries that do not parse are left out: the route refuses the whole body for them anyway.
 */
export function scopeOfBody(body: unknown): SubscriptionScope {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { streams: [], pattern: null, wakeStream: null };
  const record = body as Record<string, unknown>;
  const pattern = parsePattern(record["pattern"]);
  const wake = parseStreamPath(record["wake_stream"]);
  return { streams: pathsIn(record["streams"]), pattern: pattern.ok ? pattern.value : null, wakeStream: wake.ok ? wake.value : null };
}
