// The mink CLI against mink started for real (three nodes under `wrangler dev`, test/e2e/service.ts): the
// commands people use to look at the cluster and to move streams, run in-process through main() and, at
// least once, as the real `node bin/mink.js` child process. Transfers and drains only have to be accepted
// here (exit 0, the pending transfer printed); their completion is the nodes' work, tested elsewhere.
//
//   npm run test:e2e -- test/e2e/cli.e2e.test.ts

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { startService, type Service } from "./service.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STREAM_PATH = "cli-e2e/orders/2026";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe("mink CLI against a three-node mink", () => {
  let service: Service;

  beforeAll(async () => {
    service = await startService({ nodes: 3 });
    const created = await fetch(`${service.baseUrl}/v1/stream/${STREAM_PATH}`, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(created.status, await created.text()).toBe(201);
  });

  afterAll(async () => {
    await service?.stop();
  });

  async function mink(argv: string[], env: Record<string, string> = {}): Promise<Run> {
    let stdout = "";
    let stderr = "";
    const code = await main(argv, {
      stdout: { write: (text: string) => (stdout += text), isTTY: false },
      stderr: { write: (text: string) => (stderr += text) },
      env: { MINK_URL: service.baseUrl, MINK_ADMIN_TOKEN: service.adminToken, ...env },
    });
    return { code, stdout, stderr };
  }

  /** `node bin/mink.js ...` as a child process (from the TypeScript source, never a stale bundle). */
  function minkProcess(argv: string[], env: Record<string, string>): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ["bin/mink.js", ...argv],
        { cwd: REPO_ROOT, env: { ...process.env, MINK_CLI_FROM_SOURCE: "1", MINK_URL: "", MINK_ADMIN_TOKEN: "", ...env } },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  async function owner(): Promise<string> {
    const run = await mink(["stream", STREAM_PATH, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { owner: string }).owner;
  }

  it("lists the three nodes as JSON, one of them owning the stream", async () => {
    const run = await mink(["nodes", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout) as { nodes: Array<{ id: string; streams: number }> };
    expect(answer.nodes.map((node) => node.id)).toEqual(["node-0", "node-1", "node-2"]);
    expect(answer.nodes.reduce((sum, node) => sum + node.streams, 0)).toBe(1);
  });

  it("shows the stream's record", async () => {
    const run = await mink(["stream", STREAM_PATH]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^name: +${STREAM_PATH}$`, "m"));
    expect(run.stdout).toMatch(/^owner: +node-[012]$/m);
    expect(run.stdout).toMatch(/^config\.contentType: +text\/plain$/m);
  });

  it("exits 1 with not_found for a stream that does not exist", async () => {
    const run = await mink(["stream", "cli-e2e/missing"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^mink: not_found \(HTTP 404\)/);
  });

  it("sets a node's slots, and `mink nodes` shows them", async () => {
    const set = await mink(["slots", "node-1", "2"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^slots: +2$/m);
    const nodes = await mink(["nodes"]);
    expect(nodes.code, nodes.stderr).toBe(0);
    const lines = nodes.stdout.trimEnd().split("\n");
    const header = (lines[0] ?? "").split(/\s+/);
    const row = lines.find((line) => line.startsWith("node-1 "))?.split(/\s+/) ?? [];
    expect(row[header.indexOf("SLOTS")]).toBe("2");
  });

  it("lists pending transfers (none yet)", async () => {
    const run = await mink(["transfers"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^(no pending transfers|STREAM +ID +SOURCE +TARGET)/);
  });

  it("accepts a transfer to another node and prints it as pending", async () => {
    const source = await owner();
    const target = ["node-0", "node-1", "node-2"].find((id) => id !== source) ?? "";
    const run = await mink(["transfer", STREAM_PATH, target]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split("\n")[0]).toMatch(new RegExp(`^transfer of ${STREAM_PATH} from ${source} to ${target} (is|was already) pending$`));
    expect(run.stdout).toMatch(new RegExp(`^target: +${target}$`, "m"));
  });

  it("accepts a drain with --no-wait, and an undrain", async () => {
    const drain = await mink(["drain", "node-2", "--no-wait"]);
    expect(drain.code, drain.stderr).toBe(0);
    expect(drain.stdout).toMatch(/^node-2 is draining: \d+ streams to move/);
    const undrain = await mink(["undrain", "node-2"]);
    expect(undrain.code, undrain.stderr).toBe(0);
    expect(undrain.stdout).toMatch(/^node-2 is no longer draining/);
  });

  it("runs as `node bin/mink.js`: JSON on stdout and exit 0 with the token, exit 1 and a clear message without", async () => {
    const ok = await minkProcess(["nodes", "--json"], { MINK_URL: service.baseUrl, MINK_ADMIN_TOKEN: service.adminToken });
    expect(ok.code, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as { nodes: unknown[] }).nodes).toHaveLength(3);

    const noToken = await minkProcess(["nodes", "--url", service.baseUrl], {});
    expect(noToken.code).toBe(1);
    expect(noToken.stdout).toBe("");
    expect(noToken.stderr).toBe("mink: unauthorized (HTTP 401): no admin token given: pass --token or set MINK_ADMIN_TOKEN\n");

    const usage = await minkProcess(["slots", "node-1"], {});
    expect(usage.code).toBe(2);
  });
});
