// The HTTP calls of the benchmark, through undici dispatchers (Client/Pool: keep-alive, no per-request
// connection cost), the same for both servers. Streams are text/plain so SSE sends the payload as text.
// Every request follows a 307 (to a mink node's address, when the router runs in redirect mode as `npm run
// dev` does), each time, as the fetch of a Durable Streams client does: nothing is remembered between
// requests, so an append to a stream the router's own node does not own costs two requests.
import type { Dispatcher } from "undici";

const STREAM_CONTENT_TYPE = "text/plain";
/** Bound on every request's wait for headers, so a stuck server ends a phase instead of hanging it. */
export const REQUEST_TIMEOUT_MS = 15_000;

/** A 307 is followed at most this many times. */
const MAX_REDIRECTS = 3;

export function streamPath(name: string): string {
  return `/v1/stream/${name}`;
}

/**
 * One request through `dispatcher`, following each 307 with the same method and body: the Location's path
 * and query go through the same dispatcher (a node's address, `<PUBLIC_ORIGIN>/n/<node>/...`, is on the
 * router's own origin).
 */
export async function requestFollowing(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  let path = options.path;
  for (let hop = 0; ; hop++) {
    const response = await dispatcher.request({ ...options, path });
    const location = response.headers.location;
    if (response.statusCode !== 307 || typeof location !== "string" || hop >= MAX_REDIRECTS) return response;
    await response.body.dump();
    const url = new URL(location, "http://127.0.0.1");
    path = `${url.pathname}${url.search}`;
  }
}

export async function createStream(dispatcher: Dispatcher, path: string): Promise<void> {
  const response = await requestFollowing(dispatcher, {
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
  const response = await requestFollowing(dispatcher, {
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
