// Rows SUB-1, SUB-3 and NAME-3 of docs/protocol-rules.md: subscription configuration, the idempotent
// PUT decision, the JSON view, and webhook URL safety.
import { describe, expect, test } from "vitest";
import {
  checkWebhookUrl,
  classifyHost,
  decideSubscriptionPut,
  DEFAULT_LEASE_TTL_MS,
  newSubscription,
  parseIpv6,
  parseStreamPath,
  parseSubscriptionConfig,
  parseSubscriptionId,
  subscriptionView,
} from "../../../src/core/subscriptions/index.ts";
import { subscriptionErrorResponse } from "../../../src/subscriptions/error-wire.ts";
import { config, DEV_POLICY, ORIGIN, splitUrl } from "./fixtures.ts";

const HOOK = "http://127.0.0.1:4321/webhook";

describe("subscription configuration", () => {
  test("SUB-1: create 201, identical 200, different 409; normalized, never a secret in the view", () => {
    const body = { type: "webhook", pattern: "/events/*/", webhook: { url: HOOK }, lease_ttl_ms: 1000, description: "test subscription" };
    const first = config(body);
    expect(first).toEqual({
      type: "webhook",
      pattern: "events/*",
      streams: [],
      webhookUrl: HOOK,
      wakeStream: null,
      leaseTtlMs: 1000,
      description: "test subscription",
    });
    expect(decideSubscriptionPut(null, first)).toEqual({ kind: "create" });
    // Same request again, spelled differently where normalization allows.
    expect(decideSubscriptionPut(first, config({ ...body, pattern: "events/*" }))).toEqual({ kind: "exists" });
    const different = decideSubscriptionPut(first, config({ ...body, lease_ttl_ms: 2000 }));
    expect(different).toMatchObject({ kind: "reject", error: { code: "conflict", details: { reason: "lease_ttl_ms" } } });
    if (different.kind === "reject") expect(subscriptionErrorResponse(different.error).status).toBe(409);

    const record = newSubscription("sub-1", first, Date.UTC(2026, 0, 1), []);
    const view = subscriptionView(record, { kid: "ds_abc", publicOrigin: ORIGIN });
    expect(view).toMatchObject({
      id: "sub-1",
      type: "webhook",
      webhook: { url: HOOK, signing: { alg: "ed25519", kid: "ds_abc", jwks_url: `${ORIGIN}/v1/stream/__ds/jwks.json` } },
      lease_ttl_ms: 1000,
      created_at: "2026-01-01T00:00:00.000Z",
    });
    expect(JSON.stringify(view)).not.toMatch(/secret/);
  });

  test("SUB-1: defaults, explicit streams sorted and deduplicated, pull-wake needs wake_stream", () => {
    const c = config({ type: "pull-wake", streams: ["b", "/a/", "b"], wake_stream: "wake/pool" });
    expect(c).toMatchObject({ streams: ["a", "b"], leaseTtlMs: DEFAULT_LEASE_TTL_MS, wakeStream: "wake/pool", webhookUrl: null });
    const bad: unknown[] = [
      null,
      [],
      { type: "email", pattern: "a" },
      { type: "webhook", webhook: { url: HOOK } }, // neither pattern nor streams
      { type: "webhook", pattern: "a", webhook: {} },
      { type: "pull-wake", pattern: "a" },
      { type: "pull-wake", pattern: "a", wake_stream: "__ds/x" },
      { type: "pull-wake", pattern: "a", wake_stream: "w", lease_ttl_ms: 999 },
      { type: "pull-wake", pattern: "a", wake_stream: "w", lease_ttl_ms: 600_001 },
      { type: "pull-wake", pattern: "a", wake_stream: "w", lease_ttl_ms: 1500.5 },
      { type: "pull-wake", pattern: "a*", wake_stream: "w" },
      { type: "pull-wake", streams: ["a//b"], wake_stream: "w" },
      { type: "pull-wake", pattern: "a", wake_stream: "w", description: 7 },
    ];
    for (const body of bad) {
      expect(parseSubscriptionConfig(body, splitUrl)).toMatchObject({ ok: false, error: { code: "invalid" } });
    }
    expect(parseSubscriptionId("sub-1764409200000").ok).toBe(true);
    expect(parseSubscriptionId("../x").ok).toBe(false);
    expect(parseSubscriptionId("").ok).toBe(false);
  });

  test("NAME-3: no subscription path may name the reserved __ds namespace", () => {
    expect(parseStreamPath("__ds/subscriptions/x").ok).toBe(false);
    expect(parseStreamPath("events/__ds").ok).toBe(true);
  });

  test.each([
    ["http://10.0.0.1/hook", "private"],
    ["https://10.0.0.1/hook", "private"],
    ["https://172.16.5.4/", "private"],
    ["https://192.168.1.1/", "private"],
    ["https://100.64.0.1/", "private"],
    ["https://169.254.169.254/latest/meta-data", "link_local"],
    ["https://127.0.0.1/", "loopback"],
    ["https://0x7f.1/", "loopback"],
    ["https://localhost/", "loopback"],
    ["https://0.0.0.0/", "unspecified"],
    ["https://[::1]/", "loopback"],
    ["https://[::]/", "unspecified"],
    ["https://[fe80::1]/", "link_local"],
    ["https://[fd12:3456::1]/", "private"],
    ["https://[::ffff:10.1.2.3]/", "private"],
    ["https://[::ffff:169.254.1.1]/", "link_local"],
    ["https://[64:ff9b::7f00:1]/", "reserved"],
    ["https://[ff02::1]/", "multicast"],
    ["https://printer.local/", "local_name"],
    ["https://intranet/", "local_name"],
    ["http://example.com/hook", "public"],
    ["ftp://example.com/hook", "public"],
  ])("SUB-3: %s is rejected (%s)", (url, hostClass) => {
    const parts = splitUrl(url);
    expect(parts).not.toBeNull();
    if (parts !== null) expect(classifyHost(parts.host)).toBe(hostClass);
    const parsed = parseSubscriptionConfig({ type: "webhook", pattern: "events/*", webhook: { url } }, splitUrl);
    expect(parsed).toMatchObject({ ok: false, error: { code: "webhook_url_rejected" } });
    if (!parsed.ok) expect(subscriptionErrorResponse(parsed.error)).toMatchObject({ status: 400 });
    if (!parsed.ok) expect(JSON.parse(subscriptionErrorResponse(parsed.error).body)).toMatchObject({ error: { code: "WEBHOOK_URL_REJECTED" } });
  });

  test.each(["https://example.com/hook", "https://8.8.8.8/", "https://[2606:4700::1111]/"])("SUB-3 WU8: %s is accepted", (url) => {
    const parts = splitUrl(url);
    expect(parts !== null && checkWebhookUrl(parts).ok).toBe(true);
  });

  test.each(["http://localhost:8080/", "http://127.0.0.5:1/x", "http://[::1]:9/", "https://127.0.0.1:8443/h"])(
    "SUB-3 WU3/WU4: loopback %s is accepted only with WEBHOOK_ALLOW_LOOPBACK",
    (url) => {
      const parts = splitUrl(url);
      if (parts === null) throw new Error("not a URL");
      expect(checkWebhookUrl(parts, DEV_POLICY.webhook).ok).toBe(true);
      expect(checkWebhookUrl(parts)).toMatchObject({ ok: false, error: { code: "webhook_url_rejected", details: { hostClass: "loopback" } } });
      const strict = parseSubscriptionConfig({ type: "webhook", pattern: "a", webhook: { url } }, splitUrl);
      expect(strict).toMatchObject({ ok: false, error: { code: "webhook_url_rejected" } });
    },
  );

  test("SUB-3 WU1: a webhook URL with a user name or password is rejected, even to a public host", () => {
    for (const url of ["https://user:secret@hooks.example.com/h", "https://user@hooks.example.com/h", "http://a:b@127.0.0.1:9/h"]) {
      const parts = splitUrl(url);
      if (parts === null) throw new Error("not a URL");
      expect(checkWebhookUrl(parts, DEV_POLICY.webhook)).toMatchObject({ ok: false, error: { details: { reason: "credentials" } } });
    }
  });

  test("SUB-3 WU2: the service's own origin is rejected: a public host on any port or scheme, a loopback port under every loopback spelling", () => {
    const policy = { allowLoopback: true, serviceOrigins: ["https://streams.example.com", "http://127.0.0.1:8787"] };
    const check = (url: string): ReturnType<typeof checkWebhookUrl> => {
      const parts = splitUrl(url);
      if (parts === null) throw new Error("not a URL");
      return checkWebhookUrl(parts, policy);
    };
    for (const url of [
      "https://streams.example.com/v1/stream/mine",
      "https://STREAMS.example.com:443/x",
      "https://streams.example.com:8443/x",
      "https://streams.example.com./x",
      "http://127.0.0.1:8787/v1/stream/x",
      "http://localhost:8787/v1/stream/x",
      "http://[::1]:8787/x",
      "https://127.0.0.2:8787/x",
    ]) {
      expect(check(url), url).toMatchObject({ ok: false, error: { code: "webhook_url_rejected", details: { reason: "service_origin" } } });
    }
    // Another port on loopback is another process (the conformance receiver next to the service).
    expect(check("http://127.0.0.1:4321/webhook").ok).toBe(true);
    expect(check("https://hooks.example.com/x").ok).toBe(true);
  });

  test("SUB-3: not a URL at all is rejected the same way", () => {
    const parsed = parseSubscriptionConfig({ type: "webhook", pattern: "a", webhook: { url: "not a url" } }, splitUrl);
    expect(parsed).toMatchObject({ ok: false, error: { code: "webhook_url_rejected" } });
  });

  test("IPv6 literals parse with ::, embedded IPv4 and brackets; malformed ones do not", () => {
    expect(parseIpv6("[::1]")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIpv6("2001:db8::ff00:42:8329")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0xff00, 0x42, 0x8329]);
    expect(parseIpv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    for (const bad of ["1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "::g", "1.2.3.4", "example.com"]) {
      expect(parseIpv6(bad)).toBeNull();
    }
  });
});
