// The embedded S3 endpoint: a Worker that speaks the subset of the S3 REST API mink uses, over an R2 bucket
// binding. Run under Miniflare (scripts/embedded-s3.ts) it gives development and tests a real HTTP S3 server
// on 127.0.0.1 with R2's conditional-write semantics and no outside service.
//
// What it does, and what it deliberately does not:
// - Path-style addressing only: `/<bucket>/<key>`, keys percent-decoded and free to contain `/`. One bucket,
//   named by BUCKET_NAME (default "mink"); any other name is NoSuchBucket. Key dot-segments (`a/../b`) cannot
//   be represented, because URL parsing resolves them before the Worker sees the path.
// - Objects: PUT (with `If-None-Match: *` or `If-Match: <etag>`, quoted or bare), GET (with one Range and
//   conditional headers), HEAD, DELETE. Bucket: ListObjectsV2, PUT (a no-op: the bucket is the binding), HEAD.
//   Everything else is 501 NotImplemented, never a silent approximation.
// - `If-Match` on a missing key is 404 NoSuchKey, as AWS answers (R2 itself says 412); mink's adapter treats
//   both as "the compare-and-swap lost".
// - Authentication: this is a development endpoint bound to 127.0.0.1. It does NOT verify SigV4 signatures.
//   A request may be anonymous; if it carries credentials (Authorization header or presigned
//   X-Amz-Credential), they must name ACCESS_KEY_ID (default "mink-dev"), else 403 InvalidAccessKeyId, so a
//   misconfigured client fails here as it would against a real server.
// - Uploads must be plain bodies: aws-chunked (`x-amz-content-sha256: STREAMING-...`) is refused with 501.
// - Latency: with LATENCY_MS (and JITTER_MS) set, each request waits that long before it is handled, one
//   round trip to R2 (latency.ts); unset, it waits for nothing.

import { injectedDelay, requestDelayMs, type LatencyBindings } from "./latency.ts";
import {
  bareEtag,
  claimedAccessKeyId,
  failedReadPrecondition,
  parseListQuery,
  parsePutCondition,
  parseRange,
  parseTarget,
  servedRange,
  type PutCondition,
} from "./s3-request.ts";
import { errorXml, listBucketResultXml, type ErrorDetails } from "./s3-xml.ts";

interface Env extends LatencyBindings {
  BUCKET: R2Bucket;
  /** The one bucket name this endpoint answers to (default "mink"). */
  BUCKET_NAME?: string;
  /** The access key id that credentialed requests must name (default "mink-dev"). */
  ACCESS_KEY_ID?: string;
}

// Nothing but `default` is exported: workerd treats every exported value as an entrypoint.
const DEFAULT_BUCKET_NAME = "mink";
const DEFAULT_ACCESS_KEY_ID = "mink-dev";

const MAX_KEY_BYTES = 1024;
/** R2's error code for a range that starts past the end of the object. */
const R2_INVALID_RANGE = 10039;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    let response: Response;
    try {
      const delay = injectedDelay(requestDelayMs(env));
      if (delay !== undefined) await delay;
      response = await route(request, env);
    } catch (error) {
      response = s3Error(500, "InternalError", error instanceof Error ? error.message : String(error));
    }
    if (request.method !== "HEAD" || response.body === null) return response;
    // HEAD answers carry the status and headers only, errors included (S3 sends no error body on HEAD).
    await response.body.cancel();
    return new Response(null, { status: response.status, headers: response.headers });
  },
} satisfies ExportedHandler<Env>;

async function route(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  const claimed = claimedAccessKeyId(request, url);
  if (claimed !== undefined && claimed !== (env.ACCESS_KEY_ID ?? DEFAULT_ACCESS_KEY_ID)) {
    return s3Error(403, "InvalidAccessKeyId", "The access key id you provided does not exist in our records.");
  }
  const target = parseTarget(url.pathname);
  if (target === null) return s3Error(400, "InvalidURI", "Couldn't parse the specified URI.");
  if (target.bucket === undefined) return notImplemented("ListBuckets");
  const bucketName = env.BUCKET_NAME ?? DEFAULT_BUCKET_NAME;
  if (target.bucket !== bucketName) {
    return s3Error(404, "NoSuchBucket", "The specified bucket does not exist", { bucketName: target.bucket });
  }
  if (target.key === undefined) return bucketRequest(request, url, env.BUCKET, bucketName);
  return objectRequest(request, url, env.BUCKET, target.key);
}

async function bucketRequest(request: Request, url: URL, bucket: R2Bucket, bucketName: string): Promise<Response> {
  const method = request.method;
  if (method === "GET" && url.searchParams.get("list-type") === "2") return listObjectsV2(url, bucket, bucketName);
  const subresource = [...url.searchParams.keys()].find((name) => name !== "x-id");
  if ((method === "PUT" || method === "HEAD") && subresource === undefined) {
    return new Response(null, { status: 200, headers: method === "PUT" ? { location: `/${bucketName}` } : {} });
  }
  return notImplemented(`${method} on a bucket${subresource === undefined ? "" : ` with ?${subresource}`}`);
}

async function objectRequest(request: Request, url: URL, bucket: R2Bucket, key: string): Promise<Response> {
  // `x-id` is a hint some SDKs add; X-Amz-* are presigned-URL parameters. Anything else names a subresource
  // (?uploads, ?tagging, ?acl, ...) this endpoint does not serve.
  const subresource = [...url.searchParams.keys()].find((name) => name !== "x-id" && !/^x-amz-/i.test(name));
  if (subresource !== undefined) return notImplemented(`${request.method} ?${subresource}`);
  if (new TextEncoder().encode(key).byteLength > MAX_KEY_BYTES) {
    return s3Error(400, "KeyTooLongError", "Your key is too long", { key });
  }
  switch (request.method) {
    case "PUT":
      return putObject(request, bucket, key);
    case "GET":
      return getObject(request, bucket, key);
    case "HEAD":
      return headObject(request, bucket, key);
    case "DELETE":
      if (request.headers.has("if-match")) return notImplemented("conditional DELETE");
      await bucket.delete(key);
      return new Response(null, { status: 204 });
    default:
      return notImplemented(`${request.method} on an object`);
  }
}

async function putObject(request: Request, bucket: R2Bucket, key: string): Promise<Response> {
  if (request.headers.has("x-amz-copy-source")) return notImplemented("CopyObject");
  if (/^STREAMING-/i.test(request.headers.get("x-amz-content-sha256") ?? "")) {
    return notImplemented("aws-chunked uploads (x-amz-content-sha256: STREAMING-*); send a plain body");
  }
  const condition = parsePutCondition(request.headers);
  if (condition.kind === "unsupported") return notImplemented(condition.reason);
  // R2 throws on a quote left inside an ETag (`If-Match: "`); no stored ETag has one, so that swap just loses.
  if (condition.kind === "conditional" && condition.ifMatch?.includes('"')) return conditionalWriteLost(bucket, key, condition);
  const contentType = request.headers.get("content-type");
  const options: R2PutOptions = contentType === null ? {} : { httpMetadata: { contentType } };
  const body = await uploadBody(request);
  const written =
    condition.kind === "conditional"
      ? await bucket.put(key, body, { ...options, onlyIf: condition.onlyIf })
      : await bucket.put(key, body, options);
  if (written === null) return conditionalWriteLost(bucket, key, condition);
  return new Response(null, { status: 200, headers: { etag: written.httpEtag } });
}

/** R2 streams a body into the bucket only when its length is known up front; a chunked upload is buffered. */
async function uploadBody(request: Request): Promise<ReadableStream | ArrayBuffer | null> {
  if (request.body === null) return null;
  return request.headers.has("content-length") ? request.body : request.arrayBuffer();
}

/** R2 reports a failed precondition as a bare null; this turns it into the answer AWS would give. */
async function conditionalWriteLost(bucket: R2Bucket, key: string, condition: PutCondition): Promise<Response> {
  const ifMatch = condition.kind === "conditional" && condition.ifMatch !== undefined;
  // Looked up after the fact, so a key created in between yields 412 instead of 404: either way the swap lost.
  if (ifMatch && (await bucket.head(key)) === null) return noSuchKey(key);
  return s3Error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold", {
    key,
    extra: { Condition: ifMatch ? "If-Match" : "If-None-Match" },
  });
}

async function getObject(request: Request, bucket: R2Bucket, key: string): Promise<Response> {
  const rangeHeader = request.headers.get("range");
  const range = parseRange(rangeHeader);
  let object: R2ObjectBody | null;
  try {
    object = await bucket.get(key, range === undefined ? {} : { range });
  } catch (error) {
    if (isR2Error(error, R2_INVALID_RANGE)) return invalidRange(bucket, key, rangeHeader ?? "");
    throw error;
  }
  if (object === null) return noSuchKey(key);
  const failed = failedReadPrecondition(request.headers, object);
  if (failed !== undefined) {
    await object.body.cancel();
    return preconditionAnswer(failed, object, key);
  }
  const headers = objectHeaders(object);
  if (range === undefined) {
    headers.set("content-length", String(object.size));
    return new Response(object.body, { status: 200, headers });
  }
  const { start, end } = servedRange(object.range ?? range, object.size);
  headers.set("content-range", `bytes ${start}-${end}/${object.size}`);
  headers.set("content-length", String(end - start + 1));
  return new Response(object.body, { status: 206, headers });
}

async function headObject(request: Request, bucket: R2Bucket, key: string): Promise<Response> {
  const object = await bucket.head(key);
  if (object === null) return noSuchKey(key);
  const failed = failedReadPrecondition(request.headers, object);
  if (failed !== undefined) return preconditionAnswer(failed, object, key);
  const headers = objectHeaders(object);
  headers.set("content-length", String(object.size));
  return new Response(null, { status: 200, headers });
}

function objectHeaders(object: R2Object): Headers {
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  if (!headers.has("content-type")) headers.set("content-type", "binary/octet-stream");
  headers.set("etag", object.httpEtag);
  headers.set("last-modified", object.uploaded.toUTCString());
  headers.set("accept-ranges", "bytes");
  return headers;
}

function preconditionAnswer(status: 304 | 412, object: R2Object, key: string): Response {
  if (status === 412) return s3Error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold", { key });
  return new Response(null, { status: 304, headers: { etag: object.httpEtag, "last-modified": object.uploaded.toUTCString() } });
}

async function invalidRange(bucket: R2Bucket, key: string, rangeHeader: string): Promise<Response> {
  const object = await bucket.head(key);
  if (object === null) return noSuchKey(key);
  return s3Error(
    416,
    "InvalidRange",
    "The requested range is not satisfiable",
    { key, extra: { RangeRequested: rangeHeader, ActualObjectSize: object.size } },
    { "content-range": `bytes */${object.size}` },
  );
}

async function listObjectsV2(url: URL, bucket: R2Bucket, bucketName: string): Promise<Response> {
  const query = parseListQuery(url.searchParams);
  if (typeof query === "string") return s3Error(400, "InvalidArgument", query);
  let page: R2Objects = { objects: [], delimitedPrefixes: [], truncated: false };
  // R2 refuses a limit of 0; S3 answers max-keys=0 with an empty page.
  if (query.maxKeys > 0) {
    const options: R2ListOptions = { prefix: query.prefix, limit: query.maxKeys };
    if (query.delimiter !== undefined) options.delimiter = query.delimiter;
    // The continuation token is R2's cursor; as in S3 it supersedes start-after, which only places page one.
    if (query.continuationToken !== undefined) options.cursor = query.continuationToken;
    else if (query.startAfter !== undefined) options.startAfter = query.startAfter;
    try {
      page = await bucket.list(options);
    } catch (error) {
      if (query.continuationToken === undefined) throw error;
      return s3Error(400, "InvalidArgument", "The continuation token provided is incorrect");
    }
  }
  const xml = listBucketResultXml({
    ...query,
    bucket: bucketName,
    ...(page.truncated ? { nextContinuationToken: page.cursor } : {}),
    isTruncated: page.truncated,
    contents: page.objects.map((object) => ({ key: object.key, etag: bareEtag(object.etag), size: object.size, uploaded: object.uploaded })),
    commonPrefixes: page.delimitedPrefixes,
  });
  return new Response(xml, { status: 200, headers: { "content-type": "application/xml" } });
}

/** R2 binding errors carry their numeric code in the message, e.g. "get: ... (10039)". */
function isR2Error(error: unknown, code: number): boolean {
  return error instanceof Error && error.message.includes(`(${code})`);
}

function noSuchKey(key: string): Response {
  return s3Error(404, "NoSuchKey", "The specified key does not exist.", { key });
}

function notImplemented(what: string): Response {
  return s3Error(501, "NotImplemented", `Not implemented by mink's embedded S3 endpoint: ${what}`);
}

function s3Error(status: number, code: string, message: string, details: ErrorDetails = {}, headers: Record<string, string> = {}): Response {
  return new Response(errorXml(code, message, details), { status, headers: { ...headers, "content-type": "application/xml" } });
}
