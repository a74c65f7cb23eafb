// The closed set of subscription rejections. They are not DomainErrorCodes: the subscription API answers
// with its own protocol vocabulary (`{"error": {"code": "FENCED"}}`, uppercase, with `current_holder` for
// ALREADY_CLAIMED), which src/subscriptions/error-wire.ts maps to; stream routes never see these codes.
import type { Result } from "../result.ts";

/** @public The closed set, as a value (the type below is derived from it). */
export const SUBSCRIPTION_ERROR_CODES = [
  /** A malformed body, id or path, or an operation of the other subscription type. */
  "invalid",
  /** The webhook URL is refused by table WU (not https to a public host, loopback without the flag, the service itself, credentials). */
  "webhook_url_rejected",
  /** No subscription with this id. */
  "not_found",
  /** A PUT whose configuration differs from the recorded one. Carries `reason`, the first differing field. */
  "conflict",
  /** Missing or wrong bearer token for the current wake. */
  "unauthorized",
  /** The wake is no longer current (acked, released, lapsed, superseded). Carries `generation`. */
  "stale_wake",
  /** Another worker holds the pull-wake lease. Carries `currentHolder` and `generation`. */
  "already_claimed",
  /** A claim when no followed stream has unacknowledged data. */
  "no_pending_work",
  /** An ack for a stream not followed, or an offset behind the acked one or past the tail. Carries `stream`. */
  "ack_rejected",
  /** A request over a bound by itself (body bytes, acks, streams in one PUT, a record over the MetaLog's row
   * bound): it can never succeed as sent. Carries `limit` (the setting's name) and `max`. */
  "too_large",
  /** A bound of the deployment or of the subscription is full (subscriptions, links): freeing one (a DELETE)
   * lets the same request succeed later. Carries `limit` and `max`. */
  "limit_reached",
] as const;

export type SubscriptionErrorCode = (typeof SUBSCRIPTION_ERROR_CODES)[number];

export interface SubscriptionError {
  readonly code: SubscriptionErrorCode;
  readonly message: string;
  readonly details?: Readonly<Record<string, string | number | boolean | null>>;
}

/** A checked value, or the rejection that says why not. */
export type Checked<T> = Result<T, SubscriptionError>;

export function ok<T>(value: T): Checked<T> {
  return { ok: true, value };
}

export function fail<T = never>(
  code: SubscriptionErrorCode,
  message: string,
  details?: SubscriptionError["details"],
): Checked<T> {
  return { ok: false, error: subscriptionError(code, message, details) };
}

export function subscriptionError(
  code: SubscriptionErrorCode,
  message: string,
  details?: SubscriptionError["details"],
): SubscriptionError {
  return details === undefined ? { code, message } : { code, message, details };
}

/**
 * The answer for a subscription id that does not exist: the MetaLog's, and the Worker's for a token that does
 * not cover the subscription (so the two cannot be told apart).
 */
export function subscriptionNotFound(id: string): SubscriptionError {
  return subscriptionError("not_found", `no subscription ${id}`);
}
