// Table CT (src/core/protocol/content-type.ts): a Content-Type is exactly one RFC 9110 media type.
import { describe, expect, test } from "vitest";
import { parseContentTypeHeader } from "../../../src/core/protocol/content-type.ts";

describe("table CT", () => {
  test.each([null, "", "  "])("CT1: %j means no content type (the caller's default)", (raw) => {
    expect(parseContentTypeHeader(raw)).toEqual({ ok: true, value: null });
  });

  test.each([
    "text/plain",
    " application/json; charset=utf-8 ",
    "text/plain;charset=UTF-8",
    "text/plain ; a=b ;c=d",
    "text/plain;",
    'text/plain; a="quoted, with a comma; and \\"escapes\\""',
    "application/vnd.example+json;v=1",
  ])("CT2: %j is one media type, kept trimmed", (raw) => {
    expect(parseContentTypeHeader(raw)).toEqual({ ok: true, value: raw.trim() });
  });

  test.each(["garbage", "text/", "/plain", "text/plain/extra", "text plain"])("CT3: %j is not a media type (400)", (raw) => {
    expect(parseContentTypeHeader(raw)).toMatchObject({ ok: false, error: { code: "invalid" } });
  });

  test.each(["text/plain; charset", "text/plain; a=", "text/plain; a=b c", 'text/plain; a="unterminated', "text/plain; a=\"b\"c"])(
    "CT4: a malformed parameter %j is refused (400)",
    (raw) => expect(parseContentTypeHeader(raw)).toMatchObject({ ok: false, error: { code: "invalid" } }),
  );

  test.each(["text/plain;a=b,text/html", "text/plain, text/html", "text/plain,text/html", "text/plain;a=b;,image/svg+xml", "text/plain;a=b\ttext/html"])(
    "CT5: %j carries more than one media type and is refused (400)",
    (raw) => expect(parseContentTypeHeader(raw)).toMatchObject({ ok: false, error: { code: "invalid" } }),
  );
});
