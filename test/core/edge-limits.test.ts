// The bounds of docs/limits.md (src/core/edge-limits.ts): defaults when unset, the value when usable, the default
// and one warning naming the var when not; the loopback flag is on only for "1" (or "true").
import { describe, expect, it } from "vitest";
import { DEFAULT_EDGE_LIMITS, edgeLimits } from "../../src/core/edge-limits.ts";

describe("edge limits", () => {
  it("unset vars give the documented defaults and no warning; loopback webhooks are off", () => {
    expect(edgeLimits({})).toEqual({ limits: DEFAULT_EDGE_LIMITS, warnings: [] });
    expect(DEFAULT_EDGE_LIMITS).toMatchObject({ maxStreams: 10_000_000, maxMetaBytes: 1024 * 1024 * 1024, maxSubscriptionBookBytes: 8 * 1024 * 1024, maxSubscriptions: 10_000, maxDsBodyBytes: 65_536, webhookAllowLoopback: false });
  });

  it("a usable value is taken; an unusable one falls back to the default with a warning naming the var", () => {
    const { limits, warnings } = edgeLimits({ MAX_STREAMS: "5", MAX_ACKS_PER_REQUEST: "0", MAX_DS_BODY_BYTES: "1.5", NEGATIVE_CACHE_TTL_MS: "0" });
    expect(limits.maxStreams).toBe(5);
    expect(limits.negativeCacheTtlMs).toBe(0);
    expect(limits.maxAcksPerRequest).toBe(DEFAULT_EDGE_LIMITS.maxAcksPerRequest);
    expect(limits.maxDsBodyBytes).toBe(DEFAULT_EDGE_LIMITS.maxDsBodyBytes);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("MAX_ACKS_PER_REQUEST=0");
    expect(warnings[1]).toContain("MAX_DS_BODY_BYTES=1.5");
  });

  it("WEBHOOK_ALLOW_LOOPBACK is on only for 1 or true", () => {
    for (const [raw, on] of [["1", true], ["true", true], ["0", false], ["", false], ["yes", false]] as const) {
      expect(edgeLimits({ WEBHOOK_ALLOW_LOOPBACK: raw }).limits.webhookAllowLoopback, raw).toBe(on);
    }
  });
});
