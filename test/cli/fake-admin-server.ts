// A small node:http server that answers like mink's admin API (docs/operations.md), for the CLI's tests:
// the bearer token check, mink's JSON error bodies, a drain whose progress advances one step per poll,
// rebalance rounds scripted one answer per call, a register of access tokens (mint, revoke, list in
// pages) that checks each request as src/admin/tokens.ts does, a list of streams paged by name as
// GET /admin/streams pages them (src/core/meta/stream-listing.ts), and the tables (fake-tables.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { StreamRow } from "../../src/cli/admin-answers.ts";
import { answerTableRoute, defaultTables, type FakeTable } from "./fake-tables.ts";

export const FAKE_TOKEN = "fake-admin-token";

interface RecordedRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  body: unknown;
}

type DrainStatus = { draining: boolean; remaining: number; transferring: number; incoming?: number; done: boolean };
type DrainAnswer = Omit<DrainStatus, "draining"> & {
  begun: number;
  unplaceable: number;
  stalled: null | { reason: string; streams: number; message: string };
};
type Move = { streamId: string; name: string; from: string; to: string; kind: string };
export interface RebalanceRound {
  plan: { orphans: Move[]; moves: Move[]; meanLoad: number; bands: { above: number; below: number }; unplaceable: number };
  begun: Move[];
  pending: number;
  done: boolean;
  version: number;
}

/** The fake's clock for tokens: every token is issued at this instant. */
export const TOKEN_ISSUED_AT = "2026-05-01T12:00:00.000Z";
const TOKEN_OPS = ["read", "append", "create", "delete", "subscribe"];
const MAX_TTL_SECONDS = 366 * 24 * 3600;

interface FakeToken {
  id: string;
  prefixes: string[];
  ops: string[];
  issuedAt: string;
  expiresAt: string;
  revoked: boolean;
}

export interface FakeAdminServer {
  url: string;
  requests: RecordedRequest[];
  /** The drain statuses GET /admin/nodes/:id/drain returns, one per poll (the last one repeats). */
  drainPolls: DrainStatus[];
  /**
   * What POST /admin/nodes/:id/drain answers, one per call (the last one repeats); empty: 4 streams, 2 of
   * them moving (node-lonely: one with no other node to go to).
   */
  drainAnswers: DrainAnswer[];
  /** What POST /admin/rebalance answers, one per call (the last one repeats), with the request's dryRun and maxConcurrent. */
  rebalanceRounds: RebalanceRound[];
  /** When set, GET /admin/nodes answers this status with a non-JSON body (a proxy's error page). */
  brokenNodes?: number;
  /** What GET /admin/streams lists (kept sorted by name); reset() puts back STREAMS. */
  streams: StreamRowBody[];
  /** The tables the table endpoints answer for, by name; reset() puts back the defaults (users, events). */
  tables: Map<string, FakeTable>;
  /** Adds `count` opened streams named `bulk/00001` on (3 bytes each), for paging. */
  addStreams(count: number): void;
  /** Registers `count` more tokens as if minted (ids tok-00001 on, read on `demo/`, an hour), for paging. */
  addTokens(count: number): void;
  /** Back to the defaults: no requests, the scripts and their counters reset. */
  reset(): void;
  close(): Promise<void>;
}

export const NODES = {
  version: 7,
  coordinator: { holder: "node-0", coordinatorEpoch: 4, expired: false, expiresInMs: 21_000 },
  nodes: [
    {
      id: "node-0",
      epoch: 1795949874492,
      address: "http://127.0.0.1:8787/n/node-0",
      slots: 1,
      draining: false,
      live: true,
      lastHeartbeatAgoMs: 1_200,
      coordinator: true,
      declaredDead: null,
      streams: 12,
      openedStreams: 10,
      tableBuckets: 4,
    },
    {
      id: "node-1",
      epoch: 1795949874493,
      address: "http://127.0.0.1:8787/n/node-1",
      slots: 2,
      draining: true,
      live: false,
      lastHeartbeatAgoMs: 41_000,
      coordinator: false,
      declaredDead: { epoch: 1795949874492, takeoverBy: "node-0" },
      streams: 3,
      openedStreams: 0,
      tableBuckets: 0,
    },
  ],
};

export const STREAM = {
  version: 7,
  id: "s1",
  name: "demo/a b/c",
  owner: "node-0",
  ownerAddress: "http://127.0.0.1:8787/n/node-0",
  epoch: 3,
  ownership: "opened",
  closedAtEpoch: null,
  pendingTransfer: { source: "node-0", target: "node-1", targetAddress: "http://127.0.0.1:8787/n/node-1" },
  config: { contentType: "text/plain", ttlSeconds: null, expiresAtMs: null, fork: null },
};

/** A row as the real endpoint answers it: the CLI's own type of the wire format. */
export type StreamRowBody = StreamRow;

const opened = (name: string, id: string, owner: string, bytes: number, closed = false): StreamRowBody => ({
  name,
  id,
  owner,
  ownerAddress: `http://127.0.0.1:8787/n/${owner}`,
  epoch: 1,
  ownership: "opened",
  contentType: "text/plain",
  pendingTransfer: null,
  tail: { offset: `0000000000000000_${String(bytes).padStart(16, "0")}`, bytes, closed },
});

/** The streams GET /admin/streams lists by default, sorted by name. */
export const STREAMS: readonly StreamRowBody[] = [
  { ...opened("demo/a b/c", "s1", "node-0", 12), epoch: 3, pendingTransfer: { source: "node-0", target: "node-1" } },
  opened("demo/b", "s2", "node-1", 0),
  opened("demo/c", "s3", "node-0", 1024, true),
  { name: "demo/new", id: "s5", owner: "node-1", ownerAddress: "http://127.0.0.1:8787/n/node-1", epoch: 0, ownership: "placed", contentType: "application/json", pendingTransfer: null, tail: null },
  { name: "other/x", id: "s4", owner: null, ownerAddress: null, epoch: 0, ownership: "unplaced", contentType: "text/plain", pendingTransfer: null, tail: null },
];

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function error(response: ServerResponse, status: number, code: string, message: string, details?: unknown): void {
  send(response, status, { error: { code, message, retryable: status === 503, ...(details === undefined ? {} : { details }) } });
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}

/** A balanced cluster: nothing to move. */
const BALANCED: RebalanceRound = {
  plan: { orphans: [], moves: [], meanLoad: 2, bands: { above: 2.2, below: 1.8 }, unplaceable: 0 },
  begun: [],
  pending: 0,
  done: true,
  version: 7,
};

/**
 * The body of POST /admin/tokens as the server checks it (src/core/auth/claims.ts), normalised the same way:
 * prefixes de-duplicated and sorted, ops in the server's order. A string is why it is refused.
 */
function mintRequest(body: unknown): { prefixes: string[]; ops: string[]; ttlSeconds: number } | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the body must be a JSON object {prefixes, ops, ttlSeconds}";
  const record = body as Record<string, unknown>;
  const unknownKeys = Object.keys(record).filter((key) => !["prefixes", "ops", "ttlSeconds"].includes(key));
  if (unknownKeys.length > 0) return `unknown fields: ${unknownKeys.join(", ")}`;
  const { prefixes, ops, ttlSeconds } = record;
  if (!Array.isArray(prefixes) || prefixes.length === 0 || prefixes.length > 32) return "prefixes must be an array of 1 to 32 stream-name prefixes";
  if (!prefixes.every((prefix) => typeof prefix === "string" && !prefix.startsWith("/") && !/[\u0000-\u001f\u007f]/.test(prefix))) {
    return "each prefix is a string without control characters or a leading '/'";
  }
  if (!Array.isArray(ops) || ops.length === 0 || !ops.every((op) => typeof op === "string" && TOKEN_OPS.includes(op))) {
    return `ops must be a non-empty array of ${TOKEN_OPS.join(", ")}`;
  }
  if (typeof ttlSeconds !== "number" || !Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    return `ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS}`;
  }
  return { prefixes: [...new Set(prefixes as string[])].sort(), ops: TOKEN_OPS.filter((op) => ops.includes(op)), ttlSeconds };
}

/** The `index`th answer of a script (the last one repeats). */
function nth<T>(script: readonly T[], index: number): T | undefined {
  return script[Math.min(index, script.length - 1)];
}

export async function startFakeAdminServer(): Promise<FakeAdminServer> {
  const requests: RecordedRequest[] = [];
  let drainPollCount = 0;
  let drainCalls = 0;
  let rebalanceCalls = 0;
  /** The token register, by id (ids sort in minting order). */
  const tokens = new Map<string, FakeToken>();
  const mintToken = (prefixes: string[], ops: string[], ttlSeconds: number): FakeToken => {
    const id = `tok-${String(tokens.size + 1).padStart(5, "0")}`;
    const expiresAt = new Date(Date.parse(TOKEN_ISSUED_AT) + ttlSeconds * 1000).toISOString();
    const token = { id, prefixes, ops, issuedAt: TOKEN_ISSUED_AT, expiresAt, revoked: false };
    tokens.set(id, token);
    return token;
  };
  const state: FakeAdminServer = {
    url: "",
    requests,
    drainPolls: [],
    drainAnswers: [],
    rebalanceRounds: [],
    streams: [],
    tables: defaultTables(),
    addStreams(count) {
      const start = state.streams.filter((row) => row.name.startsWith("bulk/")).length;
      for (let i = start + 1; i <= start + count; i += 1) state.streams.push(opened(`bulk/${String(i).padStart(5, "0")}`, `s${1000 + i}`, "node-0", 3));
      state.streams.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    reset() {
      requests.length = 0;
      state.drainPolls = [{ draining: true, remaining: 0, transferring: 0, incoming: 0, done: true }];
      state.drainAnswers = [];
      state.rebalanceRounds = [BALANCED];
      delete state.brokenNodes;
      state.streams = [...STREAMS];
      state.tables = defaultTables();
      tokens.clear();
      drainPollCount = 0;
      drainCalls = 0;
      rebalanceCalls = 0;
    },
    addTokens(count) {
      for (let i = 0; i < count; i += 1) mintToken(["demo/"], ["read"], 3600);
    },
    close: () => new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
  state.reset();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? "GET";
    const url = request.url ?? "/";
    const body = await readBody(request);
    requests.push({ method, url, authorization: request.headers.authorization, body });
    if (request.headers.authorization !== `Bearer ${FAKE_TOKEN}`) {
      response.setHeader("www-authenticate", 'Bearer realm="mink-admin"');
      return error(response, 401, "unauthorized", "a valid admin bearer token is required");
    }
    const route = `${method} ${url}`;
    if (route === "GET /admin/nodes") {
      if (state.brokenNodes !== undefined) {
        response.writeHead(state.brokenNodes, { "content-type": "text/html" });
        response.end("<html><body>Bad Gateway</body></html>");
        return;
      }
      return send(response, 200, NODES);
    }
    let match = /^PUT \/admin\/nodes\/([^/]+)\/slots$/.exec(route);
    if (match) {
      const id = decodeURIComponent(match[1] ?? "");
      if (id === "node-9") return error(response, 404, "not_found", "no node node-9");
      const slots = (body as { slots: number }).slots;
      return send(response, 200, { node: { id, epoch: 5, address: `http://127.0.0.1:8787/n/${id}`, slots, draining: false } });
    }
    if (route === "GET /admin/streams/demo/a%20b/c") return send(response, 200, STREAM);
    if (route.startsWith("GET /admin/streams/")) return error(response, 404, "not_found", `no stream ${decodeURIComponent(url.slice("/admin/streams/".length))}`);
    if (route === "POST /admin/transfers") {
      const { stream, target } = body as { stream: string; target: string };
      if (target === "node-9") return error(response, 400, "invalid", "target node-9 is not registered", { target: "node-9" });
      const alreadyPending = target === "node-2";
      return send(response, alreadyPending ? 200 : 202, {
        stream: { id: "s1", name: stream.split("/").map(decodeURIComponent).join("/"), owner: "node-0", epoch: 3, ownership: "opened" },
        transfer: { source: "node-0", target },
        alreadyPending,
      });
    }
    if (route === "GET /admin/transfers") {
      return send(response, 200, { version: 7, transfers: [{ streamId: "s1", name: "demo/a b/c", source: "node-0", target: "node-1", epoch: 3, ownership: "opened" }] });
    }
    match = /^(POST|GET|DELETE) \/admin\/nodes\/([^/]+)\/drain$/.exec(route);
    if (match) {
      const nodeId = decodeURIComponent(match[2] ?? "");
      if (match[1] === "POST") {
        const scripted = nth(state.drainAnswers, drainCalls);
        drainCalls += 1;
        const answer = scripted ?? { begun: 2, unplaceable: nodeId === "node-lonely" ? 1 : 0, remaining: 4, transferring: 2, incoming: 0, done: false, stalled: null };
        return send(response, 202, { nodeId, draining: true, ...answer });
      }
      if (match[1] === "GET") {
        const poll = state.drainPolls[Math.min(drainPollCount, state.drainPolls.length - 1)];
        drainPollCount += 1;
        return send(response, 200, { nodeId, ...poll });
      }
      return send(response, 200, { nodeId, draining: false, remaining: 1, transferring: 0, incoming: 0 });
    }
    if (route === "POST /admin/rebalance") {
      const { dryRun = false, maxConcurrent = 4 } = body as { dryRun?: boolean; maxConcurrent?: number };
      const round = nth(state.rebalanceRounds, rebalanceCalls) ?? BALANCED;
      rebalanceCalls += 1;
      return send(response, dryRun ? 200 : 202, { dryRun, maxConcurrent, ...round });
    }
    if (route === "POST /admin/tokens") {
      const mint = mintRequest(body);
      if (typeof mint === "string") return error(response, 400, "invalid", mint);
      const { id, expiresAt, prefixes, ops } = mintToken(mint.prefixes, mint.ops, mint.ttlSeconds);
      return send(response, 201, { id, token: `fake.${id}.signature`, expiresAt, prefixes, ops });
    }
    match = /^DELETE \/admin\/tokens\/([^/?]+)$/.exec(route);
    if (match) {
      const id = decodeURIComponent(match[1] ?? "");
      if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) return error(response, 400, "invalid", "id is not a token id");
      const token = tokens.get(id);
      if (token === undefined) return error(response, 404, "not_found", "no live token with this id");
      token.revoked = true;
      response.writeHead(204, { "cache-control": "no-store" });
      response.end();
      return;
    }
    const listed = new URL(url, "http://fake");
    const refuse = (status: number, code: string, message: string, details?: unknown): void => error(response, status, code, message, details);
    if (answerTableRoute(state.tables, method, listed.pathname, (status, answer) => send(response, status, answer), refuse)) return;
    if (method === "GET" && listed.pathname === "/admin/streams") {
      const prefix = listed.searchParams.get("prefix") ?? "";
      const after = listed.searchParams.get("after");
      const limitText = listed.searchParams.get("limit");
      const limit = limitText === null ? 100 : /^\d+$/.test(limitText) ? Number(limitText) : NaN;
      if (!(limit >= 1 && limit <= 1000)) return error(response, 400, "invalid", `limit must be a whole number from 1 to 1000 (got '${limitText ?? ""}')`);
      const matching = state.streams.filter((row) => row.name.startsWith(prefix) && (after === null || row.name > after));
      const page = matching.slice(0, limit);
      return send(response, 200, { version: 7, streams: page, next: matching.length > limit ? (page.at(-1)?.name ?? null) : null });
    }
    if (method === "GET" && listed.pathname === "/admin/tokens") {
      const unknownParams = [...listed.searchParams.keys()].filter((key) => key !== "after" && key !== "limit");
      if (unknownParams.length > 0) return error(response, 400, "invalid", `unknown parameters: ${unknownParams.join(", ")}`);
      const after = listed.searchParams.get("after") ?? "";
      const limit = Number(listed.searchParams.get("limit") ?? 100);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) return error(response, 400, "invalid", "limit must be an integer from 1 to 1000");
      const page = [...tokens.values()].filter((token) => token.id > after).slice(0, limit);
      return send(response, 200, { tokens: page, next: page.length === limit ? (page.at(-1)?.id ?? null) : null });
    }
    return error(response, 404, "not_found", `no route ${route}`);
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) => {
      response.writeHead(500);
      response.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
