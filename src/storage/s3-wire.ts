// S3 requests and answers on the wire, for the S3 adapter (s3-store.ts): a key's URL, the Range and
// Content-Range headers, the ETag forms If-Match takes, and the mapping of a failed answer (its status and
// S3 error document) or a fetch rejection to the object-store port's error kinds.

import { ObjectStoreError, type ByteRange } from "./object-store.ts";
import { parseErrorDocument } from "./s3-xml.ts";

const RETRYABLE_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504]);
const RETRYABLE_CODES = new Set(["RequestTimeout", "SlowDown", "InternalError", "ServiceUnavailable", "ConditionalRequestConflict"]);

/** The URL of a key (or of the bucket, for a list), path-style or virtual-hosted as configured. */
export function objectUrl(
  config: { readonly endpoint: string; readonly bucket: string; readonly addressing?: "path" | "virtual" | undefined },
  key: string | undefined,
  query: Record<string, string> | undefined,
): string {
  const endpoint = new URL(config.endpoint);
  const keyPath = key === undefined ? "" : `/${key.split("/").map(encodeRfc3986).join("/")}`;
  const base =
    (config.addressing ?? "path") === "path"
      ? `${endpoint.origin}${trimSlash(endpoint.pathname)}/${config.bucket}${keyPath}`
      : `${endpoint.protocol}//${config.bucket}.${endpoint.host}${trimSlash(endpoint.pathname)}${keyPath || "/"}`;
  if (query === undefined) return base;
  const search = Object.entries(query)
    .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
    .join("&");
  return `${base}?${search}`;
}

/** Maps a non-2xx answer to the port's error kinds; the S3 XML stops here. */
export async function s3Failure(response: Response, key: string): Promise<ObjectStoreError> {
  const text = await response.text().catch(() => "");
  const document = parseErrorDocument(text);
  const detail = document === undefined ? `HTTP ${response.status}` : `${document.code}: ${document.message}`;
  const status = response.status;
  if (status === 412) return new ObjectStoreError("precondition_failed", `precondition failed: ${key}`, key, status);
  if (status === 404) return new ObjectStoreError("not_found", `no such key: ${key}`, key, status);
  if (RETRYABLE_STATUSES.has(status) || (document !== undefined && RETRYABLE_CODES.has(document.code))) {
    return new ObjectStoreError("retryable", `object store unavailable (${detail}): ${key}`, key, status);
  }
  return new ObjectStoreError("fatal", `object store refused the request (${detail}): ${key}`, key, status);
}

export function asStoreError(error: unknown, key: string): ObjectStoreError {
  if (error instanceof ObjectStoreError) return error;
  // fetch rejects with TypeError on network failures and with an AbortError/TimeoutError when our timeout
  // fires: in both cases the server may or may not have acted.
  const message = error instanceof Error ? error.message : String(error);
  return new ObjectStoreError("retryable", `no answer from the object store (${message}): ${key}`, key);
}

export function formatEtag(bare: string, form: "quoted" | "bare"): string {
  return form === "quoted" ? `"${bare}"` : bare;
}

export function rangeHeader(range: ByteRange): string {
  if ("suffixLength" in range) return `bytes=-${range.suffixLength}`;
  return range.length === undefined ? `bytes=${range.offset}-` : `bytes=${range.offset}-${range.offset + range.length - 1}`;
}

export function windowOf(range: ByteRange, size: number, key: string): [number, number] {
  if ("suffixLength" in range) return [Math.max(0, size - range.suffixLength), size];
  if (range.offset >= size) throw new ObjectStoreError("fatal", `range not satisfiable: ${key}`, key, 416);
  return [range.offset, range.length === undefined ? size : Math.min(size, range.offset + range.length)];
}

export function parseContentRange(header: string | null, key: string): { start: number; size: number } {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? "");
  if (match === null) throw new ObjectStoreError("fatal", `malformed Content-Range "${header}": ${key}`, key, 206);
  return { start: Number(match[1]), size: Number(match[3]) };
}

/** S3's canonical URI encoding: everything but unreserved characters, per path segment. */
function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function trimSlash(path: string): string {
  return path.endsWith("/") ? path.slice(0, -1) : path;
}
