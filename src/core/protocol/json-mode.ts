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

/** Where the scan stopped early: the index of the first offending character, or TOO_MANY. */
type Stop = number | typeof TOO_MANY;

/** The scanner's state: the input, the containers open, the minified output and the messages so far. */
interface ScanState {
  readonly text: string;
  readonly maxElements: number;
  readonly rootIsArray: boolean;
  readonly stack: ("array" | "object")[];
  readonly elements: string[];
  out: string;
  elementStart: number;
  i: number;
  expectValue: boolean;
}

/** The scanned body, the index of the first offending character, or TOO_MANY past `maxElements` messages. */
function scan(text: string, maxElements: number): Scanned | Stop {
  const start = skipWs(text, 0);
  const state: ScanState = {
    text,
    maxElements,
    rootIsArray: text.charCodeAt(start) === 0x5b, // "["
    stack: [],
    elements: [],
    out: "",
    elementStart: -1,
    i: start,
    expectValue: true,
  };
  for (;;) {
    state.i = skipWs(text, state.i);
    if (state.expectValue) {
      const stop = scanValueStart(state);
      if (stop !== null) return stop;
      continue;
    }
    if (state.stack.length === 0) break;
    const stop = scanAfterValue(state);
    if (stop !== null) return stop;
  }

  if (skipWs(text, state.i) !== text.length) return skipWs(text, state.i);
  return state.rootIsArray ? { kind: "array", elements: state.elements } : { kind: "value", text: state.out };
}

/** Where a value is expected: opens an object (and reads its first key) or an array, or copies a scalar. */
function scanValueStart(state: ScanState): Stop | null {
  const { text, stack } = state;
  const c = text.charCodeAt(state.i);
  if (c === 0x7b /* { */) {
    stack.push("object");
    state.out += "{";
    state.i = skipWs(text, state.i + 1);
    if (text.charCodeAt(state.i) === 0x7d /* } */) {
      state.out += "}";
      stack.pop();
      state.i++;
      state.expectValue = false;
    } else {
      const key = scanKey(text, state.i);
      if (key === null) return state.i;
      state.out += key.text;
      state.i = key.end;
    }
    return null;
  }
  if (c === 0x5b /* [ */) {
    stack.push("array");
    state.out += "[";
    if (stack.length === 1 && state.rootIsArray) state.elementStart = state.out.length;
    state.i = skipWs(text, state.i + 1);
    if (text.charCodeAt(state.i) === 0x5d /* ] */) {
      state.out += "]";
      stack.pop();
      state.i++;
      state.expectValue = false;
    }
    return null;
  }
  const end = scanScalar(text, state.i);
  if (end === null) return state.i;
  state.out += text.slice(state.i, end);
  state.i = end;
  state.expectValue = false;
  return null;
}

/**
 * After a value inside a container: a comma (a message ends there when the container is the root array;
 * in an object the next key follows) or the container's close. The stack is not empty.
 */
function scanAfterValue(state: ScanState): Stop | null {
  const { text, stack, elements } = state;
  const top = stack[stack.length - 1];
  const c = text.charCodeAt(state.i);
  const atRootArray = stack.length === 1 && state.rootIsArray;
  if (c === 0x2c /* , */) {
    if (atRootArray) {
      if (elements.length >= state.maxElements) return TOO_MANY;
      elements.push(state.out.slice(state.elementStart));
      state.out = state.out.slice(0, state.elementStart);
    } else {
      state.out += ",";
    }
    state.i++;
    if (top === "object") {
      const key = scanKey(text, skipWs(text, state.i));
      if (key === null) return skipWs(text, state.i);
      state.out += key.text;
      state.i = key.end;
    }
    state.expectValue = true;
  } else if (c === 0x5d /* ] */ && top === "array") {
    if (atRootArray) {
      if (elements.length >= state.maxElements) return TOO_MANY;
      elements.push(state.out.slice(state.elementStart));
    }
    state.out += "]";
    stack.pop();
    state.i++;
  } else if (c === 0x7d /* } */ && top === "object") {
    state.out += "}";
    stack.pop();
    state.i++;
  } else {
    return state.i;
  }
  return null;
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
