// The CLI end to end against a real HTTP server that answers like the admin API (fake-admin-server.ts):
// main() runs in-process with injected stdout, stderr and env; each test asserts what a person or a script
// sees and the exit code.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { FAKE_TOKEN, NODES, STREAM, startFakeAdminServer, type FakeAdminServer } from "./fake-admin-server.ts";

let server: FakeAdminServer;

beforeAll(async () => {
  server = await startFakeAdminServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
  server.drainPolls = [{ draining: true, remaining: 0, transferring: 0, done: true }];
  delete server.brokenNodes;
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  sleeps: number[];
}

async function mink(argv: string[], options: { env?: Record<string, string | undefined>; tty?: boolean } = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const sleeps: number[] = [];
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty === true },
    stderr: { write: (text: string) => (stderr += text) },
    env: options.env ?? { MINK_URL: server.url, MINK_ADMIN_TOKEN: FAKE_TOKEN },
    sleep: async (ms) => void sleeps.push(ms),
    pollIntervalMs: 250,
  });
  return { code, stdout, stderr, sleeps };
}

describe("mink nodes", () => {
  it("prints an aligned table of the nodes", async () => {
    const run = await mink(["nodes"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(
      [
        "NODE    LIVE  SLOTS  DRAINING  STREAMS  OPENED          EPOCH  ADDRESS",
        "node-0  yes       1  no             12      10  1795949874492  http://127.0.0.1:8787/n/node-0",
        "node-1  no        2  yes             3       0  1795949874493  http://127.0.0.1:8787/n/node-1",
        "",
      ].join("\n"),
    );
  });

  it("prints the server's JSON with --json", async () => {
    const run = await mink(["nodes", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(NODES);
  });

  it("sends the bearer token from MINK_ADMIN_TOKEN, or from --token over it", async () => {
    await mink(["nodes"]);
    expect(server.requests[0]?.authorization).toBe(`Bearer ${FAKE_TOKEN}`);
    const run = await mink(["nodes", "--url", server.url, "--token", FAKE_TOKEN], { env: { MINK_ADMIN_TOKEN: "stale" } });
    expect(run.code).toBe(0);
    expect(server.requests[1]?.authorization).toBe(`Bearer ${FAKE_TOKEN}`);
  });

  it("says the token is missing when none is given, and exits 1", async () => {
    const run = await mink(["nodes"], { env: { MINK_URL: server.url } });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe("mink: unauthorized (HTTP 401): no admin token given: pass --token or set MINK_ADMIN_TOKEN\n");
    expect(server.requests[0]?.authorization).toBeUndefined();
  });

  it("says the token was rejected when it is wrong, and exits 1", async () => {
    const run = await mink(["nodes", "--token", "wrong"], { env: { MINK_URL: server.url } });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("mink: unauthorized (HTTP 401): the admin token was rejected (wrong token?)\n");
  });

  it("reports an answer that is not mink's JSON with its status and body, and exits 1", async () => {
    server.brokenNodes = 502;
    const run = await mink(["nodes"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("mink: http_502 (HTTP 502): <html><body>Bad Gateway</body></html>\n");
  });

  it("reports a server it cannot reach, and exits 1", async () => {
    const closed = await startFakeAdminServer();
    await closed.close();
    const run = await mink(["nodes"], { env: { MINK_URL: closed.url, MINK_ADMIN_TOKEN: FAKE_TOKEN } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^mink: cannot reach ${closed.url} \\(GET /admin/nodes\\): .*ECONNREFUSED.*is mink running there\\?`));
  });
});

describe("mink slots", () => {
  it("sends the slot count and prints the node", async () => {
    const run = await mink(["slots", "node-1", "3"]);
    expect(run.code).toBe(0);
    expect(server.requests[0]).toMatchObject({ method: "PUT", url: "/admin/nodes/node-1/slots", body: { slots: 3 } });
    expect(run.stdout).toBe(
      ["node:      node-1", "slots:     3", "draining:  no", "epoch:     5", "address:   http://127.0.0.1:8787/n/node-1", ""].join("\n"),
    );
  });

  it("exits 1 with the server's code and message for an unknown node", async () => {
    const run = await mink(["slots", "node-9", "1"]);
    expect(run).toMatchObject({ code: 1, stdout: "", stderr: "mink: not_found (HTTP 404): no node node-9\n" });
  });

  it("exits 2 without sending anything for a bad count", async () => {
    const run = await mink(["slots", "node-1", "lots"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("mink: <n> must be a whole number, 0 or more (got 'lots')\nRun 'mink slots --help' for usage.\n");
    expect(server.requests).toHaveLength(0);
  });
});

describe("mink stream", () => {
  it("encodes each path segment, keeps the slashes, and prints the record as key/value lines", async () => {
    const run = await mink(["stream", "demo/a b/c"]);
    expect(run.code).toBe(0);
    expect(server.requests[0]?.url).toBe("/admin/streams/demo/a%20b/c");
    expect(run.stdout).toBe(
      [
        "name:                demo/a b/c",
        "id:                  s1",
        "owner:               node-0",
        "owner address:       http://127.0.0.1:8787/n/node-0",
        "epoch:               3",
        "ownership:           opened",
        "closed at epoch:     -",
        "pending transfer:    node-0 -> node-1 (http://127.0.0.1:8787/n/node-1)",
        "config.contentType:  text/plain",
        "config.ttlSeconds:   -",
        "config.expiresAtMs:  -",
        "config.fork:         -",
        "log version:         7",
        "",
      ].join("\n"),
    );
  });

  it("prints the server's JSON with --json", async () => {
    const run = await mink(["stream", "demo/a b/c", "--json"]);
    expect(JSON.parse(run.stdout)).toEqual(STREAM);
  });

  it("exits 1 with not_found for an unknown stream", async () => {
    const run = await mink(["stream", "nope/x"]);
    expect(run).toMatchObject({ code: 1, stderr: "mink: not_found (HTTP 404): no stream nope/x\n" });
  });
});

describe("mink transfer and transfers", () => {
  it("asks for the transfer (the path encoded as in a stream URL) and prints it as pending", async () => {
    const run = await mink(["transfer", "demo/a b/c", "node-1"]);
    expect(run.code).toBe(0);
    expect(server.requests[0]).toMatchObject({ method: "POST", url: "/admin/transfers", body: { stream: "demo/a%20b/c", target: "node-1" } });
    expect(run.stdout.split("\n")[0]).toBe("transfer of demo/a b/c from node-0 to node-1 is pending");
    expect(run.stdout).toContain("target:     node-1\n");
  });

  it("exits 0 and says so when the transfer was already pending", async () => {
    const run = await mink(["transfer", "demo/a b/c", "node-2"]);
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe("transfer of demo/a b/c from node-0 to node-2 was already pending");
  });

  it("exits 1 with the server's code, message and details for a rejected transfer", async () => {
    const run = await mink(["transfer", "demo/a b/c", "node-9"]);
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toBe('mink: invalid (HTTP 400): target node-9 is not registered\n  details: {"target":"node-9"}\n');
  });

  it("lists the pending transfers as a table", async () => {
    const run = await mink(["transfers"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      ["STREAM      ID  SOURCE  TARGET  EPOCH  OWNERSHIP", "demo/a b/c  s1  node-0  node-1      3  opened", ""].join("\n"),
    );
  });
});

describe("mink drain and undrain", () => {
  const polls = [
    { draining: true, remaining: 4, transferring: 2, done: false },
    { draining: true, remaining: 4, transferring: 2, done: false },
    { draining: true, remaining: 1, transferring: 1, done: false },
    { draining: true, remaining: 0, transferring: 0, done: true },
  ];

  it("returns at once with --no-wait, after starting the drain", async () => {
    const run = await mink(["drain", "node-1", "--no-wait"]);
    expect(run.code).toBe(0);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /admin/nodes/node-1/drain"]);
    expect(run.stdout).toBe("node-1 is draining: 4 streams to move (2 transfers begun, 2 transferring, 0 with no other node to go to)\n");
  });

  it("prints the server's answer with --json --no-wait", async () => {
    const run = await mink(["drain", "node-1", "--no-wait", "--json"]);
    expect(JSON.parse(run.stdout)).toEqual({ nodeId: "node-1", draining: true, begun: 2, unplaceable: 0, remaining: 4, transferring: 2 });
  });

  it("warns on stderr about streams with nowhere to go", async () => {
    const run = await mink(["drain", "node-lonely", "--no-wait"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^mink: warning: 1 of node-lonely's streams have no other node to go to/);
  });

  it("polls until done, writing one plain line per change when not on a terminal", async () => {
    server.drainPolls = polls;
    const run = await mink(["drain", "node-1"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        "node-1 is draining: 4 streams to move (2 transfers begun, 2 transferring, 0 with no other node to go to)",
        "drain node-1: 0/4 streams moved, 4 remaining, 2 transferring",
        "drain node-1: 3/4 streams moved, 1 remaining, 1 transferring",
        "drain node-1: 4/4 streams moved, 0 remaining, 0 transferring",
        "node-1 is drained: 4 streams moved",
        "",
      ].join("\n"),
    );
    expect(run.sleeps).toEqual([250, 250, 250]);
    expect(server.requests.filter((r) => r.method === "GET")).toHaveLength(4);
  });

  it("redraws a progress bar in place on a terminal", async () => {
    server.drainPolls = polls;
    const run = await mink(["drain", "node-1"], { tty: true });
    expect(run.code).toBe(0);
    const frames = run.stdout.split("\r").slice(1);
    expect(frames).toHaveLength(4);
    expect(frames[0]).toBe("draining node-1 [..............................] 0/4 streams moved, 2 transferring\u001b[K");
    expect(frames[2]).toBe("draining node-1 [######################........] 3/4 streams moved, 1 transferring\u001b[K");
    expect(frames[3]).toBe("draining node-1 [##############################] 4/4 streams moved, 0 transferring\u001b[K\nnode-1 is drained: 4 streams moved\n");
  });

  it("prints only the final status with --json", async () => {
    server.drainPolls = polls;
    const run = await mink(["drain", "node-1", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ nodeId: "node-1", draining: true, remaining: 0, transferring: 0, done: true });
  });

  it("fails with exit 1 when the node stops draining while it waits", async () => {
    server.drainPolls = [polls[0]!, { draining: false, remaining: 3, transferring: 0, done: false }];
    const run = await mink(["drain", "node-1"], { tty: true });
    expect(run.code).toBe(1);
    expect(run.stdout.endsWith("\n")).toBe(true);
    expect(run.stderr).toBe("mink: node-1 is no longer draining (undrained meanwhile?) with 3 streams still assigned\n");
  });

  it("undrains a node", async () => {
    const run = await mink(["undrain", "node-1"]);
    expect(run.code).toBe(0);
    expect(server.requests[0]).toMatchObject({ method: "DELETE", url: "/admin/nodes/node-1/drain" });
    expect(run.stdout).toBe("node-1 is no longer draining: 1 stream assigned, 0 transferring\n");
  });
});

describe("mink help", () => {
  it("prints help on stdout and exits 0 without a request", async () => {
    const run = await mink(["transfer", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: mink transfer <path> <node> \[options\]/);
    expect(server.requests).toHaveLength(0);
  });
});
