// Rows CRT-*, JSN-5 and FRK-7/FRK-11/FRK-12 of docs/protocol-rules.md (PUT).
import { describe, expect, test } from "vitest";
import { parseStreamClosedHeader } from "../../../src/core/protocol/closure.ts";
import { parseContentTypeHeader } from "../../../src/core/protocol/content-type.ts";
import { ZERO_OFFSET, formatOffset } from "../../../src/core/protocol/offsets.ts";
import {
  checkInitialBody,
  configDifference,
  decideCreate,
  newStreamConfig,
  parseCreateRequest,
  type CreateHeaders,
  type CreateRequest,
  type StreamConfig,
} from "../../../src/core/protocol/stream-config.ts";
import { NO_EXPIRY } from "../../../src/core/protocol/ttl.ts";

const NONE: CreateHeaders = {
  contentType: null,
  ttl: null,
  expiresAt: null,
  closed: null,
  forkedFrom: null,
  forkOffset: null,
  forkSubOffset: null,
};

function request(headers: Partial<CreateHeaders>): CreateRequest {
  const parsed = parseCreateRequest({ ...NONE, ...headers });
  if (!parsed.ok) throw new Error(`unexpected refusal: ${parsed.error.message}`);
  return parsed.value;
}

function created(headers: Partial<CreateHeaders>): StreamConfig {
  return newStreamConfig(request(headers), null);
}

const textPlain = created({ contentType: "text/plain" });

describe("PUT: stateless checks", () => {
  test("CRT-2: no Content-Type means application/octet-stream", () => {
    expect(created({}).contentType).toBe("application/octet-stream");
    expect(created({ contentType: "  " }).contentType).toBe("application/octet-stream");
  });

  test("CRT-2: a Content-Type is kept verbatim (trimmed)", () => {
    expect(created({ contentType: "application/json; charset=utf-8" }).contentType).toBe("application/json; charset=utf-8");
    expect(created({ contentType: "text/plain" }).contentType).toBe("text/plain");
  });

  test.each(["garbage", "text/", "/plain", "text/plain/extra", "text plain"])("CRT-3: Content-Type %j is malformed", (raw) => {
    expect(parseContentTypeHeader(raw)).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(parseCreateRequest({ ...NONE, contentType: raw })).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test("CRT-4 / CRT-5 / CRT-6: lifetime headers are checked before the stream is looked at", () => {
    expect(parseCreateRequest({ ...NONE, ttl: "60", expiresAt: "2030-01-01T00:00:00Z" }).ok).toBe(false);
    expect(parseCreateRequest({ ...NONE, ttl: "00060" }).ok).toBe(false);
    expect(parseCreateRequest({ ...NONE, expiresAt: "not-a-timestamp" }).ok).toBe(false);
    expect(request({ ttl: "3600" }).expiry).toEqual({ ttlSeconds: 3600, expiresAtMs: null });
  });

  test.each([
    ["true", true],
    ["TRUE", true],
    ["True", true],
    ["false", false],
    ["yes", false],
    ["1", false],
    ["", false],
    [null, false],
  ])("CRT-8: Stream-Closed %j counts as %j, and is never an error", (raw, closed) => {
    expect(parseStreamClosedHeader(raw)).toBe(closed);
    expect(request({ closed: raw }).closed).toBe(closed);
  });

  test("CRT-9: fork headers are checked with the rest", () => {
    expect(parseCreateRequest({ ...NONE, forkSubOffset: "0" }).ok).toBe(false);
    expect(request({ forkedFrom: "/v1/stream/src" }).fork).toEqual({ sourceName: "src", anchorPositionBytes: null, subOffset: 0 });
  });
});

describe("PUT: decision", () => {
  test("CRT-10: a free name is created", () => {
    expect(decideCreate(null, request({ contentType: "text/plain" }))).toEqual({ kind: "create" });
  });

  test("CRT-11: the same configuration answers exists (200)", () => {
    const existing = { lifecycle: "live" as const, config: textPlain, eof: false };
    expect(decideCreate(existing, request({ contentType: "text/plain" }))).toEqual({ kind: "exists" });
  });

  test("CRT-12: a different configuration is a conflict naming the difference", () => {
    const existing = { lifecycle: "live" as const, config: textPlain, eof: false };
    expect(decideCreate(existing, request({ contentType: "application/json" }))).toMatchObject({
      kind: "reject",
      error: { code: "conflict", details: { reason: "content_type" } },
    });
  });

  test("CRT-13: a soft-deleted name cannot be created again", () => {
    const existing = { lifecycle: "soft-deleted" as const, config: textPlain, eof: false };
    expect(decideCreate(existing, request({ contentType: "text/plain" }))).toMatchObject({
      kind: "reject",
      error: { code: "conflict", details: { reason: "soft_deleted" } },
    });
  });

  test("CRT-14 / JSN-5: a JSON create body is validated in create mode; [] and no body make an empty stream", () => {
    expect(checkInitialBody("application/json", 2, "[]")).toEqual({ ok: true, value: { kind: "json", messages: [] } });
    expect(checkInitialBody("application/json", 0, null)).toEqual({ ok: true, value: { kind: "json", messages: [] } });
    expect(checkInitialBody("application/json", 13, '[{"a":1},2]')).toEqual({
      ok: true,
      value: { kind: "json", messages: ['{"a":1}', "2"] },
    });
    expect(checkInitialBody("application/json", 3, "{x}")).toMatchObject({ ok: false, error: { code: "invalid" } });
    expect(checkInitialBody("text/plain", 3, null)).toEqual({ ok: true, value: { kind: "bytes" } });
  });
});

describe("PUT: same configuration", () => {
  test("CRT-15: media types compare case-insensitively and without parameters; absent means octet-stream", () => {
    expect(configDifference(created({ contentType: "application/json" }), false, request({ contentType: "APPLICATION/JSON" }))).toBeNull();
    expect(configDifference(textPlain, false, request({ contentType: "text/plain; charset=utf-8" }))).toBeNull();
    expect(configDifference(created({}), false, request({}))).toBeNull();
    expect(configDifference(textPlain, false, request({}))).toBe("content_type");
  });

  test("CRT-16: TTL and Expires-At must be equal (both absent counts as equal)", () => {
    const withTtl = created({ contentType: "text/plain", ttl: "3600" });
    expect(configDifference(withTtl, false, request({ contentType: "text/plain", ttl: "3600" }))).toBeNull();
    expect(configDifference(withTtl, false, request({ contentType: "text/plain", ttl: "7200" }))).toBe("ttl");
    expect(configDifference(withTtl, false, request({ contentType: "text/plain" }))).toBe("ttl");
    const withDeadline = created({ contentType: "text/plain", expiresAt: "2030-01-01T00:00:00Z" });
    expect(configDifference(withDeadline, false, request({ contentType: "text/plain", expiresAt: "2030-01-01T01:00:00+01:00" }))).toBeNull();
    expect(configDifference(withDeadline, false, request({ contentType: "text/plain", expiresAt: "2030-01-01T00:00:01Z" }))).toBe("expires_at");
  });

  test("CRT-17: the request's Stream-Closed must match the stream's current closure", () => {
    expect(configDifference(textPlain, false, request({ contentType: "text/plain" }))).toBeNull();
    expect(configDifference(textPlain, true, request({ contentType: "text/plain" }))).toBe("closed");
    expect(configDifference(textPlain, true, request({ contentType: "text/plain", closed: "true" }))).toBeNull();
    expect(configDifference(textPlain, false, request({ contentType: "text/plain", closed: "true" }))).toBe("closed");
  });

  test("CRT-18: a fork matches on source, given offset and sub-offset; omitted parts match what was resolved", () => {
    const source = {
      streamId: "s1",
      lifecycle: "live" as const,
      contentType: "application/json",
      expiry: { ttlSeconds: 3600, expiresAtMs: null },
      tailPositionBytes: 40,
    };
    const fork = (extra: Partial<CreateHeaders>): CreateRequest => request({ forkedFrom: "/v1/stream/src", ...extra });
    const atZero = fork({ forkOffset: ZERO_OFFSET, forkSubOffset: "2" });
    const config = newStreamConfig(atZero, { source, anchorPositionBytes: 0, forkPositionBytes: 16 });
    expect(configDifference(config, false, atZero)).toBeNull();
    expect(configDifference(config, false, fork({ forkOffset: ZERO_OFFSET }))).toBe("fork_sub_offset");
    expect(configDifference(config, false, fork({ forkOffset: ZERO_OFFSET, forkSubOffset: "3" }))).toBe("fork_sub_offset");
    expect(configDifference(config, false, fork({ forkOffset: formatOffset(8), forkSubOffset: "2" }))).toBe("fork_offset");
    const otherSource = fork({ forkedFrom: "/v1/stream/other", forkOffset: ZERO_OFFSET, forkSubOffset: "2" });
    expect(configDifference(config, false, otherSource)).toBe("fork_source");
    // A plain PUT on a fork differs (here first by the lifetime the fork inherited).
    const plain = request({ contentType: "application/json" });
    expect(configDifference(config, false, plain)).not.toBeNull();
    expect(configDifference({ ...config, ttlSeconds: null }, false, plain)).toBe("fork");

    const atTail = newStreamConfig(fork({}), { source, anchorPositionBytes: 40, forkPositionBytes: 40 });
    expect(configDifference(atTail, false, fork({}))).toBeNull();
    expect(configDifference(atTail, false, fork({ forkOffset: ZERO_OFFSET, forkSubOffset: "0" }))).toBe("fork_offset");
    expect(configDifference(textPlain, false, fork({ contentType: "text/plain" }))).toBe("fork");
  });
});

describe("PUT: new configuration", () => {
  const source = {
    streamId: "s7",
    lifecycle: "live" as const,
    contentType: "application/json",
    expiry: { ttlSeconds: 60, expiresAtMs: null },
    tailPositionBytes: 9,
  };
  const atTail = { source, anchorPositionBytes: 9, forkPositionBytes: 9 };

  test("FRK-7: a fork without Content-Type inherits its source's", () => {
    expect(newStreamConfig(request({ forkedFrom: "/v1/stream/src" }), atTail).contentType).toBe("application/json");
  });

  test("FRK-11 / FRK-12: a fork records source id, anchor, sub-offset and fork point, and its lifetime", () => {
    const forkRequest = request({ forkedFrom: "/v1/stream/src", forkOffset: ZERO_OFFSET, forkSubOffset: "1" });
    const config = newStreamConfig(forkRequest, { source, anchorPositionBytes: 0, forkPositionBytes: 8 });
    expect(config).toEqual({
      contentType: "application/json",
      ttlSeconds: 60,
      expiresAtMs: null,
      fork: { sourceName: "src", sourceStreamId: "s7", anchorPositionBytes: 0, subOffset: 1, forkPositionBytes: 8 },
    });
    expect(newStreamConfig(request({ forkedFrom: "/v1/stream/src", ttl: "5" }), atTail).ttlSeconds).toBe(5);
  });

  test("a plain stream's configuration is what it asked for", () => {
    expect(created({ contentType: "text/plain", ttl: "10" })).toEqual({
      contentType: "text/plain",
      ttlSeconds: 10,
      expiresAtMs: null,
      fork: null,
    });
    expect(created({ contentType: "text/plain" }).fork).toBeNull();
    expect(created({}).expiresAtMs).toBeNull();
    expect(NO_EXPIRY).toEqual({ ttlSeconds: null, expiresAtMs: null });
  });

  test("a fork request without a resolution (or the reverse) is a caller bug", () => {
    expect(() => newStreamConfig(request({ forkedFrom: "/v1/stream/src" }), null)).toThrow();
  });
});
