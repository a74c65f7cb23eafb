// `npm run dev` with a port another program holds: one line that names the variable that sets the port
// (PORT for the Worker, MINK_S3_PORT for the embedded S3 endpoint, where MinIO usually sits) and how to
// pick another, exit 1, no stack, nothing started. Started for real (npm -> tsx), as a newcomer starts it.
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.ts";
import { runInRepo } from "../support/run-in-repo.ts";
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

async function dev(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return runInRepo(["npm", "run", "--silent", "dev"], { ...process.env, ...env }, { label: "dev-ports", timeoutMs: RUN_TIMEOUT_MS });
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
