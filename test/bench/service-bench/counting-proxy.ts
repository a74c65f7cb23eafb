// A counting HTTP proxy on 127.0.0.1 between mink and its S3 endpoint: forwards every request unchanged
// (the embedded endpoint does not verify signatures, so the Host header the Worker signed may stay) and
// counts requests by kind. It runs in the benchmark process, so under load it competes with the client
// for the event loop; it adds one loopback hop to each object-store request.
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type RequestKind = "PUT" | "GET" | "LIST" | "DELETE" | "HEAD" | "POST" | "OTHER";
export type RequestCounts = Record<RequestKind, number>;

export interface CountingProxy {
  url: string;
  /** A copy of the counts so far. */
  snapshot(): RequestCounts;
  close(): Promise<void>;
}

export function zeroCounts(): RequestCounts {
  return { PUT: 0, GET: 0, LIST: 0, DELETE: 0, HEAD: 0, POST: 0, OTHER: 0 };
}

export function diffCounts(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out = zeroCounts();
  for (const kind of Object.keys(out) as RequestKind[]) out[kind] = after[kind] - before[kind];
  return out;
}

/** Path-style addressing: `/<bucket>` or `/<bucket>/` with no key (or a list-type query) is a LIST. */
function kindOf(method: string | undefined, rawUrl: string | undefined): RequestKind {
  const url = new URL(rawUrl ?? "/", "http://proxy");
  const hasKey = url.pathname.replace(/^\/+/, "").includes("/") && !url.pathname.endsWith("/");
  switch (method ?? "") {
    case "GET":
      return url.searchParams.has("list-type") || !hasKey ? "LIST" : "GET";
    case "PUT":
    case "DELETE":
    case "HEAD":
    case "POST":
      return method as RequestKind;
    default:
      return "OTHER";
  }
}

export async function startCountingProxy(upstreamUrl: string): Promise<CountingProxy> {
  const upstream = new URL(upstreamUrl);
  if (upstream.hostname !== "127.0.0.1") throw new Error(`counting proxy: upstream must be on 127.0.0.1, not ${upstreamUrl}`);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const counts = zeroCounts();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    counts[kindOf(req.method, req.url)]++;
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    forward.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`counting proxy: ${error.message}`);
    });
    req.pipe(forward);
  };

  const server = createServer(handle);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    snapshot: () => ({ ...counts }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
