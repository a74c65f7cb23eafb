// Rows JSN-* of docs/protocol-rules.md.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  decodeJsonMessages,
  encodeJsonMessages,
  frameJsonArray,
  splitJsonBody,
} from "../../../src/core/protocol/json-mode.ts";

function messages(text: string, mode: "append" | "create" = "append"): string[] {
  const result = splitJsonBody(text, mode);
  if (!result.ok) throw new Error(`unexpected refusal of ${text}: ${result.error.message}`);
  return result.value;
}

describe("JSON mode", () => {
  test.each([
    "{ invalid json }",
    "",
    "   ",
    "[1,]",
    "[1 2]",
    '{"a":1,}',
    '{"a" 1}',
    "01",
    "-",
    "1.",
    ".5",
    "+1",
    "tru",
    "nul",
    "[1]]",
    "{}}",
    '"unterminated',
    '"bad \\x escape"',
    '"bad \\u12G4"',
    '"raw \n newline"',
    "\uFEFF{}",
    "NaN",
    "'single'",
    "[1] [2]",
  ])("JSN-1: %j is not one valid JSON text", (text) => {
    expect(splitJsonBody(text, "append")).toMatchObject({ ok: false, error: { code: "invalid", details: { reason: "invalid_json" } } });
  });

  test("JSN-2: a top-level array is flattened exactly one level", () => {
    expect(messages('[{"event": "a"}, {"event": "b"}]')).toEqual(['{"event":"a"}', '{"event":"b"}']);
    expect(messages("[[1,2], [3,4]]")).toEqual(["[1,2]", "[3,4]"]);
    expect(messages("[[[1,2,3]]]")).toEqual(["[[1,2,3]]"]);
    expect(messages('[{"id":1},{"id":2},{"id":3}]')).toHaveLength(3);
  });

  test("JSN-3: any other top-level value is one message", () => {
    expect(messages('{"event": "created"}')).toEqual(['{"event":"created"}']);
    for (const value of ['"string value"', "42", "true", "false", "null", "-1.5e+3"]) {
      expect(messages(value)).toEqual([value]);
    }
  });

  test("JSN-4: an empty array is refused on append", () => {
    expect(splitJsonBody("[]", "append")).toMatchObject({ ok: false, error: { details: { reason: "empty_array" } } });
    expect(splitJsonBody(" [ ] ", "append").ok).toBe(false);
  });

  test("JSN-5: an empty array creates a stream with no messages", () => {
    expect(messages("[]", "create")).toEqual([]);
  });

  test("JSN-6: insignificant whitespace is dropped, tokens are kept verbatim", () => {
    expect(messages('\n { "a" : [ 1 , 2 ] ,\t"b" : "x y" } \r\n')).toEqual(['{"a":[1,2],"b":"x y"}']);
    expect(messages("12345678901234567890")).toEqual(["12345678901234567890"]);
    expect(messages("[1e400, -0, 0.10]")).toEqual(["1e400", "-0", "0.10"]);
    expect(messages('"\\u00e9\\n\\"q\\""')).toEqual(['"\\u00e9\\n\\"q\\""']);
  });

  test("JSN-6: messages parse to the same values as the body's elements (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { minLength: 1, maxLength: 8 }), fc.constantFrom(0, 2), (values, indent) => {
        const body = JSON.stringify(values, null, indent);
        const split = messages(body);
        expect(split.map((m) => JSON.parse(m) as unknown)).toEqual(JSON.parse(body));
        for (const message of split) expect(message).not.toMatch(/[\r\n]/);
      }),
    );
  });

  test("JSN-1: the validator agrees with JSON.parse on arbitrary text (property)", () => {
    const fragments = fc.array(fc.constantFrom("{", "}", "[", "]", ",", ":", '"a"', "1", "-", ".5", "e1", "true", " ", "\n", "x"), {
      maxLength: 12,
    });
    fc.assert(
      fc.property(fragments, (parts) => {
        const text = parts.join("");
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        expect(splitJsonBody(text, "create").ok).toBe(valid);
      }),
    );
  });

  test("JSN-7: a read frames messages as one JSON array, [] when there are none", () => {
    expect(frameJsonArray([])).toBe("[]");
    expect(frameJsonArray(['{"a":1}', "2"])).toBe('[{"a":1},2]');
    expect(JSON.parse(frameJsonArray(messages('[{"k":"v"},[1]]')))).toEqual([{ k: "v" }, [1]]);
  });

  test("JSN-8: messages of several appends read back in order as one array", () => {
    const stored = encodeJsonMessages(messages('{"event":"first"}')) + encodeJsonMessages(messages('[{"event":"second"},{"event":"third"}]'));
    expect(JSON.parse(frameJsonArray(decodeJsonMessages(stored)))).toEqual([
      { event: "first" },
      { event: "second" },
      { event: "third" },
    ]);
  });

  test("JSN-10: stored framing is each message plus a newline, and decodes back", () => {
    expect(encodeJsonMessages(['{"a":1}', "2"])).toBe('{"a":1}\n2\n');
    expect(decodeJsonMessages('{"a":1}\n2\n')).toEqual(['{"a":1}', "2"]);
    expect(decodeJsonMessages("")).toEqual([]);
    expect(() => decodeJsonMessages('{"a":1}\n2')).toThrow(RangeError);
  });
});

describe("MAX_JSON_MESSAGES", () => {
  test("a JSON body of more than the bound's messages is too_large, naming the limit; one at the bound is split", () => {
    expect(splitJsonBody("[1,2,3]", "append", 3)).toEqual({ ok: true, value: ["1", "2", "3"] });
    expect(splitJsonBody("[1,2,3,4]", "append", 3)).toMatchObject({ ok: false, error: { code: "too_large", details: { limit: "MAX_JSON_MESSAGES", max: 3 } } });
    expect(splitJsonBody("[1,2,3,4]", "create", 3)).toMatchObject({ ok: false, error: { code: "too_large" } });
    expect(splitJsonBody('{"a":[1,2,3,4]}', "append", 1)).toEqual({ ok: true, value: ['{"a":[1,2,3,4]}'] });
  });

  test("the stored form of messages is each followed by a newline", () => {
    expect(encodeJsonMessages(["1", '{"a":2}'])).toBe('1\n{"a":2}\n');
    expect(encodeJsonMessages([])).toBe("");
  });
});
