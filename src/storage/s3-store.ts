// The S3-API adapter (R2, AWS, radosgw, the embedded endpoint), signed with aws4fetch.
//
// Retries are ours, bounded, and only for retryable failures. A conditional PUT is never simply resent:
// when its answer is lost (timeout, network error, 5xx) the adapter reads the key back to find out whether
// the write landed (see resolveAmbiguousPut). ETags cross the port unquoted; If-Match is sent in whichever
// form the server matches (R2 and AWS take the quoted ETag, radosgw only the bare one).

import { AwsClient } from "aws4fetch";
import {
  ObjectStoreError,
  sameBytes,
  type ByteRange,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListResult,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  unquoteEtag,
} from "./object-store.ts";
import { backoffMs, DEFAULT_RETRY_POLICY, realSleep, type RetryPolicy } from "./retry-policy.ts";
import { asStoreError, formatEtag, objectUrl, parseContentRange, rangeHeader, s3Failure, windowOf } from "./s3-wire.ts";
import { parseListObjectsV2 } from "./s3-xml.ts";

export interface S3StoreConfig {
  /** e.g. `https://<account>.r2.cloudflarestorage.com` or `http://127.0.0.1:9000`. */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** `path`: `<endpoint>/<bucket>/<key>`; `virtual`: `<scheme>://<bucket>.<host>/<key>`. Default `path`. */
  addressing?: "path" | "virtual";
  /** How If-Match carries the ETag. `auto` (default) tries quoted, falls back to bare on 412, and remembers. */
  ifMatchEtagForm?: "auto" | "quoted" | "bare";
  retry?: RetryPolicy;
  /** A request with no answer after this long counts as a lost answer. Default 30 s. */
  requestTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** The fetch to sign and send with (tests may pass undici's). Default: the global fetch. */
  fetch?: typeof fetch;
}

type Method = "GET" | "HEAD" | "PUT" | "DELETE";

interface RequestSpec {
  method: Method;
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Aborts the request (besides the request timeout): the caller's deadline. */
  signal?: AbortSignal | undefined;
}

export class S3Store implements ObjectStore {
  private readonly client: AwsClient;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly requestTimeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private ifMatchForm: "unknown" | "quoted" | "bare";

  constructor(private readonly config: S3StoreConfig) {
    this.client = new AwsClient({
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      region: config.region,
      service: "s3",
      retries: 0,
    });
    this.retry = config.retry ?? DEFAULT_RETRY_POLICY;
    this.sleep = config.sleep ?? realSleep;
    this.random = config.random ?? Math.random;
    this.requestTimeoutMs = config.requestTimeoutMs ?? 30_000;
    this.fetchImpl = config.fetch ?? ((input, init) => fetch(input, init));
    const form = config.ifMatchEtagForm ?? "auto";
    this.ifMatchForm = form === "auto" ? "unknown" : form;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const condition = options.condition;
    const headers: Record<string, string> = { "content-type": options.contentType ?? "application/octet-stream" };
    const signal = options.signal;
    if (condition === undefined) {
      return this.withRetries(key, async () => this.putOnce(key, body, headers, signal), signal);
    }
    if ("ifNoneMatch" in condition) {
      return this.putConditional(key, body, { ...headers, "if-none-match": "*" }, null, signal);
    }
    return this.putIfMatch(key, body, headers, condition.ifMatch, signal);
  }

  async get(key: string, range?: ByteRange, options: GetOptions = {}): Promise<GetResult> {
    const signal = options.signal;
    return this.withRetries(key, async () => {
      const headers: Record<string, string> = range === undefined ? {} : { range: rangeHeader(range) };
      const response = await this.send({ method: "GET", key, headers, signal });
      if (!response.ok) throw await s3Failure(response, key);
      const body = new Uint8Array(await response.arrayBuffer());
      const etag = unquoteEtag(response.headers.get("etag") ?? "");
      if (response.status === 206) {
        const { start, size } = parseContentRange(response.headers.get("content-range"), key);
        return { key, etag, size, body, rangeStart: start };
      }
      // A server that ignores Range answers 200 with the whole object: cut the window ourselves.
      const size = body.byteLength;
      const [start, end] = range === undefined ? [0, size] : windowOf(range, size, key);
      return { key, etag, size, body: start === 0 && end === size ? body : body.slice(start, end), rangeStart: start };
    }, signal);
  }

  async head(key: string): Promise<ObjectInfo | null> {
    return this.withRetries(key, async () => {
      const response = await this.send({ method: "HEAD", key });
      if (response.status === 404) return null;
      if (!response.ok) throw await s3Failure(response, key);
      return {
        key,
        etag: unquoteEtag(response.headers.get("etag") ?? ""),
        size: Number(response.headers.get("content-length") ?? "0"),
      };
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    return this.withRetries(prefix, async () => {
      const query: Record<string, string> = { "list-type": "2", prefix, "max-keys": String(Math.min(options.maxKeys ?? 1000, 1000)) };
      if (options.continuationToken !== undefined) query["continuation-token"] = options.continuationToken;
      if (options.startAfter !== undefined) query["start-after"] = options.startAfter;
      const response = await this.send({ method: "GET", query });
      if (!response.ok) throw await s3Failure(response, prefix);
      const page = parseListObjectsV2(await response.text());
      return page.nextContinuationToken === undefined
        ? { objects: page.objects }
        : { objects: page.objects, nextContinuationToken: page.nextContinuationToken };
    });
  }

  async delete(key: string): Promise<void> {
    return this.withRetries(key, async () => {
      const response = await this.send({ method: "DELETE", key });
      if (!response.ok && response.status !== 404) throw await s3Failure(response, key);
      await response.body?.cancel();
    });
  }

  private async putOnce(key: string, body: Uint8Array, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<PutResult> {
    const response = await this.send({ method: "PUT", key, headers, body, signal });
    if (!response.ok) throw await s3Failure(response, key);
    await response.body?.cancel();
    return { etag: unquoteEtag(response.headers.get("etag") ?? "") };
  }

  /** Compare-and-swap, sending the ETag in the form this server matches. */
  private async putIfMatch(
    key: string,
    body: Uint8Array,
    headers: Record<string, string>,
    etag: string,
    signal: AbortSignal | undefined,
  ): Promise<PutResult> {
    const bare = unquoteEtag(etag);
    const form = this.ifMatchForm === "unknown" ? "quoted" : this.ifMatchForm;
    try {
      const result = await this.putConditional(key, body, { ...headers, "if-match": formatEtag(bare, form) }, bare, signal);
      if (this.ifMatchForm === "unknown") this.ifMatchForm = form;
      return result;
    } catch (error) {
      if (this.ifMatchForm !== "unknown" || !(error instanceof ObjectStoreError) || error.kind !== "precondition_failed") throw error;
      // Either the ETag really moved on, or this server only matches the bare form (radosgw). A second
      // conditional write with the other form is safe: it lands only if the ETag still matches.
      const result = await this.putConditional(key, body, { ...headers, "if-match": bare }, bare, signal);
      this.ifMatchForm = "bare";
      return result;
    }
  }

  /**
   * A conditional PUT: `expectedEtag` null means create-only. Retryable failures are resolved by reading
   * the key back rather than resending blindly. Once `signal` aborted nothing more is sent: the caller's
   * deadline passed and the outcome stays unknown (the error is retryable, never "absent").
   */
  private async putConditional(
    key: string,
    body: Uint8Array,
    headers: Record<string, string>,
    expectedEtag: string | null,
    signal?: AbortSignal,
  ): Promise<PutResult> {
    for (let attempt = 1; ; attempt++) {
      let failure: ObjectStoreError;
      try {
        const response = await this.send({ method: "PUT", key, headers, body, signal });
        if (response.ok) {
          await response.body?.cancel();
          return { etag: unquoteEtag(response.headers.get("etag") ?? "") };
        }
        // AWS answers a CAS on a missing key with 404: for the caller the swap simply lost.
        if (response.status === 404 && expectedEtag !== null) {
          await response.body?.cancel();
          throw new ObjectStoreError("precondition_failed", `compare-and-swap on a missing key: ${key}`, key, 404);
        }
        failure = await s3Failure(response, key);
      } catch (error) {
        failure = asStoreError(error, key);
      }
      if (failure.kind !== "retryable") throw failure;
      if (attempt >= this.retry.maxAttempts || isAborted(signal)) throw failure;
      await this.sleep(backoffMs(this.retry, attempt, this.random));
      if (isAborted(signal)) throw failure;
      const outcome = await this.resolveAmbiguousPut(key, body, expectedEtag, signal);
      if (outcome.kind === "landed") return { etag: outcome.etag };
      if (outcome.kind === "lost") {
        throw new ObjectStoreError("precondition_failed", `conditional write lost to another writer: ${key}`, key, 412);
      }
      // "absent": nothing landed; the next attempt is still conditional, so it is safe to send.
    }
  }

  /** After a PUT whose answer was lost: did our write land, did another writer win, or did nothing happen? */
  private async resolveAmbiguousPut(
    key: string,
    body: Uint8Array,
    expectedEtag: string | null,
    signal: AbortSignal | undefined,
  ): Promise<{ kind: "landed"; etag: string } | { kind: "lost" } | { kind: "absent" }> {
    let current: GetResult | null;
    try {
      current = await this.get(key, undefined, signal === undefined ? {} : { signal });
    } catch (error) {
      if (error instanceof ObjectStoreError && error.kind === "not_found") current = null;
      else throw error;
    }
    if (expectedEtag === null) {
      if (current === null) return { kind: "absent" };
      return sameBytes(current.body, body) ? { kind: "landed", etag: current.etag } : { kind: "lost" };
    }
    if (current === null) return { kind: "lost" };
    if (current.etag === expectedEtag) return { kind: "absent" };
    return sameBytes(current.body, body) ? { kind: "landed", etag: current.etag } : { kind: "lost" };
  }

  private async withRetries<T>(key: string, operation: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        const failure = asStoreError(error, key);
        if (failure.kind !== "retryable" || attempt >= this.retry.maxAttempts || signal?.aborted === true) throw failure;
        await this.sleep(backoffMs(this.retry, attempt, this.random));
      }
    }
  }

  private async send(spec: RequestSpec): Promise<Response> {
    const request = await this.client.sign(objectUrl(this.config, spec.key, spec.query), {
      method: spec.method,
      headers: spec.headers ?? {},
      ...(spec.body === undefined ? {} : { body: spec.body }),
    });
    // A timer cleared when the request is over, not AbortSignal.timeout: workerd allows a Durable Object 10,000
    // active timeouts, and those of AbortSignal.timeout outlive their requests (a node's start reading
    // thousands of WAL objects in a few seconds ran out of them). The body is read here, within the deadline.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException("the S3 request timed out", "TimeoutError")), this.requestTimeoutMs);
    try {
      const signal = spec.signal === undefined ? controller.signal : AbortSignal.any([controller.signal, spec.signal]);
      const response = await this.fetchImpl(request, { signal });
      const body = NULL_BODY_STATUSES.has(response.status) ? null : await response.arrayBuffer();
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Statuses whose responses carry no body (a Response with one would throw). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** A function, not a property test: the compiler would narrow `aborted` across the await in between. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

