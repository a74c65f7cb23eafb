// Rows SSE-* of docs/protocol-rules.md, parsed back the way the conformance suite parses events.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { readEndFlags } from "../../../src/core/protocol/closure.ts";
import { sseDataEncoding } from "../../../src/core/protocol/content-type.ts";
import { frameJsonArray } from "../../../src/core/protocol/json-mode.ts";
import { SSE_CONTENT_TYPE, encodeBase64, encodeSseData, sseControlEvent, sseDataEvent } from "../../../src/core/protocol/sse.ts";

/** SSE parsing as the suite does it: split on blank lines, join `data:` lines with "\n", strip one space. */
function parseEvents(text: string): { type: string; data: string }[] {
  const events: { type: string; data: string }[] = [];
  for (const block of text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n\n")) {
    let type = "";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) type = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (type !== "" && data.length > 0) events.push({ type, data: data.join("\n") });
  }
  return events;
}

describe("SSE", () => {
  test("SSE-1: the response content type is exactly text/event-stream", () => {
    expect(SSE_CONTENT_TYPE).toBe("text/event-stream");
  });

  test("SSE-2: text/* and application/json carry text; every other type base64", () => {
    expect(sseDataEncoding("text/plain")).toBe("text");
    expect(sseDataEncoding("Text/HTML; charset=utf-8")).toBe("text");
    expect(sseDataEncoding("application/json")).toBe("text");
    for (const type of ["application/octet-stream", "application/x-protobuf", "image/png", "application/ndjson"]) {
      expect(sseDataEncoding(type)).toBe("base64");
    }
  });

  test("SSE-2: base64 is standard and padded", () => {
    expect(encodeBase64(new Uint8Array([0x48, 0x65, 0x6c, 0x6c, 0x6f]))).toBe("SGVsbG8=");
    expect(encodeBase64(new Uint8Array([]))).toBe("");
    expect(encodeBase64(new Uint8Array([0xff, 0xfe, 0xfd]))).toBe("//79");
    expect(encodeBase64(new Uint8Array([0, 1]))).toBe("AAE=");
  });

  test("SSE-2 / SSE-4: base64 agrees with Node and always has a length that is a multiple of 4 (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const encoded = encodeBase64(bytes);
        expect(encoded).toBe(Buffer.from(bytes).toString("base64"));
        expect(encoded.length % 4).toBe(0);
      }),
    );
  });

  test("SSE-3: each payload line gets its own data: prefix, with no space after the colon", () => {
    expect(sseDataEvent("line1\nline2\nline3")).toBe("event: data\ndata:line1\ndata:line2\ndata:line3\n\n");
    expect(encodeSseData(" lead")).toBe("data: lead\n\n");
  });

  test.each([
    "safe content\r\n\r\nevent: control\r\ndata: {\"injected\":true}\r\n\r\nmore safe content",
    "start\n\nevent: data\ndata: fake-event\n\nend",
    'start\r\revent: control\rdata: {"cr_injected":true}\r\rend',
  ])("SSE-3: payload line breaks can never end an event or inject one: %j", (payload) => {
    const text = sseDataEvent(payload) + sseControlEvent({ nextOffset: "o", cursor: "1", flags: readEndFlags(1, 1, false) });
    const events = parseEvents(text);
    expect(events.map((e) => e.type)).toEqual(["data", "control"]);
    expect(JSON.parse(events[1]?.data ?? "")).toEqual({ streamNextOffset: "o", streamCursor: "1", upToDate: true });
    expect(events[0]?.data).toBe(payload.split(/\r\n|\r|\n/).join("\n"));
  });

  test("SSE-3: any text payload survives up to line-terminator normalization (property)", () => {
    fc.assert(
      fc.property(fc.string(), (payload) => {
        const events = parseEvents(sseDataEvent(payload) + sseControlEvent({ nextOffset: "o", cursor: "1", flags: readEndFlags(0, 1, false) }));
        const data = events.filter((e) => e.type === "data");
        expect(data.length).toBeLessThanOrEqual(1);
        expect(events.filter((e) => e.type === "control")).toHaveLength(1);
      }),
    );
  });

  test("SSE-4: a JSON data event is one complete array", () => {
    const event = sseDataEvent(frameJsonArray(['{"n":1}', '{"n":2}']));
    expect(JSON.parse(parseEvents(event)[0]?.data ?? "")).toEqual([{ n: 1 }, { n: 2 }]);
  });

  test("SSE-5 / SSE-6: control of an open stream has offset and cursor, and upToDate only at the tail", () => {
    expect(sseControlEvent({ nextOffset: "a", cursor: "77", flags: readEndFlags(5, 9, false) })).toBe(
      'event: control\ndata:{"streamNextOffset":"a","streamCursor":"77"}\n\n',
    );
    expect(sseControlEvent({ nextOffset: "a", cursor: "77", flags: readEndFlags(9, 9, false) })).toBe(
      'event: control\ndata:{"streamNextOffset":"a","streamCursor":"77","upToDate":true}\n\n',
    );
  });

  test("SSE-7: the control event matches the suite's regex for a start at the tail", () => {
    const text = sseControlEvent({ nextOffset: "0000000000000000_0000000000000000", cursor: "5", flags: readEndFlags(0, 0, false) });
    const match = /event: control\s*\n\s*data:({[^}]+})/.exec(text);
    expect(JSON.parse(match?.[1] ?? "")).toMatchObject({ upToDate: true, streamNextOffset: "0000000000000000_0000000000000000" });
  });

  test("SSE-8: EOF carries streamClosed and upToDate, and no cursor", () => {
    const text = sseControlEvent({ nextOffset: "z", cursor: "77", flags: readEndFlags(9, 9, true) });
    expect(JSON.parse(parseEvents(text)[0]?.data ?? "")).toEqual({ streamNextOffset: "z", streamClosed: true, upToDate: true });
  });
});
