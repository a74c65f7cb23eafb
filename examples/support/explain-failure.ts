// What the examples print when a request fails: one line on stderr that says what failed (the status and
// mink's error code and message) and what to do about it, then exit 1; never a stack. Importing this file
// installs the handler, so the examples' own code stays as a reader would write it (awaits that throw).
// expectOk() is how the plain-fetch example turns an answer it did not expect into such a failure.
import process from "node:process";

/** A request answered with a status the example did not expect, with mink's error body when it sent one. */
class RequestFailed extends Error {
  constructor(
    readonly what: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${what}: ${status}`);
    this.name = "RequestFailed";
  }
}

/** Throws RequestFailed unless the answer is a 2xx (the body read as mink's JSON error when it is one). */
export async function expectOk(what: string, response: Response): Promise<Response> {
  if (response.ok) return response;
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  throw new RequestFailed(what, response.status, body);
}

interface MinkError {
  readonly code: string;
  readonly message: string;
  readonly op?: string;
}

/** mink's `{"error": {code, message, details}}`, from whatever the client library kept of the body. */
function minkError(body: unknown): MinkError | null {
  if (typeof body !== "object" || body === null || !("error" in body)) return null;
  const error = body.error;
  if (typeof error !== "object" || error === null) return null;
  const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof code !== "string" || typeof message !== "string") return null;
  const op = typeof details === "object" && details !== null ? (details as { op?: unknown }).op : undefined;
  return { code, message, ...(typeof op === "string" ? { op } : {}) };
}

/** The status and body of a failed request, from RequestFailed or @durable-streams/client's errors (`details` or `json`). */
function answerOf(error: unknown): { status: number; body: unknown } | null {
  if (error instanceof RequestFailed) return { status: error.status, body: error.body };
  if (typeof error !== "object" || error === null) return null;
  const { status, details, json, text } = error as { status?: unknown; details?: unknown; json?: unknown; text?: unknown };
  return typeof status === "number" ? { status, body: details ?? json ?? text } : null;
}

/** Why a request could not be sent at all (nothing listening, unknown host), from fetch's `cause`. */
function unreachable(error: unknown): string | null {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === "string" ? cause.code : null;
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ECONNRESET" ? code : null;
}

/** What to do about a refusal, by status. */
function advice(status: number, error: MinkError | null, env: NodeJS.ProcessEnv): string {
  if (status === 401) {
    return env["MINK_TOKEN"]
      ? "MINK_TOKEN is not an access token this deployment accepts (expired, revoked or from elsewhere): mint a new one with `mink token create --prefix demo/ --ops create,append,read`"
      : "this mink checks tokens (AUTH_MODE=token): set MINK_TOKEN to one from `mink token create --prefix demo/ --ops create,append,read`";
  }
  if (status === 403 && error?.op !== undefined) {
    return `MINK_TOKEN does not grant '${error.op}': mint a token that does, e.g. \`mink token create --prefix demo/ --ops create,append,read\` (the examples create, append to and read their stream)`;
  }
  if (status === 403) return "MINK_TOKEN does not cover this stream: mint one whose --prefix the stream name starts with (`mink token create --help`)";
  return error?.code === "unavailable" || status === 503 ? "mink is not ready or refused to serve: see its log, then retry" : "see the message above; docs/protocol-rules.md lists the answers";
}

/** The one line an example prints for `error`. */
function explainFailure(example: string, error: unknown, env: NodeJS.ProcessEnv): string {
  const base = env["MINK_URL"] ?? "http://127.0.0.1:8787";
  const down = unreachable(error);
  if (down !== null) return `${example}: cannot reach mink at ${base} (${down}): start it with \`npm run dev\`, or set MINK_URL to its address`;
  const answer = answerOf(error);
  if (answer !== null) {
    const mink = minkError(answer.body);
    const said = mink === null ? `${answer.status}` : `${answer.status} ${mink.code}: ${mink.message}`;
    return `${example}: mink refused a request (${said}); ${advice(answer.status, mink, env)}`;
  }
  return `${example}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
}

/** The name the example was started as, for the line's start (`producer.ts`). */
const example = (process.argv[1] ?? "example").split(/[\\/]/).at(-1) ?? "example";

function fail(error: unknown): void {
  console.error(explainFailure(example, error, process.env));
  process.exit(1);
}
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);
