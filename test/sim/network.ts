// Client requests travel through the scheduler too: a request reaches its node only when the scheduler
// picks it (so two requests sent in one order may arrive in the other), and its answer comes back as soon
// as the node gives it. A request to a node that is down, or whose incarnation dies while answering, fails
// like a lost connection; one that gets no answer within CLIENT_TIMEOUT_MS (virtual) times out. Redirects
// (307 to `<origin>/n/<node>/...`) are followed here, as an HTTP client would, up to MAX_HOPS.
import type { SimCluster } from "./cluster.ts";
import { ORIGIN } from "./cluster.ts";
import { incarnationLabel, type IncarnationId } from "./history.ts";
import type { Prng } from "./prng.ts";
import type { IoQueue } from "./scheduler.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

const CLIENT_TIMEOUT_MS = 60_000;
const MAX_HOPS = 8;
const NODE_PATH = /^\/n\/([^/]+)(\/.*)$/;

export interface HttpAnswer {
  /** 0 when no answer came (connection refused or reset, timeout). */
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The incarnation that gave the final answer. */
  readonly by: IncarnationId | null;
  /** The step the request reached that incarnation at (null: it never did). */
  readonly arrivedStep: number | null;
  readonly error: string | null;
}

export interface HttpRequest {
  readonly method: string;
  /** `/v1/stream/<name>?query`. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export class Network {
  constructor(
    private readonly io: IoQueue,
    private readonly cluster: SimCluster,
    private readonly clock: VirtualClock,
    private readonly trace: Trace,
    private readonly prng: Prng,
  ) {}

  /** Sends `request` to a node chosen at random (the router's local node), following redirects. */
  async request(client: string, request: HttpRequest): Promise<HttpAnswer> {
    let nodeId = this.prng.pick(this.cluster.nodeIds);
    let path = request.path;
    for (let hop = 0; ; hop++) {
      const answer = await this.send(client, nodeId, { ...request, path });
      if (answer.status !== 307 || hop >= MAX_HOPS) return answer;
      const location = answer.headers.get("location") ?? "";
      const target = location.startsWith(ORIGIN) ? NODE_PATH.exec(location.slice(ORIGIN.length)) : null;
      if (target === null) return { ...answer, status: 0, error: `unroutable redirect ${location}` };
      nodeId = target[1]!;
      path = target[2]!;
    }
  }

  /** One request to one node. */
  private send(client: string, nodeId: string, request: HttpRequest): Promise<HttpAnswer> {
    const { method, path } = request;
    const body = request.body !== undefined && request.body.length <= 40 ? ` ${request.body}` : "";
    const what = `${method} ${path}${body}`;
    return new Promise<HttpAnswer>((resolve) => {
      let done = false;
      const finish = (answer: HttpAnswer): void => {
        if (done) return;
        done = true;
        this.clock.cancel(timer);
        const by = answer.by === null ? nodeId : incarnationLabel(answer.by);
        const next = answer.headers.get("stream-next-offset");
        const detail = answer.error ?? `${answer.status}${next === null ? "" : ` next=${Number(next.split("_")[1])}`}${errorCode(answer)}`;
        this.trace.write(`  http ${client} ${what} <- ${by} ${detail}`);
        resolve(answer);
      };
      const timer = this.clock.schedule(CLIENT_TIMEOUT_MS, () => finish(noAnswer("timed out")), null, `timeout ${client}`);
      this.io.add({
        kind: "net",
        owner: client,
        label: `${what} -> ${nodeId}`,
        run: () => {
          const init: RequestInit = { method, headers: request.headers ?? {} };
          if (request.body !== undefined) init.body = request.body;
          this.cluster
            .deliver(nodeId, new Request(`${ORIGIN}/n/${nodeId}${path}`, init))
            .then(async ({ response, by, arrivedStep }) => {
              const text = await response.text();
              finish({ status: response.status, headers: response.headers, text, by, arrivedStep, error: null });
            })
            .catch((error: unknown) => finish(noAnswer(error instanceof Error ? error.message : String(error))));
        },
      });
    });
  }
}

function noAnswer(error: string): HttpAnswer {
  return { status: 0, headers: new Headers(), text: "", by: null, arrivedStep: null, error };
}

/** The error code of a JSON error answer, for the trace. */
function errorCode(answer: HttpAnswer): string {
  if (answer.status < 400 || !answer.text.startsWith("{")) return "";
  try {
    const parsed = JSON.parse(answer.text) as { error?: { code?: string } };
    return parsed.error?.code === undefined ? "" : ` ${parsed.error.code}`;
  } catch {
    return "";
  }
}
