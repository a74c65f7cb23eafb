// An HTTP client for mink's admin API (docs/operations.md): one method per endpoint, the bearer token on
// every request, error bodies turned into ApiError and transport failures into NetworkError. No
// dependency beyond the global fetch.
import { ApiError, NetworkError } from "./errors.ts";
import type {
  DrainStarted,
  DrainStatus,
  NodesAnswer,
  RebalanceAnswer,
  SlotsAnswer,
  StreamAnswer,
  StreamsPage,
  TableAnswer,
  TablesAnswer,
  TableSnapshotAnswer,
  TableTierAnswer,
  TokenCreated,
  TokensPage,
  TransferAnswer,
  TransfersAnswer,
  Undrained,
} from "./admin-answers.ts";

export interface AdminClientOptions {
  /** The Worker's origin, e.g. http://127.0.0.1:8787 (a path prefix is kept). */
  baseUrl: string;
  token: string | undefined;
  fetch?: typeof fetch;
  /** Bound on each request (default 30 s). */
  timeoutMs?: number;
}

/** `a/b c/d` -> `a/b%20c/d`: each segment encoded, the `/` separators kept. Leading slashes are dropped. */
function encodeStreamPath(path: string): string {
  return path.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/");
}

export class AdminClient {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: AdminClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token === "" ? undefined : options.token;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  nodes(): Promise<NodesAnswer> {
    return this.#json("GET", "/admin/nodes");
  }
  setSlots(nodeId: string, slots: number): Promise<SlotsAnswer> {
    return this.#json("PUT", `/admin/nodes/${encodeURIComponent(nodeId)}/slots`, { slots });
  }
  stream(path: string): Promise<StreamAnswer> {
    return this.#json("GET", `/admin/streams/${encodeStreamPath(path)}`);
  }
  /** One page of the streams; an empty prefix, a null after and an undefined limit are left out (the server's defaults). */
  streams(page: { prefix: string; after: string | null; limit: number | undefined }): Promise<StreamsPage> {
    // Each value encoded as a whole (a `+` or `&` in a name stays itself), with its slashes kept readable.
    const encode = (value: string): string => encodeURIComponent(value).replace(/%2F/g, "/");
    const query = [
      ...(page.prefix === "" ? [] : [`prefix=${encode(page.prefix)}`]),
      ...(page.after === null ? [] : [`after=${encode(page.after)}`]),
      ...(page.limit === undefined ? [] : [`limit=${page.limit}`]),
    ];
    return this.#json("GET", `/admin/streams${query.length === 0 ? "" : `?${query.join("&")}`}`);
  }
  transfer(path: string, target: string): Promise<TransferAnswer> {
    return this.#json("POST", "/admin/transfers", { stream: encodeStreamPath(path), target });
  }
  transfers(): Promise<TransfersAnswer> {
    return this.#json("GET", "/admin/transfers");
  }
  startDrain(nodeId: string): Promise<DrainStarted> {
    return this.#json("POST", `/admin/nodes/${encodeURIComponent(nodeId)}/drain`);
  }
  drainStatus(nodeId: string): Promise<DrainStatus> {
    return this.#json("GET", `/admin/nodes/${encodeURIComponent(nodeId)}/drain`);
  }
  undrain(nodeId: string): Promise<Undrained> {
    return this.#json("DELETE", `/admin/nodes/${encodeURIComponent(nodeId)}/drain`);
  }
  /** One rebalance round; `maxConcurrent` undefined leaves the server's default (4). */
  rebalance(options: { dryRun: boolean; maxConcurrent: number | undefined }): Promise<RebalanceAnswer> {
    return this.#json("POST", "/admin/rebalance", {
      dryRun: options.dryRun,
      ...(options.maxConcurrent === undefined ? {} : { maxConcurrent: options.maxConcurrent }),
    });
  }

  tables(): Promise<TablesAnswer> {
    return this.#json("GET", "/admin/tables");
  }
  table(name: string): Promise<TableAnswer> {
    return this.#json("GET", `/admin/tables/${encodeURIComponent(name)}`);
  }
  snapshotTable(name: string): Promise<TableSnapshotAnswer> {
    return this.#json("POST", `/admin/tables/${encodeURIComponent(name)}/snapshot`);
  }

  tierTable(name: string): Promise<TableTierAnswer> {
    return this.#json("POST", `/admin/tables/${encodeURIComponent(name)}/tier`);
  }

  createToken(mint: { prefixes: readonly string[]; ops: readonly string[]; ttlSeconds: number }): Promise<TokenCreated> {
    return this.#json("POST", "/admin/tokens", { prefixes: mint.prefixes, ops: mint.ops, ttlSeconds: mint.ttlSeconds });
  }
  /** 204, no body. */
  async revokeToken(id: string): Promise<void> {
    await this.#request("DELETE", `/admin/tokens/${encodeURIComponent(id)}`, undefined, "empty");
  }
  tokens(page: { after: string | null; limit: number }): Promise<TokensPage> {
    const after = page.after === null ? "" : `after=${encodeURIComponent(page.after)}&`;
    return this.#json("GET", `/admin/tokens?${after}limit=${page.limit}`);
  }

  #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.#request(method, path, body, "json") as Promise<T>;
  }

  /** One request; a 2xx answer is a JSON object (`json`), or its body is not read for anything (`empty`, a 204). */
  async #request(method: string, path: string, body: unknown, answer: "json" | "empty"): Promise<unknown> {
    const url = `${this.#base}${path}`;
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#token !== undefined) headers["authorization"] = `Bearer ${this.#token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new NetworkError(url, `cannot reach ${this.#base} (${method} ${path}): ${reason(error)}; is mink running there? (--url or MINK_URL)`);
    }
    const parsed = parseJson(text);
    if (response.status >= 200 && response.status < 300) {
      if (answer === "empty") return undefined;
      if (parsed === undefined || typeof parsed !== "object" || parsed === null) {
        throw new NetworkError(url, `${method} ${path}: HTTP ${response.status} with a body that is not a JSON object: ${snippet(text)}`);
      }
      return parsed;
    }
    const error = errorBody(parsed);
    throw new ApiError({
      status: response.status,
      code: error?.code ?? `http_${response.status}`,
      message: error?.message ?? (snippet(text) || response.statusText || "no message"),
      retryable: error?.retryable ?? false,
      ...(error?.details === undefined ? {} : { details: error.details }),
      sentToken: this.#token !== undefined,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** mink's `{"error": {code, message, retryable, details?}}`, or undefined for any other body. */
function errorBody(parsed: unknown): { code: string; message: string; retryable: boolean; details?: unknown } | undefined {
  if (typeof parsed !== "object" || parsed === null || !("error" in parsed)) return undefined;
  const error = parsed.error;
  if (typeof error !== "object" || error === null) return undefined;
  const record = error as Record<string, unknown>;
  if (typeof record["code"] !== "string" || typeof record["message"] !== "string") return undefined;
  return {
    code: record["code"],
    message: record["message"],
    retryable: record["retryable"] === true,
    ...(record["details"] === undefined ? {} : { details: record["details"] }),
  };
}

function reason(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === "TimeoutError") return "timed out";
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message !== "") return cause.message;
    return error.message;
  }
  return String(error);
}

function snippet(text: string): string {
  const flat = text.trim().replace(/\s+/g, " ");
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}
