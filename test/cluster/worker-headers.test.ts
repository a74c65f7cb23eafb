// The headers by which the Worker tells a node what it decided (src/http/request-target.ts): what was
// authorized, and the verified token's id (counted per token by the node's live-reader share). A client's
// own copies never get through the entry, so a node only ever sees the Worker's.
import { describe, expect, test } from "vitest";
import { AUTHORIZED_HEADER, enterRequest, FORWARDED_TOKEN_ID, markAuthorized } from "../../src/http/request-target.ts";

describe("the Worker's word to a node", () => {
  test("the entry drops a client's own authorization and token id headers", () => {
    const entered = enterRequest(
      new Request("http://mink.test/v1/stream/a?offset=now&live=long-poll", { headers: { [FORWARDED_TOKEN_ID]: "someone-else", [AUTHORIZED_HEADER]: '[{"op":"read","stream":"b"}]', accept: "text/plain" } }),
    );
    expect(entered.ok).toBe(true);
    const request = entered.ok ? entered.value : null;
    expect(request?.headers.get(FORWARDED_TOKEN_ID)).toBeNull();
    expect(request?.headers.get(AUTHORIZED_HEADER)).toBeNull();
    expect(request?.headers.get("accept")).toBe("text/plain");
  });

  test("after a decision the request carries what was authorized and, in token mode, the verified token's id", () => {
    const entered = enterRequest(new Request("http://mink.test/v1/stream/a?offset=now&live=sse"));
    const request = entered.ok ? entered.value : new Request("http://mink.test/");
    markAuthorized(request, [{ op: "read", stream: "a" }], "tok-1");
    expect(JSON.parse(request.headers.get(AUTHORIZED_HEADER) ?? "null")).toEqual([{ op: "read", stream: "a" }]);
    expect(request.headers.get(FORWARDED_TOKEN_ID)).toBe("tok-1");
    const open = enterRequest(new Request("http://mink.test/v1/stream/a"));
    if (open.ok) markAuthorized(open.value, [{ op: "read", stream: "a" }]);
    expect(open.ok && open.value.headers.get(FORWARDED_TOKEN_ID)).toBeNull();
  });
});
