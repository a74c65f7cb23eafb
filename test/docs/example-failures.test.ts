// The examples a newcomer runs first say in one line what failed and what to do when mink refuses them (a
// token without `create`, no token at all) or is not there, and exit 1: no stack. Each runs for real
// (tsx) against a small HTTP server that answers every request as mink's Worker refuses it.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = join(REPO_ROOT, "node_modules", ".bin", "tsx");
const RUN_TIMEOUT_MS = 30_000;

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A server that answers every request with `status` and mink's error body. */
async function refusing(status: number, error: { code: string; message: string; details?: object }): Promise<string> {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { ...error, retryable: false } }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function runExample(file: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(TSX, [join("examples", file), "demo/events", "1"], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const forbidden = (op: string) => ({ code: "forbidden", message: `the token does not grant '${op}'`, details: { op } });

describe("an example refused by mink prints one line and exits 1", () => {
  it.each([
    ["producer.ts", "create"],
    ["idempotent-writer.ts", "create"],
    ["live-tail.ts", "read"],
  ])("%s with a token without '%s' says so, with the status, and how to mint one that grants it", { timeout: RUN_TIMEOUT_MS + 5_000 }, async (file, op) => {
    const url = await refusing(403, forbidden(op));
    const result = await runExample(file, { MINK_URL: url, MINK_TOKEN: "some-token", TAIL_DEADLINE_MS: "10000" });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`${file}: mink refused a request (403 forbidden: the token does not grant '${op}')`);
    expect(lines[0]).toContain(`MINK_TOKEN does not grant '${op}'`);
    expect(lines[0]).toContain("mink token create --prefix demo/ --ops create,append,read");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it("producer.ts without a token against a mink in token mode says to set MINK_TOKEN", { timeout: RUN_TIMEOUT_MS + 5_000 }, async () => {
    const url = await refusing(401, { code: "unauthorized", message: "a bearer token is required (Authorization: Bearer <token>)" });
    const result = await runExample("producer.ts", { MINK_URL: url, MINK_TOKEN: "" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^producer\.ts: mink refused a request \(401 unauthorized: a bearer token is required[^\n]*set MINK_TOKEN to one from `mink token create/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  // (@durable-streams/client retries a refused connection with backoff; the plain-fetch example does not.)
  it("idempotent-writer.ts with no mink listening says to start it with npm run dev or set MINK_URL", { timeout: RUN_TIMEOUT_MS + 5_000 }, async () => {
    const url = await refusing(500, { code: "internal", message: "unused" });
    await new Promise((resolve) => server!.close(resolve)); // nothing listens on that port any more
    server = undefined;
    const result = await runExample("idempotent-writer.ts", { MINK_URL: url, MINK_TOKEN: "" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`idempotent-writer.ts: cannot reach mink at ${url} (ECONNREFUSED): start it with \`npm run dev\`, or set MINK_URL to its address`);
  });
});
