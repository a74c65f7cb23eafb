// Table ACT (src/core/protocol/active-content.ts): which stream types a browser would run.
import { describe, expect, test } from "vitest";
import { isActiveContentType } from "../../../src/core/protocol/active-content.ts";

describe("table ACT", () => {
  test.each(["text/html", "TEXT/HTML; charset=utf-8", "application/xhtml+xml"])("ACT1: %s is active", (type) => expect(isActiveContentType(type)).toBe(true));
  test.each(["image/svg+xml", "text/xml", "application/xml", "application/atom+xml", "text/xsl"])("ACT2: %s is active", (type) =>
    expect(isActiveContentType(type)).toBe(true),
  );
  test.each(["text/javascript", "application/javascript", "application/x-javascript", "application/ecmascript", " text/ecmascript "])(
    "ACT3: %s is active",
    (type) => expect(isActiveContentType(type)).toBe(true),
  );
  test.each(["text/plain", "application/json", "application/octet-stream", "text/event-stream", "image/png", "text/css"])("ACT4: %s is not", (type) =>
    expect(isActiveContentType(type)).toBe(false),
  );
  test.each(["text/plain;a=b,text/html", "text/plain, image/svg+xml", 'text/plain; a="x,text/javascript"', "application/json,application/xhtml+xml;q=1"])(
    "ACT5: %s lists an active type and is active",
    (type) => expect(isActiveContentType(type)).toBe(true),
  );
});
