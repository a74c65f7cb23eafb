// Rows TTL-*, CRT-4..CRT-7, HD-3, LIFE-* (expiry part) and FRK-12 of docs/protocol-rules.md.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  MAX_TTL_SECONDS,
  NO_EXPIRY,
  expiryInstantMs,
  formatExpiresAt,
  isExpired,
  parseExpiryHeaders,
  parseRfc3339,
  parseTtlHeader,
  renewsTtl,
  resolveForkExpiry,
  type Expiry,
} from "../../../src/core/protocol/ttl.ts";

const T0 = Date.UTC(2026, 0, 1);

describe("TTL and Expires-At", () => {
  test("CRT-4: TTL and Expires-At together are refused", () => {
    expect(parseExpiryHeaders("3600", "2030-01-01T00:00:00Z")).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test.each(["abc", "-1", "00060", "+60", "60.5", "1e3", "", " 60", "0x10", String(MAX_TTL_SECONDS + 1)])(
    "CRT-5: Stream-TTL %j is refused",
    (raw) => {
      expect(parseTtlHeader(raw)).toMatchObject({ ok: false, error: { code: "invalid" } });
    },
  );

  test("CRT-5: canonical TTLs are accepted, 0 included", () => {
    expect(parseTtlHeader("3600")).toEqual({ ok: true, value: 3600 });
    expect(parseTtlHeader("0")).toEqual({ ok: true, value: 0 });
    expect(parseTtlHeader(String(MAX_TTL_SECONDS))).toEqual({ ok: true, value: MAX_TTL_SECONDS });
    expect(parseTtlHeader(null)).toEqual({ ok: true, value: null });
  });

  test.each([
    "not-a-timestamp",
    "2026-01-01",
    "2026-01-01T00:00:00",
    "2026-13-01T00:00:00Z",
    "2026-02-29T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:60:00Z",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01 00:00:00Z",
    "1767225600",
  ])("CRT-6: Stream-Expires-At %j is not an RFC 3339 date-time", (raw) => {
    expect(parseRfc3339(raw)).toBeNull();
    expect(parseExpiryHeaders(null, raw)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("CRT-6: Z, numeric offsets, fractions and leap days are accepted", () => {
    expect(parseRfc3339("2026-01-01T00:00:00Z")).toBe(T0);
    expect(parseRfc3339("2026-01-01T00:00:00.000+00:00")).toBe(T0);
    expect(parseRfc3339("2026-01-01T01:30:00+01:30")).toBe(T0);
    expect(parseRfc3339("2025-12-31T19:00:00-05:00")).toBe(T0);
    expect(parseRfc3339("2026-01-01t00:00:00.1239z")).toBe(T0 + 123);
    expect(parseRfc3339("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
    expect(parseRfc3339("0050-01-01T00:00:00Z")).toBe(new Date("0050-01-01T00:00:00Z").getTime());
  });

  test("CRT-6: toISOString output always parses back (property)", () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 11, 31)), noInvalidDate: true }), (d) => {
        expect(parseRfc3339(d.toISOString())).toBe(d.getTime());
        expect(parseRfc3339(formatExpiresAt(d.getTime()))).toBe(d.getTime());
      }),
    );
  });

  test("CRT-7: an Expires-At in the past parses, and the stream is expired at once", () => {
    const past = parseExpiryHeaders(null, "2000-01-01T00:00:00Z");
    expect(past.ok).toBe(true);
    if (past.ok) expect(isExpired(past.value, T0, T0)).toBe(true);
  });

  test("TTL-1: a TTL of 0 expires at once", () => {
    expect(isExpired({ ttlSeconds: 0, expiresAtMs: null }, T0, T0)).toBe(true);
  });

  test("TTL-2: a TTL is a sliding idle window from the last access, expired exactly at the deadline", () => {
    const expiry: Expiry = { ttlSeconds: 2, expiresAtMs: null };
    expect(expiryInstantMs(expiry, T0)).toBe(T0 + 2000);
    expect(isExpired(expiry, T0, T0 + 1999)).toBe(false);
    expect(isExpired(expiry, T0, T0 + 2000)).toBe(true);
    // An access at T0 + 1500 moves the deadline.
    expect(isExpired(expiry, T0 + 1500, T0 + 3000)).toBe(false);
  });

  test("TTL-3: Expires-At is fixed whatever the last access", () => {
    const expiry: Expiry = { ttlSeconds: null, expiresAtMs: T0 + 4000 };
    expect(isExpired(expiry, T0 + 3999, T0 + 4000)).toBe(true);
    expect(expiryInstantMs(expiry, T0 + 10_000)).toBe(T0 + 4000);
  });

  test("TTL-3: a stream without TTL or Expires-At never expires", () => {
    expect(isExpired(NO_EXPIRY, 0, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  test("TTL-4 / HD-3: reads and writes renew the TTL; HEAD, DELETE and a repeated PUT do not", () => {
    for (const kind of ["create", "append", "close", "read", "live-read"] as const) expect(renewsTtl(kind)).toBe(true);
    for (const kind of ["head", "delete", "recreate"] as const) expect(renewsTtl(kind)).toBe(false);
  });

  test("TTL-6 / FRK-12: a fork inherits the source's lifetime only when it asks for none", () => {
    const ttl = (s: number): Expiry => ({ ttlSeconds: s, expiresAtMs: null });
    const at = (ms: number): Expiry => ({ ttlSeconds: null, expiresAtMs: ms });
    expect(resolveForkExpiry(NO_EXPIRY, NO_EXPIRY)).toEqual(NO_EXPIRY);
    expect(resolveForkExpiry(ttl(5), NO_EXPIRY)).toEqual(ttl(5));
    expect(resolveForkExpiry(at(T0), NO_EXPIRY)).toEqual(at(T0));
    expect(resolveForkExpiry(NO_EXPIRY, ttl(3600))).toEqual(ttl(3600));
    expect(resolveForkExpiry(ttl(99999), ttl(10))).toEqual(ttl(99999));
    expect(resolveForkExpiry(at(T0 + 3_600_000), ttl(10))).toEqual(at(T0 + 3_600_000));
    expect(resolveForkExpiry(NO_EXPIRY, at(T0))).toEqual(at(T0));
    expect(resolveForkExpiry(ttl(7), at(T0))).toEqual(ttl(7));
    expect(resolveForkExpiry(at(T0 + 1), at(T0))).toEqual(at(T0 + 1));
  });
});
