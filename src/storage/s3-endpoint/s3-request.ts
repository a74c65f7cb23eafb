// Reading the parts of an S3 request the embedded endpoint acts on: the path-style target, the access key,
// Range, the conditional headers and the ListObjectsV2 query. Pure functions of the request; no storage here.

/** `/<bucket>/<key>`: `bucket` undefined is the service root, `key` undefined a bucket-level request. */
export interface Target {
  bucket?: string;
  key?: string;
}

/** Splits a path-style pathname; `null` when its percent-encoding is malformed. Keys may contain `/`. */
export function parseTarget(pathname: string): Target | null {
  const path = pathname.replace(/^\//, "");
  if (path === "") return {};
  const slash = path.indexOf("/");
  const rawBucket = slash < 0 ? path : path.slice(0, slash);
  // `/<bucket>/` is the bucket itself, as S3 treats it under path-style addressing.
  const rawKey = slash < 0 || slash === path.length - 1 ? undefined : path.slice(slash + 1);
  try {
    const bucket = decodeURIComponent(rawBucket);
    return rawKey === undefined ? { bucket } : { bucket, key: decodeURIComponent(rawKey) };
  } catch {
    return null;
  }
}

/**
 * The access key id a request claims: from `Authorization: AWS4-HMAC-SHA256 Credential=<id>/...` or a
 * presigned URL's `X-Amz-Credential`. `undefined` when the request is anonymous, `""` when it carries
 * credentials this endpoint cannot read (e.g. SigV2).
 */
export function claimedAccessKeyId(request: Request, url: URL): string | undefined {
  const authorization = request.headers.get("authorization");
  if (authorization !== null) return /Credential=([^/,\s]+)\//.exec(authorization)?.[1] ?? "";
  const credential = url.searchParams.get("X-Amz-Credential");
  if (credential !== null) return /^([^/]+)\//.exec(credential)?.[1] ?? "";
  return undefined;
}

/** Strips the quotes (and a weak `W/` prefix) S3 clients put around ETags; R2 wants the bare value. */
export function bareEtag(etag: string): string {
  return etag.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` as an R2 range. Anything else is ignored, as RFC 9110 allows. */
export function parseRange(header: string | null): R2Range | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header?.trim() ?? "");
  if (match === null) return undefined;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return undefined;
  if (first === "") return { suffix: Number(last) };
  const offset = Number(first);
  if (last === "") return { offset };
  const end = Number(last);
  // A last byte before the first is a syntactically invalid range: ignored, so the whole object is sent.
  return end < offset ? undefined : { offset, length: end - offset + 1 };
}

/** The `[start, end]` (inclusive) bytes R2 actually returned for a ranged get of an object of `size`. */
export function servedRange(range: R2Range, size: number): { start: number; end: number } {
  // Read the fields by value, not with `in`: the `range` R2 hands back has all three keys, unused ones
  // undefined (`{ offset: 1, length: 3, suffix: undefined }`).
  const { offset, length, suffix } = range as { offset?: number; length?: number; suffix?: number };
  if (offset === undefined && suffix !== undefined) return { start: Math.max(0, size - suffix), end: size - 1 };
  const start = offset ?? 0;
  const end = length === undefined ? size - 1 : Math.min(size - 1, start + length - 1);
  return { start, end };
}

export type PutCondition =
  | { kind: "none" }
  | { kind: "conditional"; onlyIf: R2Conditional; ifMatch?: string }
  | { kind: "unsupported"; reason: string };

/**
 * The write preconditions mink relies on: `If-None-Match: *` (create-only) and `If-Match: <etag>` in either
 * the quoted or the bare form, as R2 and AWS accept. ETag lists and other forms are refused rather than
 * half-honoured, because a silently ignored precondition would break fencing.
 */
export function parsePutCondition(headers: Headers): PutCondition {
  const ifNoneMatch = headers.get("if-none-match")?.trim();
  const ifMatch = headers.get("if-match")?.trim();
  if (headers.has("if-modified-since") || headers.has("if-unmodified-since")) {
    return { kind: "unsupported", reason: "date preconditions on PUT are not supported by this endpoint" };
  }
  if (ifNoneMatch === undefined && ifMatch === undefined) return { kind: "none" };
  if (ifNoneMatch !== undefined && ifNoneMatch !== "*") {
    return { kind: "unsupported", reason: "If-None-Match on PUT supports only *" };
  }
  if (ifMatch !== undefined && (ifMatch === "" || ifMatch.includes(","))) {
    return { kind: "unsupported", reason: "If-Match on PUT supports a single ETag" };
  }
  const onlyIf: R2Conditional = {};
  // R2's own spelling of "only if absent" is `etagDoesNotMatch: "*"`.
  if (ifNoneMatch !== undefined) onlyIf.etagDoesNotMatch = "*";
  if (ifMatch === undefined) return { kind: "conditional", onlyIf };
  onlyIf.etagMatches = bareEtag(ifMatch);
  return { kind: "conditional", onlyIf, ifMatch: onlyIf.etagMatches };
}

function etagListMatches(header: string, etag: string): boolean {
  return header.split(",").some((candidate) => candidate.trim() === "*" || bareEtag(candidate) === etag);
}

/** Seconds since the epoch, the granularity of HTTP dates; `undefined` for a missing or unreadable date. */
function httpDateSeconds(header: string | null): number | undefined {
  if (header === null) return undefined;
  const time = Date.parse(header);
  return Number.isNaN(time) ? undefined : Math.floor(time / 1000);
}

/**
 * Evaluates GET/HEAD preconditions against one snapshot of the object, in RFC 9110 order (which is also
 * what AWS documents): a failed If-Match / If-Unmodified-Since is 412, a failed If-None-Match /
 * If-Modified-Since is 304. `undefined` when the read may proceed.
 */
export function failedReadPrecondition(headers: Headers, object: R2Object): 304 | 412 | undefined {
  const uploaded = Math.floor(object.uploaded.getTime() / 1000);
  const ifMatch = headers.get("if-match");
  if (ifMatch !== null) {
    if (!etagListMatches(ifMatch, object.etag)) return 412;
  } else {
    const unmodifiedSince = httpDateSeconds(headers.get("if-unmodified-since"));
    if (unmodifiedSince !== undefined && uploaded > unmodifiedSince) return 412;
  }
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch !== null) return etagListMatches(ifNoneMatch, object.etag) ? 304 : undefined;
  const modifiedSince = httpDateSeconds(headers.get("if-modified-since"));
  return modifiedSince !== undefined && uploaded <= modifiedSince ? 304 : undefined;
}

export interface ListQuery {
  prefix: string;
  delimiter?: string;
  continuationToken?: string;
  startAfter?: string;
  maxKeys: number;
  encodingType?: "url";
}

const MAX_KEYS = 1000;

/** ListObjectsV2's query parameters; a string is the InvalidArgument message for a malformed query. */
export function parseListQuery(params: URLSearchParams): ListQuery | string {
  const maxKeysText = params.get("max-keys")?.trim() ?? String(MAX_KEYS);
  if (!/^\d+$/.test(maxKeysText)) return "Provided max-keys not an integer or within integer range";
  const encodingType = params.get("encoding-type");
  if (encodingType !== null && encodingType !== "url") return "Invalid Encoding Method specified in Request";
  // Empty values mean "not given", as S3 treats them.
  const optional = (name: string): string | undefined => params.get(name) || undefined;
  const query: ListQuery = { prefix: params.get("prefix") ?? "", maxKeys: Math.min(Number(maxKeysText), MAX_KEYS) };
  const delimiter = optional("delimiter");
  const continuationToken = optional("continuation-token");
  const startAfter = optional("start-after");
  if (delimiter !== undefined) query.delimiter = delimiter;
  if (continuationToken !== undefined) query.continuationToken = continuationToken;
  if (startAfter !== undefined) query.startAfter = startAfter;
  if (encodingType !== null) query.encodingType = encodingType;
  return query;
}
