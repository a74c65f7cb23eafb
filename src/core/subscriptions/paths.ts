// Stream paths and patterns as subscriptions name them: relative to `/v1/stream/`, already decoded,
// leading and trailing slashes dropped. A pattern segment `*` matches exactly one path segment and `**`
// any number of them (zero included); every other segment matches itself literally.
import { RESERVED_SEGMENT } from "../protocol/headers.ts";
import { MAX_STREAM_NAME_LENGTH } from "../protocol/stream-name.ts";
import { fail, ok, type Checked } from "./errors.ts";

function trimSlashes(raw: string): string {
  return raw.replace(/^\/+/, "").replace(/\/+$/, "");
}

function checkSegments(path: string, what: string): Checked<string> {
  if (path === "") return fail("invalid", `${what} must not be empty`);
  if (path.length > MAX_STREAM_NAME_LENGTH) {
    return fail("invalid", `${what} must be at most ${MAX_STREAM_NAME_LENGTH} characters`);
  }
  if (/[\u0000-\u001f\u007f]/.test(path)) return fail("invalid", `${what} must not contain control characters`);
  const segments = path.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    return fail("invalid", `${what} must not have empty, '.' or '..' segments`);
  }
  if (segments[0] === RESERVED_SEGMENT) {
    return fail("invalid", `${what} must not name the reserved '${RESERVED_SEGMENT}' namespace`);
  }
  return ok(path);
}

/** A stream path in a subscription body (`streams`, `wake_stream`, an ack) or a route, normalized. */
export function parseStreamPath(raw: unknown, what = "stream path"): Checked<string> {
  if (typeof raw !== "string") return fail("invalid", `${what} must be a string`);
  const path = checkSegments(trimSlashes(raw), what);
  if (!path.ok) return path;
  if (path.value.includes("*")) return fail("invalid", `${what} must not contain '*'`);
  return path;
}

/** A `pattern`: wildcards only as whole segments (`a*` would be ambiguous, so it is refused). */
export function parsePattern(raw: unknown): Checked<string> {
  if (typeof raw !== "string") return fail("invalid", "pattern must be a string");
  const pattern = checkSegments(trimSlashes(raw), "pattern");
  if (!pattern.ok) return pattern;
  const partial = pattern.value.split("/").some((s) => s.includes("*") && s !== "*" && s !== "**");
  if (partial) return fail("invalid", "pattern wildcards must be whole segments: '*' or '**'");
  return pattern;
}

/**
 * Whether `path` matches `pattern` (both normalized). Dynamic programming over segment positions, so
 * patterns with many `**` stay linear in pattern × path length instead of backtracking exponentially.
 */
export function matchesPattern(pattern: string, path: string): boolean {
  const pat = pattern.split("/");
  const seg = path.split("/");
  // reachable[j]: the first i pattern segments can consume exactly the first j path segments.
  let reachable: boolean[] = Array.from({ length: seg.length + 1 }, (_, j) => j === 0);
  for (const p of pat) {
    const next: boolean[] = new Array<boolean>(seg.length + 1).fill(false);
    for (let j = 0; j <= seg.length; j++) {
      if (p === "**") {
        // Zero segments from here, or one more than the previous column of this row.
        next[j] = reachable[j] === true || (j > 0 && next[j - 1] === true);
      } else if (j > 0 && reachable[j - 1] === true) {
        next[j] = p === "*" || p === seg[j - 1];
      }
    }
    reachable = next;
  }
  return reachable[seg.length] === true;
}
