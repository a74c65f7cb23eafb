// JSON mode (PROTOCOL "JSON Mode"): a stream whose content type is application/json keeps message
// boundaries. An append body must be one valid JSON text; a top-level array is flattened exactly one
// level (each element is a message), any other value is one message; an empty array is refused on
// append and allowed on create. Reads return a JSON array of the messages in range.
//
// Messages are kept as the client wrote them, minus insignificant whitespace: the scanner validates and
// copies tokens, it never re-serializes values, so numbers such as 12345678901234567890 or 1e400 are not
// rounded. A minified JSON text has no raw line break (strings cannot hold one), so the stored framing is
// each message followed by "\n"; offsets are byte positions in that framing, at message boundaries.
import { fail, ok, type Parsed } from "./parsed.ts";

const JSON_MESSAGE_TERMINATOR = "\n";

export type JsonBodyMode = "append" | "create";

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * Validates a JSON append (or initial create) body, given as decoded text, and splits it into messages
 * (each minified). Iterative, so nesting depth is bounded only by the body size limit. More than
 * `maxMessages` messages (MAX_JSON_MESSAGES) is too_large, found while scanning: each message is a string
 * of its own (about 32 bytes besides its text), so an 8 MiB body of millions of tiny messages would
 * cost the node tens of megabytes (docs/limits.md, "Memory budgets").
 */
export function splitJsonBody(text: string, mode: JsonBodyMode, maxMessages = Number.POSITIVE_INFINITY): Parsed<string[]> {
  const scanned = scan(text, maxMessages);
  if (scanned === TOO_MANY) {
    return fail("too_large", `a JSON body holds at most ${maxMessages} messages`, { limit: "MAX_JSON_MESSAGES", max: maxMessages });
  }
  if (typeof scanned === "number") {
    return fail("invalid", "body is not valid JSON", { reason: "invalid_json", at: scanned });
  }
  if (scanned.kind === "value") return ok([scanned.text]);
  if (scanned.elements.length === 0 && mode === "append") {
    return fail("invalid", "an append must not be an empty JSON array", { reason: "empty_array" });
  }
  return ok(scanned.elements);
}

/** A read's body: the messages as one JSON array (`[]` when there are none). */
export function frameJsonArray(messages: readonly string[]): string {
  return `[${messages.join(",")}]`;
}

/** The stored form of accepted messages: each followed by the terminator (one join: no string per message). */
export function encodeJsonMessages(messages: readonly string[]): string {
  return messages.length === 0 ? "" : messages.join(JSON_MESSAGE_TERMINATOR) + JSON_MESSAGE_TERMINATOR;
}

/**
 * Messages back from a stored range that starts and ends on message boundaries. A range that cuts a
 * message (it does not end with the terminator) is a caller bug and throws.
 */
export function decodeJsonMessages(stored: string): string[] {
  if (stored === "") return [];
  if (!stored.endsWith(JSON_MESSAGE_TERMINATOR)) {
    throw new RangeError("stored JSON range does not end on a message boundary");
  }
  return stored.slice(0, -JSON_MESSAGE_TERMINATOR.length).split(JSON_MESSAGE_TERMINATOR);
}

type Scanned =
  | { readonly kind: "value"; readonly text: string }
  | { readonly kind: "array"; readonly elements: string[] };

const TOO_MANY = "too_many";

/** The scanned body, the index of the first offending character, or TOO_MANY past `maxElements` messages. */
function scan(text: string, maxElements: number): Scanned | number | typeof TOO_MANY {
  const stack: ("array" | "object")[] = [];
  const rootIsArray = text.charCodeAt(skipWs(text, 0)) === 0x5b; // "["
  const elements: string[] = [];
  let out = "";
  let elementStart = -1;
  let i = skipWs(text, 0);
  let expectValue = true;

  for (;;) {
    i = skipWs(text, i);
    if (expectValue) {
      const c = text.charCodeAt(i);
      if (c === 0x7b /* { */) {
        stack.push("object");
        out += "{";
        i = skipWs(text, i + 1);
        if (text.charCodeAt(i) === 0x7d /* } */) {
          out += "}";
          stack.pop();
          i++;
          expectValue = false;
        } else {
          const key = scanKey(text, i);
          if (key === null) return i;
          out += key.text;
          i = key.end;
        }
        continue;
      }
      if (c === 0x5b /* [ */) {
        stack.push("array");
        out += "[";
        if (stack.length === 1 && rootIsArray) elementStart = out.length;
        i = skipWs(text, i + 1);
        if (text.charCodeAt(i) === 0x5d /* ] */) {
          out += "]";
          stack.pop();
          i++;
          expectValue = false;
        }
        continue;
      }
      const end = scanScalar(text, i);
      if (end === null) return i;
      out += text.slice(i, end);
      i = end;
      expectValue = false;
      continue;
    }

    const top = stack[stack.length - 1];
    if (top === undefined) break;
    const c = text.charCodeAt(i);
    const atRootArray = stack.length === 1 && rootIsArray;
    if (c === 0x2c /* , */) {
      if (atRootArray) {
        if (elements.length >= maxElements) return TOO_MANY;
        elements.push(out.slice(elementStart));
        out = out.slice(0, elementStart);
      } else {
        out += ",";
      }
      i++;
      if (top === "object") {
        const key = scanKey(text, skipWs(text, i));
        if (key === null) return skipWs(text, i);
        out += key.text;
        i = key.end;
      }
      expectValue = true;
    } else if (c === 0x5d /* ] */ && top === "array") {
      if (atRootArray) {
        if (elements.length >= maxElements) return TOO_MANY;
        elements.push(out.slice(elementStart));
      }
      out += "]";
      stack.pop();
      i++;
    } else if (c === 0x7d /* } */ && top === "object") {
      out += "}";
      stack.pop();
      i++;
    } else {
      return i;
    }
  }

  if (skipWs(text, i) !== text.length) return skipWs(text, i);
  return rootIsArray ? { kind: "array", elements } : { kind: "value", text: out };
}

function skipWs(text: string, from: number): number {
  let i = from;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
    else return i;
  }
}

/** An object key and its colon: `"key":` minified, or null. */
function scanKey(text: string, from: number): { text: string; end: number } | null {
  if (text.charCodeAt(from) !== 0x22) return null;
  const end = scanString(text, from);
  if (end === null) return null;
  const colon = skipWs(text, end);
  if (text.charCodeAt(colon) !== 0x3a /* : */) return null;
  return { text: `${text.slice(from, end)}:`, end: colon + 1 };
}

/** The end of a string, number or literal starting at `from`, or null. */
function scanScalar(text: string, from: number): number | null {
  const c = text.charCodeAt(from);
  if (c === 0x22) return scanString(text, from);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    NUMBER.lastIndex = from;
    return NUMBER.test(text) ? NUMBER.lastIndex : null;
  }
  for (const literal of ["true", "false", "null"]) {
    if (text.startsWith(literal, from)) return from + literal.length;
  }
  return null;
}

/** The index after the closing quote of the string that opens at `from`, or null. */
function scanString(text: string, from: number): number | null {
  let i = from + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return null;
    if (c === 0x5c /* \ */) {
      const e = text[i + 1];
      if (e === "u") {
        if (!HEX4.test(text.slice(i + 2, i + 6))) return null;
        i += 6;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
        i += 2;
      } else {
        return null;
      }
    } else {
      i++;
    }
  }
  return null;
}
