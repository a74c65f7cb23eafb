// Helpers of the hostile-input suites (test/e2e/hostile-*.e2e.test.ts and the fuzzer):
// a three-node service in token mode, the admin calls (mint, revoke, nodes), requests with or without a
// bearer token, raw HTTP for paths and methods fetch would normalize or refuse, and forged tokens.
//
// The tokens are compact JWS (jose, HMAC with TOKEN_SECRET): the forgeries here take a minted token apart
// and put it back together with another header, payload or key, so they follow whatever claims mint uses.
import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { Agent, fetch as undiciFetch, type Response as UndiciResponse } from "undici";
import { expect } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { startService, type Service, type ServiceOptions } from "./service.ts";

/** The test deployment's token secret (a var here: test credentials only). */
export const TOKEN_SECRET = "hostile-e2e-token-secret-0123456789abcdef";
export const NODE_IDS = ["node-0", "node-1", "node-2"] as const;
export const OPS = ["read", "append", "create", "delete", "subscribe"] as const;
export type Op = (typeof OPS)[number];

/** undici's fetch: it follows a 307 with a body (Node 20's built-in fetch does not with a binary one). */
const agent = new Agent({ connections: 256, pipelining: 0, keepAliveTimeout: 10_000 });

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The URL that answered (after redirects). */
  url: string;
}

/** Starts three nodes in token mode; `vars` go on top (bounds set small by each suite). */
export async function startHostileService(vars: Record<string, string> = {}, options: ServiceOptions = {}): Promise<Service> {
  return startService({
    nodes: 3,
    longPollTimeoutMs: 2_000,
    ...options,
    vars: { AUTH_MODE: "token", TOKEN_SECRET, ...vars },
  });
}

export interface RequestOptions {
  method?: string;
  token?: string | null;
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
  redirect?: "follow" | "manual";
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** One request to `service.baseUrl + path`, read to its end. */
export async function call(service: Service, path: string, options: RequestOptions = {}): Promise<Answer> {
  const response = await send(service, path, options);
  return { status: response.status, headers: response.headers as unknown as Headers, text: await response.text(), url: response.url };
}

/** The response without reading its body (live reads). */
export function send(service: Service, path: string, options: RequestOptions = {}): Promise<UndiciResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined && options.token !== null) headers["authorization"] = `Bearer ${options.token}`;
  const signal = options.signal ?? AbortSignal.timeout(options.timeoutMs ?? 20_000);
  return undiciFetch(`${service.baseUrl}${path}`, {
    method: options.method ?? "GET",
    headers,
    body: options.body ?? null,
    redirect: options.redirect ?? "follow",
    dispatcher: agent,
    signal,
  });
}

export const streamPath = (name: string, node?: string): string => `${node === undefined ? "" : `/n/${node}`}/v1/stream/${name}`;

/** The admin API with the admin token; throws on a non-2xx answer. */
async function admin<T>(service: Service, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(service, path, {
    method,
    token: service.adminToken,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return (answer.text === "" ? undefined : JSON.parse(answer.text)) as T;
}

export interface Minted {
  id: string;
  token: string;
  expiresAt: string;
}

export function mint(service: Service, prefixes: readonly string[], ops: readonly Op[], ttlSeconds = 3_600): Promise<Minted> {
  return admin<Minted>(service, "POST", "/admin/tokens", { prefixes, ops, ttlSeconds });
}

export async function revoke(service: Service, id: string): Promise<void> {
  const answer = await call(service, `/admin/tokens/${encodeURIComponent(id)}`, { method: "DELETE", token: service.adminToken });
  expect(answer.status, `revoke ${id}: ${answer.text}`).toBe(204);
}

interface AdminNode {
  id: string;
  epoch: number;
  live: boolean;
  declaredDead: unknown;
}

export async function nodeEpochs(service: Service): Promise<Map<string, number>> {
  const view = await admin<{ nodes: AdminNode[] }>(service, "GET", "/admin/nodes");
  return new Map(view.nodes.map((node) => [node.id, node.epoch]));
}

export const ownerOf = async (service: Service, name: string): Promise<string> =>
  (await admin<{ owner: string }>(service, "GET", `/admin/streams/${name}`)).owner;

/** Waits for three live nodes (a stream request at the router starts them: `wakeToken` must cover `<wakePrefix>wake-...`). */
export async function allLive(service: Service, wakeToken: string | null, wakePrefix = ""): Promise<void> {
  await eventually(
    async () => {
      await call(service, streamPath(`${wakePrefix}wake-${Date.now().toString(36)}?offset=-1`), { token: wakeToken });
      const view = await admin<{ nodes: AdminNode[] }>(service, "GET", "/admin/nodes");
      if (view.nodes.length !== NODE_IDS.length || !view.nodes.every((node) => node.live && node.declaredDead === null)) {
        throw new NotYet(JSON.stringify(view.nodes));
      }
      return true;
    },
    { timeoutMs: 30_000, what: "three live nodes" },
  );
}

/** Creates `<prefix><i>` streams until `enough` says so: the names by owning node. */
export async function namesByOwner(
  service: Service,
  prefix: string,
  token: string,
  enough: (byNode: ReadonlyMap<string, readonly string[]>) => boolean,
  contentType = "text/plain",
): Promise<Map<string, string[]>> {
  const byNode = new Map<string, string[]>();
  for (let i = 0; !enough(byNode); i++) {
    if (i >= 60) throw new Error(`not enough streams per node after 60 creates: ${JSON.stringify([...byNode])}`);
    const name = `${prefix}${i}`;
    const created = await call(service, streamPath(name), { method: "PUT", token, headers: { "content-type": contentType } });
    expect(created.status, `create ${name}: ${created.text}`).toBe(201);
    const owner = await ownerOf(service, name);
    byNode.set(owner, [...(byNode.get(owner) ?? []), name]);
  }
  return byNode;
}

/** One stream under `prefix` on each node: node id -> name. */
export async function namesOnEachNode(service: Service, prefix: string, token: string, contentType = "text/plain"): Promise<Map<string, string>> {
  const byNode = await namesByOwner(service, prefix, token, (names) => NODE_IDS.every((node) => (names.get(node)?.length ?? 0) >= 1), contentType);
  return new Map(NODE_IDS.map((node) => [node, byNode.get(node)![0]!]));
}

/** The rule every refusal follows: status, JSON `{error: {code, message, retryable}}`, and nothing internal. */
export function expectRefusal(answer: Answer, status: number, code: string): void {
  expect(answer.status, `${answer.url}: ${answer.text}`).toBe(status);
  expectCleanError(answer, code);
  if (status === 401) expect(answer.headers.get("www-authenticate") ?? "", "401 carries WWW-Authenticate: Bearer").toMatch(/^Bearer\b/i);
}

/** An error body without a stack trace, source path or internal exception text. */
export function expectCleanError(answer: Answer, code?: string): void {
  const body = JSON.parse(answer.text) as { error?: { code?: unknown; message?: unknown; retryable?: unknown } };
  expect(typeof body.error?.message, answer.text).toBe("string");
  expect(typeof body.error?.retryable, answer.text).toBe("boolean");
  if (code !== undefined) expect(body.error?.code, answer.text).toBe(code);
  expectNoInternals(answer);
}

/** Any answer (the subscription API has its own error vocabulary): no stack trace, source path or exception text. */
export function expectNoInternals(answer: Answer): void {
  expect(answer.text, "no stack trace or internal detail in an answer").not.toMatch(/\n\s+at |\bat .+:\d+:\d+|\.ts\b|node_modules|TypeError|RangeError|SyntaxError|ReferenceError/);
}

// ---- forged tokens ----

const b64url = (data: Buffer | string): string => Buffer.from(data).toString("base64url");

export interface JwtParts {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signature: string;
}

export function decodeJwt(token: string): JwtParts {
  const [header, payload, signature] = token.split(".");
  if (header === undefined || payload === undefined || signature === undefined) throw new Error(`not a compact JWS: ${token}`);
  return {
    header: JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>,
    signature,
  };
}

const HMAC_OF: Record<string, string> = { HS256: "sha256", HS384: "sha384", HS512: "sha512" };

/** A compact JWS of `header` and `payload` signed with HMAC (the header's alg) and `secret`. */
export function signJwt(header: Record<string, unknown>, payload: Record<string, unknown>, secret: string): string {
  const alg = String(header["alg"]);
  const hash = HMAC_OF[alg];
  if (hash === undefined) throw new Error(`signJwt: not an HMAC alg: ${alg}`);
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${input}.${createHmac(hash, secret).update(input).digest("base64url")}`;
}

/** A minted token with its payload changed and signed again with `secret` (the real one or another). */
export function resign(token: string, secret: string, change: (payload: Record<string, unknown>) => Record<string, unknown> = (p) => p, alg?: string): string {
  const { header, payload } = decodeJwt(token);
  return signJwt({ ...header, ...(alg === undefined ? {} : { alg }) }, change({ ...payload }), secret);
}

/** `alg: none`, the payload of a real token, no signature. */
export function unsignedJwt(token: string): string {
  const { header, payload } = decodeJwt(token);
  return `${b64url(JSON.stringify({ ...header, alg: "none" }))}.${b64url(JSON.stringify(payload))}.`;
}

/** The token's payload changed (say, wider prefixes) under the original signature. */
export function tamperedJwt(token: string, change: (payload: Record<string, unknown>) => Record<string, unknown>): string {
  const [header, , signature] = token.split(".");
  const { payload } = decodeJwt(token);
  return `${header}.${b64url(JSON.stringify(change({ ...payload })))}.${signature}`;
}

// ---- raw HTTP (paths and methods fetch would normalize or refuse) ----

/** One request with the path exactly as given (no URL normalization: `..`, `%2e%2e`, `%00` go as written). */
export function rawCall(
  service: Service,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: service.port, method, path, headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) }, timeout: 20_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const responseHeaders = new Headers();
          for (const [key, value] of Object.entries(res.headers)) {
            if (value !== undefined) responseHeaders.set(key, Array.isArray(value) ? value.join(", ") : value);
          }
          resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text: Buffer.concat(chunks).toString("utf8"), url: `${service.baseUrl}${path}` });
        });
        res.on("error", reject);
      },
    );
    // CONNECT: the answer comes as a "connect" event (any status); the tunnel is never used.
    req.on("connect", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: new Headers(), text: "", url: `${service.baseUrl}${path}` });
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** The body of a stream read whole from the start (following Stream-Next-Offset until up to date). */
export async function readAll(service: Service, name: string, token: string | null): Promise<{ text: string; pages: number; nextOffset: string }> {
  let offset = "-1";
  let text = "";
  for (let pages = 1; ; pages++) {
    const answer = await call(service, streamPath(`${name}?offset=${offset}`), { token });
    if (answer.status !== 200) throw new Error(`read ${name} at ${offset}: ${answer.status} ${answer.text}`);
    text += answer.text;
    offset = answer.headers.get("stream-next-offset") ?? "";
    if (answer.headers.get("stream-up-to-date") === "true") return { text, pages, nextOffset: offset };
    if (pages > 10_000) throw new Error(`read ${name}: over 10,000 pages`);
  }
}
