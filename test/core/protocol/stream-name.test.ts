// Rows NAME-* and FRK-1 of docs/protocol-rules.md.
import { describe, expect, test } from "vitest";
import { parseForkSourcePath, parseStreamName } from "../../../src/core/protocol/stream-name.ts";

describe("stream names", () => {
  test("NAME-1: the name is the percent-decoded path after /v1/stream/", () => {
    expect(parseStreamName("create-test-1")).toEqual({ ok: true, value: "create-test-1" });
    expect(parseStreamName("events/abc")).toEqual({ ok: true, value: "events/abc" });
    expect(parseStreamName("a%20b%2Fc")).toEqual({ ok: true, value: "a b/c" });
  });

  test.each(["", "a//b", "a/", "/a", "./a", "a/..", "bad%ZZ", "a%00b", "tab\there", "x".repeat(1025)])(
    "NAME-2: %j is not a stream name",
    (raw) => {
      expect(parseStreamName(raw)).toMatchObject({ ok: false, error: { code: "invalid" } });
    },
  );

  test("NAME-3: the __ds namespace is reserved, only as the first segment", () => {
    expect(parseStreamName("__ds/subscriptions/x").ok).toBe(false);
    expect(parseStreamName("__ds").ok).toBe(false);
    expect(parseStreamName("events/__ds").ok).toBe(true);
  });

  test("FRK-1: Stream-Forked-From is a stream path, directly or through a node address", () => {
    expect(parseForkSourcePath("/v1/stream/src-1")).toEqual({ ok: true, value: "src-1" });
    expect(parseForkSourcePath("/n/node-2/v1/stream/a/b")).toEqual({ ok: true, value: "a/b" });
  });

  test.each(["src-1", "/v2/stream/x", "/v1/stream/", "/v1/stream/x?y=1", "http://host/v1/stream/x", "/v1/stream/__ds/x"])(
    "FRK-1: %j is not a fork source path",
    (value) => {
      expect(parseForkSourcePath(value)).toMatchObject({ ok: false, error: { code: "invalid" } });
    },
  );
});
