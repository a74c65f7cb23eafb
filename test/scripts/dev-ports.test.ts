// `npm run dev` with a port another program holds: one line that names the variable that sets the port
// (PORT for the Worker, MINK_S3_PORT for the embedded S3 endpoint, where MinIO usually sits) and how to
// pick another, exit 1, no stack, nothing started. Started for real (npm -> tsx), as a newcomer starts it.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The check runs before any build: a few seconds for npm and tsx to start; a dev that did start is killed. */
const RUN_TIMEOUT_MS = 45_000;

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port this test holds, as another program would (MinIO on 9000, another npm run dev on 8787). */
async function holdPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  held.push(server);
  return (server.address() as AddressInfo).port;
}

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function dev(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  mkdirSync(join(REPO_ROOT, ".mink"), { recursive: true });
  const stateDir = mkdtempSync(join(REPO_ROOT, ".mink", "dev-ports-"));
  const child = spawn("npm", ["run", "--silent", "dev"], { cwd: REPO_ROOT, env: { ...process.env, ...env, MINK_STATE_DIR: stateDir }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), RUN_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  rmSync(stateDir, { recursive: true, force: true });
  return { code, output };
}

describe("npm run dev with a port in use", () => {
  it("PORT taken: says the Worker's port is PORT and to run PORT=<another> npm run dev, exits 1 without a stack", { timeout: RUN_TIMEOUT_MS + 5_000 }, async () => {
    const port = await holdPort();
    const result = await dev({ PORT: String(port), MINK_S3_PORT: String(await freePort()) });
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe(
      `npm run dev: port ${port} is already in use by another program; it is PORT, the Worker's port (default 8787). Pick another: PORT=${port + 1} npm run dev`,
    );
  });

  it("MINK_S3_PORT taken (MinIO on 9000): says it is the embedded S3 endpoint's MINK_S3_PORT and how to pick another, exits 1 without a stack", { timeout: RUN_TIMEOUT_MS + 5_000 }, async () => {
    const s3Port = await holdPort();
    const result = await dev({ PORT: String(await freePort()), MINK_S3_PORT: String(s3Port) });
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe(
      `npm run dev: port ${s3Port} is already in use by another program (MinIO listens on 9000 by default); it is MINK_S3_PORT, the embedded S3 endpoint's port (default 9000). Pick another: MINK_S3_PORT=${s3Port + 1} npm run dev`,
    );
    expect(result.output).not.toMatch(/^\s+at /m);
  });

  it("a PORT that is not a port number is refused in one line", { timeout: RUN_TIMEOUT_MS + 5_000 }, async () => {
    const result = await dev({ PORT: "87x87", MINK_S3_PORT: String(await freePort()) });
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe("npm run dev: PORT must be a port number from 1 to 65535 (got '87x87')");
  });
});
