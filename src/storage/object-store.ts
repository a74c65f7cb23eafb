// The object-store port: the only way mink touches durable data.
//
// Every adapter (S3 API over aws4fetch, in-memory) implements this interface and passes the same contract
// suite (test/contract/). ETags cross this port unquoted and opaque: adapters translate to whatever their
// server accepts, so callers never see quoting differences between R2, AWS and radosgw.

/** How a read selects bytes: a window from `offset`, or the last `suffixLength` bytes. */
export type ByteRange = { offset: number; length?: number } | { suffixLength: number };

/** A write that could race is conditional: create-only, or compare-and-swap on the current ETag. */
type PutCondition = { ifNoneMatch: "*" } | { ifMatch: string };

export interface PutOptions {
  condition?: PutCondition;
  contentType?: string;
  /** Stops the request and the adapter's own retries when it aborts (a WAL object's deadline). */
  signal?: AbortSignal;
}

export interface GetOptions {
  /** As for PutOptions. */
  signal?: AbortSignal;
}

export interface PutResult {
  etag: string;
}

export interface ObjectInfo {
  key: string;
  /** Whole-object size in bytes. */
  size: number;
  etag: string;
}

export interface GetResult extends ObjectInfo {
  body: Uint8Array;
  /** First byte of `body` within the object (0 unless a range was asked for). */
  rangeStart: number;
}

export interface ListOptions {
  /** Keys strictly after this one (lexicographic); combined with `prefix`. */
  startAfter?: string;
  /** Opaque token from a previous page. */
  continuationToken?: string;
  /** Page size, at most 1,000 (the S3 limit). */
  maxKeys?: number;
}

export interface ListResult {
  objects: ObjectInfo[];
  /** Present when more keys follow: pass it back as `continuationToken`. */
  nextContinuationToken?: string;
}

export interface ObjectStore {
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult>;
  /** Throws `ObjectStoreError` with kind `not_found` when the key does not exist. */
  get(key: string, range?: ByteRange, options?: GetOptions): Promise<GetResult>;
  /** `null` when the key does not exist. */
  head(key: string): Promise<ObjectInfo | null>;
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  /** Deleting a missing key succeeds (S3 semantics). */
  delete(key: string): Promise<void>;
}

/**
 * The closed set of store failures.
 * - `precondition_failed`: a conditional write lost (the key exists, or the ETag moved on). Never retried.
 * - `not_found`: the key does not exist.
 * - `retryable`: throttling, 5xx, a network failure; the operation may be tried again.
 * - `fatal`: anything else (bad credentials, a malformed request, a range that cannot be satisfied).
 */
export type ObjectStoreErrorKind = "precondition_failed" | "not_found" | "retryable" | "fatal";

export class ObjectStoreError extends Error {
  override readonly name = "ObjectStoreError";
  constructor(
    readonly kind: ObjectStoreErrorKind,
    message: string,
    /** The key the failed operation addressed, for messages and logs. */
    readonly key?: string,
    /** The server's HTTP status, when there was one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export function isStoreError(error: unknown, kind?: ObjectStoreErrorKind): error is ObjectStoreError {
  return error instanceof ObjectStoreError && (kind === undefined || error.kind === kind);
}

/** Lists every object under `prefix`, page by page. */
export async function* listAll(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, "continuationToken"> = {},
): AsyncGenerator<ObjectInfo> {
  let token: string | undefined;
  do {
    const page = await store.list(prefix, { ...options, ...(token === undefined ? {} : { continuationToken: token }) });
    yield* page.objects;
    token = page.nextContinuationToken;
  } while (token !== undefined);
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** ETags cross the port unquoted: `W/"abc"` and `"abc"` both become `abc`. */
export function unquoteEtag(etag: string): string {
  return etag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}
