// Names of the Durable Streams headers and query parameters (lower case: HTTP header names are
// case-insensitive, and lower case is how the runtimes hand them over), and the fixed header values the
// conformance suite expects on every response. Pure data: the HTTP layer sets them.

export const HEADER = {
  contentType: "content-type",
  location: "location",
  etag: "etag",
  ifNoneMatch: "if-none-match",
  cacheControl: "cache-control",
  streamNextOffset: "stream-next-offset",
  streamUpToDate: "stream-up-to-date",
  streamCursor: "stream-cursor",
  streamClosed: "stream-closed",
  streamSeq: "stream-seq",
  streamTtl: "stream-ttl",
  streamExpiresAt: "stream-expires-at",
  streamForkedFrom: "stream-forked-from",
  streamForkOffset: "stream-fork-offset",
  streamForkSubOffset: "stream-fork-sub-offset",
  streamSseDataEncoding: "stream-sse-data-encoding",
  producerId: "producer-id",
  producerEpoch: "producer-epoch",
  producerSeq: "producer-seq",
  producerExpectedSeq: "producer-expected-seq",
  producerReceivedSeq: "producer-received-seq",
} as const;

export const QUERY = { offset: "offset", live: "live", cursor: "cursor" } as const;

/** The path prefix of every stream, and the reserved control namespace under it (subscriptions, JWKS). */
export const STREAM_PATH_PREFIX = "/v1/stream/";
export const RESERVED_SEGMENT = "__ds";

/** On every response, errors, 304s, SSE and preflights included (PROTOCOL "Browser Security Headers"). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "cross-origin",
};

/** Request headers a browser may send cross-origin; `if-none-match` is checked by the suite's preflight. */
const ALLOWED_REQUEST_HEADERS = [
  "content-type",
  "authorization",
  "if-none-match",
  HEADER.streamSeq,
  HEADER.streamTtl,
  HEADER.streamExpiresAt,
  HEADER.streamClosed,
  HEADER.streamForkedFrom,
  HEADER.streamForkOffset,
  HEADER.streamForkSubOffset,
  HEADER.producerId,
  HEADER.producerEpoch,
  HEADER.producerSeq,
];

/** Response headers a browser script may read (everything a client library looks at). */
const EXPOSED_RESPONSE_HEADERS = [
  HEADER.streamNextOffset,
  HEADER.streamCursor,
  HEADER.streamUpToDate,
  HEADER.streamClosed,
  HEADER.streamTtl,
  HEADER.streamExpiresAt,
  HEADER.streamSseDataEncoding,
  HEADER.producerEpoch,
  HEADER.producerSeq,
  HEADER.producerExpectedSeq,
  HEADER.producerReceivedSeq,
  "etag",
  "location",
  "content-type",
];

/** On every response. A wildcard origin: stream access control, if any, is by credentials, not origin. */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_RESPONSE_HEADERS.join(", "),
};

/** Added to the answer of an `OPTIONS` preflight (status 204, empty body). */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-methods": "GET, HEAD, PUT, POST, DELETE, OPTIONS",
  "access-control-allow-headers": ALLOWED_REQUEST_HEADERS.join(", "),
  "access-control-max-age": "86400",
};
