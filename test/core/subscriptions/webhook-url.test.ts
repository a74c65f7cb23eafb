// Table WU-H (src/core/subscriptions/webhook-url.ts): IPv6 ranges that reach an IPv4 address through a
// transition mechanism, or are otherwise not public unicast, are refused as webhook targets.
import { describe, expect, test } from "vitest";
import { checkWebhookUrl, classifyHost } from "../../../src/core/subscriptions/webhook-url.ts";
import { DEV_POLICY, splitUrl } from "./fixtures.ts";

const classOf = (url: string): string => {
  const parts = splitUrl(url);
  if (parts === null) throw new Error(`not a URL: ${url}`);
  return classifyHost(parts.host);
};

describe("table WU-H: IPv6 transition and special ranges", () => {
  test.each([
    ["WU-H1", "https://[::1]/", "loopback"],
    ["WU-H2", "https://[::]/", "unspecified"],
    ["WU-H3", "https://[::ffff:127.0.0.1]/", "loopback"],
    ["WU-H3", "https://[::ffff:10.1.2.3]/", "private"],
    ["WU-H3", "https://[::ffff:8.8.8.8]/", "reserved"],
    ["WU-H3", "https://[::ffff:0:169.254.169.254]/", "link_local"],
    ["WU-H3", "https://[::ffff:0:8.8.8.8]/", "reserved"],
    ["WU-H4", "https://[64:ff9b::7f00:1]/", "reserved"],
    ["WU-H4", "https://[64:ff9b::10.0.0.1]/", "private"],
    ["WU-H4", "https://[64:ff9b::8.8.8.8]/", "reserved"],
    ["WU-H4", "https://[64:ff9b:1::a00:1]/", "private"],
    ["WU-H4", "https://[64:ff9b:1:2::8.8.8.8]/", "reserved"],
    ["WU-H5", "https://[2002:7f00:1::]/", "reserved"],
    ["WU-H5", "https://[2002:a9fe:a9fe::1]/", "link_local"],
    ["WU-H5", "https://[2002:c0a8:101::1]/", "private"],
    ["WU-H5", "https://[2002:808:808::1]/", "reserved"],
    ["WU-H6", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "reserved"],
    ["WU-H6", "https://[2001::1]/", "reserved"],
    ["WU-H6", "https://[2001:2::1]/", "reserved"],
    ["WU-H6", "https://[2001:10::1]/", "reserved"],
    ["WU-H6", "https://[2001:1ff::1]/", "reserved"],
    ["WU-H7", "https://[::7f00:1]/", "reserved"],
    ["WU-H7", "https://[::8.8.8.8]/", "reserved"],
    ["WU-H7", "https://[1::1]/", "reserved"],
    ["WU-H7", "https://[1ff::1]/", "reserved"],
    ["WU-H7", "https://[::2:0:0:1]/", "reserved"],
    ["WU-H7", "https://[100::1]/", "reserved"],
    ["WU-H8", "https://[fd00::1]/", "private"],
    ["WU-H8", "https://[fec0::1]/", "private"],
    ["WU-H9", "https://[fe80::1]/", "link_local"],
    ["WU-H10", "https://[ff02::1]/", "multicast"],
    ["WU-H11", "https://[2001:db8::1]/", "reserved"],
    ["WU-H11", "https://[3fff:abc::1]/", "reserved"],
    ["WU-H11", "https://[5f00::1]/", "reserved"],
    ["WU-H12", "https://[2606:4700::1111]/", "public"],
    ["WU-H12", "https://[2001:4860:4860::8888]/", "public"],
    ["WU-H12", "https://[2001:200::1]/", "public"],
    ["WU-H12", "https://[3fff:1000::1]/", "public"],
  ])("%s: %s is %s", (_row, url, hostClass) => {
    expect(classOf(url)).toBe(hostClass);
  });

  test.each(["https://[2002:7f00:1::]/", "http://[2002:7f00:1::]:9/", "http://[64:ff9b::127.0.0.1]:9/", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "https://[64:ff9b::808:808]/", "https://[64:ff9b:1::a00:1]/", "https://[::ffff:8.8.8.8]/"])(
    "WU7: a transition address %s is refused as a webhook target, in production and with the development flag",
    (url) => {
      const parts = splitUrl(url);
      if (parts === null) throw new Error("not a URL");
      expect(checkWebhookUrl(parts)).toMatchObject({ ok: false, error: { code: "webhook_url_rejected" } });
      expect(checkWebhookUrl(parts, DEV_POLICY.webhook).ok).toBe(false);
    },
  );

  test("the 6to4 relay anycast 192.88.99.0/24 is reserved", () => {
    expect(classOf("https://192.88.99.1/")).toBe("reserved");
  });
});
