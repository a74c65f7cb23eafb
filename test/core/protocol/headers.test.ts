// Rows SEC-* of docs/protocol-rules.md.
import { describe, expect, test } from "vitest";
import { CORS_HEADERS, HEADER, PREFLIGHT_HEADERS, SECURITY_HEADERS } from "../../../src/core/protocol/headers.ts";

describe("security and CORS headers", () => {
  test("SEC-1: nosniff and a cross-origin resource policy", () => {
    expect(SECURITY_HEADERS).toEqual({
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "cross-origin",
    });
  });

  test("SEC-2: any origin, and every protocol response header exposed", () => {
    expect(CORS_HEADERS["access-control-allow-origin"]).toBe("*");
    const exposed = (CORS_HEADERS["access-control-expose-headers"] ?? "").split(", ");
    for (const name of [
      HEADER.streamNextOffset,
      HEADER.streamCursor,
      HEADER.streamUpToDate,
      HEADER.streamClosed,
      HEADER.producerEpoch,
      HEADER.producerSeq,
      HEADER.producerExpectedSeq,
      HEADER.producerReceivedSeq,
      HEADER.streamSseDataEncoding,
      "etag",
      "location",
    ]) {
      expect(exposed).toContain(name);
    }
  });

  test("SEC-3: the preflight allows every method and, explicitly, if-none-match and every protocol request header", () => {
    expect(PREFLIGHT_HEADERS["access-control-allow-methods"]).toBe("GET, HEAD, PUT, POST, DELETE, OPTIONS");
    const allowed = (PREFLIGHT_HEADERS["access-control-allow-headers"] ?? "").split(", ");
    expect(allowed).not.toContain("*");
    const required = [
      "if-none-match",
      "content-type",
      "authorization",
      HEADER.streamSeq,
      HEADER.streamTtl,
      HEADER.streamExpiresAt,
      HEADER.streamClosed,
      HEADER.streamForkedFrom,
      HEADER.streamForkOffset,
      HEADER.streamForkSubOffset,
      HEADER.producerId,
      HEADER.producerEpoch,
      HEADER.producerSeq,
    ];
    for (const name of required) {
      expect(allowed).toContain(name);
    }
  });

  test("header names are lower case (how the runtimes hand them over)", () => {
    for (const name of Object.values(HEADER)) expect(name).toBe(name.toLowerCase());
  });
});
