// A small node:http server that answers like mink's admin API (docs/operations.md), for the CLI's tests:
// the bearer token check, mink's JSON error bodies, a drain whose progress advances one step per poll, and
// rebalance rounds scripted one answer per call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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

/** The `index`th answer of a script (the last one repeats). */
function nth<T>(script: readonly T[], index: number): T | undefined {
  return script[Math.min(index, script.length - 1)];
}

export async function startFakeAdminServer(): Promise<FakeAdminServer> {
  const requests: RecordedRequest[] = [];
  let drainPollCount = 0;
  let drainCalls = 0;
  let rebalanceCalls = 0;
  const state: FakeAdminServer = {
    url: "",
    requests,
    drainPolls: [],
    drainAnswers: [],
    rebalanceRounds: [],
    reset() {
      requests.length = 0;
      state.drainPolls = [{ draining: true, remaining: 0, transferring: 0, incoming: 0, done: true }];
      state.drainAnswers = [];
      state.rebalanceRounds = [BALANCED];
      delete state.brokenNodes;
      drainPollCount = 0;
      drainCalls = 0;
      rebalanceCalls = 0;
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
