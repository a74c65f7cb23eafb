// Stream lifetime (PROTOCOL "Create Stream", "Stream forking"): `Stream-TTL` is a sliding idle window in
// seconds, reset by every read and write (never by HEAD); `Stream-Expires-At` is a fixed RFC 3339 deadline.
// A stream has at most one of them. Expiry is decided at request time from the stream's last access and
// the request's clock (`nowMs`, a parameter): there is no timer to miss.
import { fail, ok, parseCanonicalUint, type Parsed } from "./parsed.ts";

export interface Expiry {
  /** Sliding window; null when the stream has none. */
  readonly ttlSeconds: number | null;
  /** Absolute deadline in ms since the Unix epoch; null when the stream has none. */
  readonly expiresAtMs: number | null;
}

export const NO_EXPIRY: Expiry = { ttlSeconds: null, expiresAtMs: null };

/** The largest TTL whose window in milliseconds is still an exact integer. */
export const MAX_TTL_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

export function parseTtlHeader(raw: string | null): Parsed<number | null> {
  if (raw === null) return ok(null);
  const seconds = parseCanonicalUint(raw);
  if (seconds === null || seconds > MAX_TTL_SECONDS) {
    return fail("invalid", "Stream-TTL must be a non-negative decimal integer without sign, leading zeros or exponent");
  }
  return ok(seconds);
}

function parseExpiresAtHeader(raw: string | null): Parsed<number | null> {
  if (raw === null) return ok(null);
  const ms = parseRfc3339(raw);
  if (ms === null) return fail("invalid", "Stream-Expires-At must be an RFC 3339 timestamp");
  return ok(ms);
}

/** Both headers of a create (or fork) request. A request may carry one, not both. */
export function parseExpiryHeaders(ttlRaw: string | null, expiresAtRaw: string | null): Parsed<Expiry> {
  if (ttlRaw !== null && expiresAtRaw !== null) {
    return fail("invalid", "Stream-TTL and Stream-Expires-At are mutually exclusive");
  }
  const ttl = parseTtlHeader(ttlRaw);
  if (!ttl.ok) return ttl;
  const expiresAt = parseExpiresAtHeader(expiresAtRaw);
  if (!expiresAt.ok) return expiresAt;
  return ok({ ttlSeconds: ttl.value, expiresAtMs: expiresAt.value });
}

const RFC3339 =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/**
 * An RFC 3339 `date-time` (section 5.6) as ms since the epoch, or null. Fractions beyond milliseconds
 * are truncated; a leap second (`:60`) is accepted and lands on the next second.
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const fractionMs = m[7] === undefined ? 0 : Math.floor(Number(`0${m[7]}`) * 1000);
  // Date.UTC reads years 0-99 as 1900-1999; 400 Gregorian years are exactly 146097 days, so shift and back.
  const shiftYears = year < 100 ? 400 : 0;
  const utcMs =
    Date.UTC(year + shiftYears, month - 1, day, hour, minute, second, fractionMs) -
    (shiftYears / 400) * 146_097 * 86_400_000 -
    offsetMinutes * 60_000;
  return Number.isFinite(utcMs) ? utcMs : null;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** How HEAD reports the deadline: RFC 3339 in UTC with milliseconds. */
export function formatExpiresAt(expiresAtMs: number): string {
  return new Date(expiresAtMs).toISOString();
}

/** The moment the stream expires given its last read or write, or null if it never does. */
export function expiryInstantMs(expiry: Expiry, lastAccessMs: number): number | null {
  if (expiry.expiresAtMs !== null) return expiry.expiresAtMs;
  if (expiry.ttlSeconds !== null) return lastAccessMs + expiry.ttlSeconds * 1000;
  return null;
}

/** Expired exactly at the deadline: a TTL of 0 expires at once. */
export function isExpired(expiry: Expiry, lastAccessMs: number, nowMs: number): boolean {
  const at = expiryInstantMs(expiry, lastAccessMs);
  return at !== null && nowMs >= at;
}

/** The requests whose success counts as an access for the sliding TTL. */
export type AccessKind = "create" | "append" | "close" | "read" | "live-read" | "head" | "delete" | "recreate";

/**
 * Reads and writes renew the TTL; HEAD does not (the suite checks both). A live read renews when it
 * starts and again whenever it answers or emits an event, so a stream with a live reader stays alive. A
 * repeated create (answered 200) is neither a read nor a write.
 */
export function renewsTtl(kind: AccessKind): boolean {
  switch (kind) {
    case "create":
    case "append":
    case "close":
    case "read":
    case "live-read":
      return true;
    case "head":
    case "delete":
    case "recreate":
      return false;
  }
}

/**
 * A fork's lifetime (PROTOCOL "Stream forking", TTL/expiry table): the fork's own TTL or deadline when it
 * asks for one; otherwise it inherits the source's TTL value or deadline. Never capped by the source.
 */
export function resolveForkExpiry(requested: Expiry, source: Expiry): Expiry {
  if (requested.ttlSeconds !== null || requested.expiresAtMs !== null) return requested;
  if (source.ttlSeconds !== null) return { ttlSeconds: source.ttlSeconds, expiresAtMs: null };
  if (source.expiresAtMs !== null) return { ttlSeconds: null, expiresAtMs: source.expiresAtMs };
  return NO_EXPIRY;
}
