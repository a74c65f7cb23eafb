// One HTTP exchange with mink: JSON in, JSON out, the bearer token when there is one, redirects never
// followed (a 307 is a `not_leader` answer the caller acts on), and every failure turned into a
// TableClientError together with the server's Retry-After. Only fetch: Node 20, browsers and Workers.
import { HEADER } from "../core/protocol/headers.ts";
import { isPlainObject } from "../core/tables/definition.ts";
import { badResponse, TableClientError, type ErrorDetails } from "./errors.ts";

/** The part of `fetch` the client uses; the global fetch of every supported runtime fits it. */
export type FetchLike = (url: string, init: HttpInit) => Promise<Response>;

interface HttpInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  redirect: "manual";
}

export interface HttpRequest {
  readonly method: "GET" | "PUT" | "POST" | "DELETE";
  readonly url: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export type HttpOutcome =
  | { readonly ok: true; readonly status: number; readonly headers: Headers; readonly body: unknown }
  | { readonly ok: false; readonly error: TableClientError; readonly retryAfterMs: number | null };

const MS_PER_SECOND = 1_000;
const STATUS_TOO_MANY_REQUESTS = 429;
const STATUS_UNAVAILABLE = 503;
const STATUS_TEMPORARY_REDIRECT = 307;
/** The status of an opaque redirect: what a browser's fetch hands over for `redirect: "manual"`. */
const STATUS_OPAQUE_REDIRECT = 0;

export async function exchange(fetchFn: FetchLike, token: string | undefined, request: HttpRequest): Promise<HttpOutcome> {
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
  const init: HttpInit = { method: request.method, headers, redirect: "manual" };
  if (request.body !== undefined) {
    headers[HEADER.contentType] = "application/json";
    init.body = JSON.stringify(request.body);
  }
  let response: Response;
  try {
    response = await fetchFn(request.url, init);
  } catch (cause) {
    const message = `${request.method} ${request.url}: no answer (${cause instanceof Error ? cause.message : String(cause)})`;
    return { ok: false, error: networkError(message), retryAfterMs: null };
  }
  return readResponse(response);
}

async function readResponse(response: Response): Promise<HttpOutcome> {
  const { status } = response;
  // Some fetch implementations (browsers) hide a manual redirect's status, headers and body: the caller
  // learns only that this node does not lead, and finds the leader by describing the table again.
  if (status === STATUS_OPAQUE_REDIRECT) return { ok: false, error: notLeaderWithoutFacts(), retryAfterMs: null };
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    return { ok: false, error: networkError(`the answer's body was cut off (${String(cause)})`), retryAfterMs: null };
  }
  const body = parseJson(text);
  if (status >= 200 && status < 300) {
    if (body === INVALID_JSON) return { ok: false, error: badResponse(`status ${status} with a body that is not JSON`, status), retryAfterMs: null };
    return { ok: true, status, headers: response.headers, body: body ?? null };
  }
  return { ok: false, error: errorFromAnswer(status, response.headers, body), retryAfterMs: retryAfterMs(response.headers) };
}

const INVALID_JSON = Symbol("invalid JSON");

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return INVALID_JSON;
  }
}

/** mink's `{"error": {code, message, retryable, details?}}`, or an error named after the status alone. */
function errorFromAnswer(status: number, headers: Headers, body: unknown): TableClientError {
  const outcomeUnknown = status >= 500;
  const wire = isPlainObject(body) ? body["error"] : undefined;
  if (isPlainObject(wire) && typeof wire["code"] === "string") {
    const { code, message, retryable, details } = wire;
    return new TableClientError({
      code,
      message: typeof message === "string" ? message : code,
      status,
      retryable: retryable === true,
      details: withHeaderFacts(isPlainObject(details) ? details : undefined, headers),
      outcomeUnknown,
    });
  }
  if (status === STATUS_TEMPORARY_REDIRECT) return notLeaderWithoutFacts();
  const retryable = status === STATUS_TOO_MANY_REQUESTS || status >= 500;
  const code = status === STATUS_UNAVAILABLE ? "unavailable" : status === STATUS_TOO_MANY_REQUESTS ? "limit_reached" : "bad_response";
  return new TableClientError({ code, message: `status ${status} without mink's error body`, status, retryable, outcomeUnknown });
}

/** A seq gap's expected seq travels in a header too; the details get it when the body left it out. */
function withHeaderFacts(details: ErrorDetails | undefined, headers: Headers): ErrorDetails | undefined {
  const expected = headers.get(HEADER.producerExpectedSeq);
  if (expected === null || details?.["expectedSeq"] !== undefined) return details;
  return { ...details, expectedSeq: Number(expected) };
}

/** Retry-After in delta-seconds (the form mink sends); an HTTP date or garbage counts as absent. */
function retryAfterMs(headers: Headers): number | null {
  const raw = headers.get("retry-after");
  if (raw === null || !/^\d+$/.test(raw.trim())) return null;
  return Number(raw.trim()) * MS_PER_SECOND;
}

function networkError(message: string): TableClientError {
  return new TableClientError({ code: "network_error", message, status: null, retryable: true, outcomeUnknown: true });
}

function notLeaderWithoutFacts(): TableClientError {
  return new TableClientError({ code: "not_leader", message: "this node does not lead the bucket", status: STATUS_TEMPORARY_REDIRECT, retryable: true });
}
