// SSE framing (PROTOCOL "Read Stream - Live (SSE)"). Every `data` event is followed by a `control` event;
// each data event stands alone (a JSON array, or base64 of whole bytes), so a client can decode it by
// itself. Payload line breaks (CRLF, CR or LF, all SSE line terminators) become separate `data:` lines,
// so stream content can never end an event or inject one. No space after `data:`: clients strip exactly
// one leading space, which would eat a payload's own.
import type { ReadEndFlags } from "./closure.ts";

export const SSE_CONTENT_TYPE = "text/event-stream";

/** The `data:` lines of one event, and the blank line that ends it. */
export function encodeSseData(payload: string): string {
  return `${payload
    .split(/\r\n|\r|\n/)
    .map((line) => `data:${line}`)
    .join("\n")}\n\n`;
}

/** A `data` event. `payload` is text, a JSON array (json-mode.ts), or base64 (`encodeBase64`). */
export function sseDataEvent(payload: string): string {
  return `event: data\n${encodeSseData(payload)}`;
}

export interface SseControl {
  readonly nextOffset: string;
  /** Omitted from the event when the stream is closed (no reconnect follows EOF). */
  readonly cursor: string;
  readonly flags: ReadEndFlags;
}

/**
 * The `control` event after each data event, after a wait that timed out (keep-alive), and first of all
 * when the read starts at the tail. EOF carries `streamClosed` and `upToDate`, and no cursor; after it the
 * server ends the response.
 */
export function sseControlEvent(control: SseControl): string {
  const body: Record<string, string | boolean> = { streamNextOffset: control.nextOffset };
  if (control.flags.closed) {
    body["streamClosed"] = true;
    body["upToDate"] = true;
  } else {
    body["streamCursor"] = control.cursor;
    if (control.flags.upToDate) body["upToDate"] = true;
  }
  return `event: control\n${encodeSseData(JSON.stringify(body))}`;
}

const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Standard padded base64 (RFC 4648 section 4) of one data event's bytes; empty bytes give "". */
export function encodeBase64(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += sextet(n >> 18) + sextet(n >> 12) + sextet(n >> 6) + sextet(n);
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] ?? 0) << 16;
    out += `${sextet(n >> 18)}${sextet(n >> 12)}==`;
  } else if (rest === 2) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += `${sextet(n >> 18)}${sextet(n >> 12)}${sextet(n >> 6)}=`;
  }
  return out;
}

function sextet(n: number): string {
  return BASE64_ALPHABET.charAt(n & 63);
}
