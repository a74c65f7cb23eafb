// Stream names. A stream lives at `/v1/stream/<name>` (through a node address: `/n/<node>/v1/stream/<name>`);
// the name is the rest of the path, percent-decoded. `Stream-Forked-From` names the source by its path
// on the same service. The reserved first segment `__ds` is the control namespace (subscriptions, JWKS),
// never a stream.
import { RESERVED_SEGMENT, STREAM_PATH_PREFIX } from "./headers.ts";
import { fail, ok, type Parsed } from "./parsed.ts";

/** Longest accepted name, in UTF-16 code units (names travel in every URL and metadata record). */
export const MAX_STREAM_NAME_LENGTH = 1024;

const NODE_PREFIX = /^\/n\/[^/]+(?=\/)/;

/**
 * The stream name from the raw (still percent-encoded) path that follows `/v1/stream/`. Refused: empty
 * names, empty, `.` or `..` segments, control characters, bad percent-encoding, over-long names, and the
 * reserved `__ds` namespace.
 */
export function parseStreamName(rawPathAfterPrefix: string): Parsed<string> {
  let name: string;
  try {
    name = decodeURIComponent(rawPathAfterPrefix);
  } catch {
    return fail("invalid", "stream name has malformed percent-encoding");
  }
  return checkStreamName(name);
}

/** The same checks on a name already decoded (a request target's, src/core/protocol/request-target.ts). */
export function checkStreamName(name: string): Parsed<string> {
  if (name === "") return fail("invalid", "stream name must not be empty");
  if (name.length > MAX_STREAM_NAME_LENGTH) {
    return fail("invalid", `stream name must be at most ${MAX_STREAM_NAME_LENGTH} characters`);
  }
  if (/[\u0000-\u001f\u007f]/.test(name)) return fail("invalid", "stream name must not contain control characters");
  const segments = name.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    return fail("invalid", "stream name must not have empty, '.' or '..' segments");
  }
  if (segments[0] === RESERVED_SEGMENT) return fail("invalid", `'${RESERVED_SEGMENT}' is reserved for control APIs`);
  return ok(name);
}

/**
 * The source name from a `Stream-Forked-From` value: a path on this service, `/v1/stream/<name>`, optionally
 * through a node address (`/n/<node>/v1/stream/<name>`), with no query or fragment.
 */
export function parseForkSourcePath(value: string): Parsed<string> {
  const path = value.replace(NODE_PREFIX, "");
  if (!path.startsWith(STREAM_PATH_PREFIX) || /[?#]/.test(path)) {
    return fail("invalid", `Stream-Forked-From must be a stream path such as ${STREAM_PATH_PREFIX}<name>`);
  }
  return parseStreamName(path.slice(STREAM_PATH_PREFIX.length));
}
