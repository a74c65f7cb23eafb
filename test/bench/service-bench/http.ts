// The HTTP calls of the benchmark, through undici dispatchers (Client/Pool: keep-alive, no per-request
// connection cost), the same for both servers. Streams are text/plain so SSE sends the payload as text.
import type { Dispatcher } from "undici";

const STREAM_CONTENT_TYPE = "text/plain";
/** Bound on every request's wait for headers, so a stuck server ends a phase instead of hanging it. */
export const REQUEST_TIMEOUT_MS = 15_000;

export function streamPath(name: string): string {
  return `/v1/stream/${name}`;
}

export async function createStream(dispatcher: Dispatcher, path: string): Promise<void> {
  const response = await dispatcher.request({
    path,
    method: "PUT",
    headers: { "content-type": STREAM_CONTENT_TYPE },
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const text = await response.body.text();
  if (response.statusCode !== 201 && response.statusCode !== 200) {
    throw new Error(`PUT ${path}: ${response.statusCode} ${text.slice(0, 200)}`);
  }
}

/** One append; throws on anything but a 2xx, so the caller counts only acknowledged appends. */
export async function append(dispatcher: Dispatcher, path: string, body: string): Promise<void> {
  const response = await dispatcher.request({
    path,
    method: "POST",
    headers: { "content-type": STREAM_CONTENT_TYPE },
    body,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const text = await response.body.text();
  if (response.statusCode < 200 || response.statusCode > 299) {
    throw new Error(`POST ${path}: ${response.statusCode} ${text.slice(0, 200)}`);
  }
}

/** A text payload of exactly `sizeBytes` ASCII bytes starting with `prefix`. */
export function payload(prefix: string, sizeBytes: number): string {
  return prefix.length >= sizeBytes ? prefix : prefix + "x".repeat(sizeBytes - prefix.length);
}
