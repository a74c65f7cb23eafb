// The CLI end to end against a real HTTP server that answers like the admin API (fake-admin-server.ts):
// main() runs in-process with injected stdout, stderr and env; each test asserts what a person or a script
// sees and the exit code.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { FAKE_TOKEN, NODES, STREAM, STREAMS, TOKEN_ISSUED_AT, startFakeAdminServer, type FakeAdminServer, type RebalanceRound } from "./fake-admin-server.ts";

let server: FakeAdminServer;

beforeAll(async () => {
  server = await startFakeAdminServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.reset();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  sleeps: number[];
}

/** Runs main() in-process; its clock moves only by its sleeps. */
async function mink(argv: string[], options: { env?: Record<string, string | undefined>; tty?: boolean; stallTimeoutMs?: number } = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const sleeps: number[] = [];
  let clockMs = 0;
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty === true },
    stderr: { write: (text: string) => (stderr += text) },
    env: options.env ?? { MINK_URL: server.url, MINK_ADMIN_TOKEN: FAKE_TOKEN },
    sleep: async (ms) => {
      sleeps.push(ms);
      clockMs += ms;
    },
    now: () => clockMs,
    pollIntervalMs: 250,
    stallTimeoutMs: options.stallTimeoutMs ?? 60_000,
  });
  return { code, stdout, stderr, sleeps };
}

describe("mink nodes", () => {
  it("prints an aligned table of the nodes", async () => {
    const run = await mink(["nodes"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(
      [
        "coordinator: node-0 at coordinator epoch 4",
        "NODE    LIVE  HEARTBEAT  ROLE                  SLOTS  DRAINING  STREAMS  OPENED  BUCKETS          EPOCH  ADDRESS",
        "node-0  yes        1.2s  coordinator               1  no             12      10        4  1795949874492  http://127.0.0.1:8787/n/node-0",
        "node-1  no        41.0s  dead,takeover:node-0      2  yes             3       0        0  1795949874493  http://127.0.0.1:8787/n/node-1",
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

describe("mink streams", () => {
  it("prints the first page as a table: name, owner, epoch, state, bytes and tail, '-' where the stream has no tail", async () => {
    const run = await mink(["streams"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(server.requests.map((request) => request.url)).toEqual(["/admin/streams"]);
    expect(run.stdout).toBe(
      [
        "NAME        OWNER   EPOCH  STATE             BYTES  TAIL",
        "demo/a b/c  node-0      3  opened -> node-1     12  0000000000000000_0000000000000012",
        "demo/b      node-1      1  opened                0  0000000000000000_0000000000000000",
        "demo/c      node-0      1  opened             1024  0000000000000000_0000000000001024 (closed)",
        "demo/new    node-1      0  placed                -  -",
        "other/x     -           0  unplaced              -  -",
        "",
      ].join("\n"),
    );
  });

  it("sends the prefix, --after and --limit, and ends a page that has more with the command for the next one", async () => {
    const first = await mink(["streams", "demo/", "--limit", "2"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trimEnd().split("\n").map((line) => line.split("  ")[0])).toEqual(["NAME", "demo/a b/c", "demo/b", "more streams follow: mink streams demo/ --after demo/b --limit 2"]);
    const second = await mink(["streams", "demo/", "--after", "demo/b", "--limit", "2"]);
    expect(second.stdout.trimEnd().split("\n").map((line) => line.split(" ")[0])).toEqual(["NAME", "demo/c", "demo/new"]);
    expect(server.requests.map((request) => request.url)).toEqual(["/admin/streams?prefix=demo/&limit=2", "/admin/streams?prefix=demo/&after=demo/b&limit=2"]);
    // A name the shell would split is quoted in the hint, and encoded whole in the query.
    const quoted = await mink(["streams", "demo/", "--limit", "1"]);
    expect(quoted.stdout.trimEnd().split("\n").at(-1)).toBe("more streams follow: mink streams demo/ --after 'demo/a b/c' --limit 1");
    expect(server.requests.at(-1)?.url).toBe("/admin/streams?prefix=demo/&limit=1");
    await mink(["streams", "--after", "demo/a b/c", "--limit", "1"]);
    expect(server.requests.at(-1)?.url).toBe("/admin/streams?after=demo/a%20b/c&limit=1");
  });

  it("says so when nothing matches, and drops a leading '/' of the prefix", async () => {
    const run = await mink(["streams", "/nothing/"]);
    expect(run).toMatchObject({ code: 0, stdout: "no streams under nothing/\n" });
    expect(server.requests[0]?.url).toBe("/admin/streams?prefix=nothing/");
    server.streams = [];
    expect((await mink(["streams", ""])).stdout).toBe("no streams\n");
  });

  it("prints the server's page with --json, and no hint", async () => {
    const run = await mink(["streams", "demo/", "--limit", "2", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ version: 7, streams: STREAMS.slice(0, 2), next: "demo/b" });
  });

  it("--all follows next to the last page, 1000 a page unless --limit says otherwise; --json prints every page's streams", async () => {
    server.addStreams(5);
    const run = await mink(["streams", "bulk/", "--all", "--limit", "2"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout.trimEnd().split("\n").map((line) => line.split(" ")[0])).toEqual(["NAME", "bulk/00001", "bulk/00002", "bulk/00003", "bulk/00004", "bulk/00005"]);
    expect(server.requests.map((request) => request.url)).toEqual([
      "/admin/streams?prefix=bulk/&limit=2",
      "/admin/streams?prefix=bulk/&after=bulk/00002&limit=2",
      "/admin/streams?prefix=bulk/&after=bulk/00004&limit=2",
    ]);
    const json = await mink(["streams", "--all", "--json"]);
    expect(server.requests.at(-1)?.url).toBe("/admin/streams?limit=1000");
    const answer = JSON.parse(json.stdout) as { version: number; streams: { name: string }[]; next: string | null };
    expect(answer).toMatchObject({ version: 7, next: null });
    expect(answer.streams).toHaveLength(STREAMS.length + 5);
  });

  it("--all stops after 100 pages: it prints what it read and exits 1 with the command for the rest", async () => {
    server.addStreams(101);
    const run = await mink(["streams", "bulk/", "--all", "--limit", "1"]);
    expect(run.code).toBe(1);
    expect(server.requests).toHaveLength(100);
    expect(run.stdout.trimEnd().split("\n")).toHaveLength(101); // the header and 100 rows
    expect(run.stderr).toBe("mink: more streams than 100 pages of 1: listed the first 100; the rest: mink streams bulk/ --after bulk/00100 --limit 1 --all\n");
  });

  it("exits 2 without a request for a bad --limit, a repeated --after, or the listing flags elsewhere", async () => {
    for (const argv of [
      ["streams", "--limit", "0"],
      ["streams", "--limit", "1001"],
      ["streams", "--limit", "ten"],
      ["streams", "--after", "a", "--after", "b"],
      ["streams", "a/", "b/"],
      ["nodes", "--all"],
      ["streams", "--prefix", "demo/"],
    ]) {
      const run = await mink(argv);
      expect(run.code, argv.join(" ")).toBe(2);
    }
    expect((await mink(["streams", "--limit", "0"])).stderr).toMatch(/^mink: --limit must be a whole number from 1 to 1000 \(got '0'\)/);
    expect((await mink(["streams", "--prefix", "demo/"])).stderr).toMatch(/the prefix of 'mink streams' is its operand/);
    expect(server.requests).toHaveLength(0);
  });

  it("exits 1 with the server's code when it refuses the request (no token)", async () => {
    const run = await mink(["streams", "--after", "x"], { env: { MINK_URL: server.url } });
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toMatch(/unauthorized/);
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
  const moving = (remaining: number, transferring: number, incoming = 0) => ({ draining: true, remaining, transferring, incoming, done: remaining === 0 && incoming === 0 });
  const answer = (begun: number, remaining: number, transferring: number, extra: { unplaceable?: number; incoming?: number; stalled?: { reason: string; streams: number; message: string } | null } = {}) => ({
    begun,
    unplaceable: 0,
    remaining,
    transferring,
    incoming: 0,
    done: false,
    stalled: null,
    ...extra,
  });
  const polls = [moving(4, 4), moving(4, 4), moving(1, 1), moving(0, 0)];
  const routes = (): string[] => server.requests.map((r) => `${r.method} ${r.url}`);

  it("returns at once with --no-wait, after starting the drain", async () => {
    const run = await mink(["drain", "node-1", "--no-wait"]);
    expect(run.code).toBe(0);
    expect(routes()).toEqual(["POST /admin/nodes/node-1/drain"]);
    expect(run.stdout).toBe("node-1 is draining: 4 streams to move (2 transfers begun, 2 transferring, 0 with no other node to go to)\n");
  });

  it("prints the server's answer with --json --no-wait", async () => {
    const run = await mink(["drain", "node-1", "--no-wait", "--json"]);
    expect(JSON.parse(run.stdout)).toEqual({ nodeId: "node-1", draining: true, begun: 2, unplaceable: 0, remaining: 4, transferring: 2, incoming: 0, done: false, stalled: null });
  });

  it("warns on stderr about streams with nowhere to go", async () => {
    const run = await mink(["drain", "node-lonely", "--no-wait"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^mink: warning: 1 of node-lonely's streams have no other node to go to/);
  });

  it("polls until done, writing one plain line per change when not on a terminal, and asks for the drain only once while everything moves", async () => {
    server.drainAnswers = [answer(4, 4, 4)];
    server.drainPolls = polls;
    const run = await mink(["drain", "node-1"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        "node-1 is draining: 4 streams to move (4 transfers begun, 4 transferring, 0 with no other node to go to)",
        "drain node-1: 0/4 streams moved, 4 remaining, 4 transferring",
        "drain node-1: 3/4 streams moved, 1 remaining, 1 transferring",
        "drain node-1: 4/4 streams moved, 0 remaining, 0 transferring",
        "node-1 is drained: 4 streams moved",
        "",
      ].join("\n"),
    );
    expect(run.sleeps).toEqual([250, 250, 250, 250]);
    expect(routes()).toEqual(["POST /admin/nodes/node-1/drain", ...Array<string>(4).fill("GET /admin/nodes/node-1/drain")]);
  });

  it("redraws a progress bar in place on a terminal", async () => {
    server.drainAnswers = [answer(4, 4, 4)];
    server.drainPolls = polls;
    const run = await mink(["drain", "node-1"], { tty: true });
    expect(run.code).toBe(0);
    const frames = run.stdout.split("\r").slice(1);
    expect(frames).toHaveLength(5);
    expect(frames[0]).toBe("draining node-1 [..............................] 0/4 streams moved, 4 transferring\u001b[K");
    expect(frames[3]).toBe("draining node-1 [######################........] 3/4 streams moved, 1 transferring\u001b[K");
    expect(frames[4]).toBe("draining node-1 [##############################] 4/4 streams moved, 0 transferring\u001b[K\nnode-1 is drained: 4 streams moved\n");
  });

  it("prints only the last status with --json", async () => {
    server.drainAnswers = [answer(4, 4, 4)];
    server.drainPolls = polls;
    const run = await mink(["drain", "node-1", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ nodeId: "node-1", draining: true, remaining: 0, transferring: 0, incoming: 0, done: true });
  });

  it("the report: a transfer to the node pending when the drain began is not done; once it landed, the drain is asked again and moves it away", async () => {
    server.drainAnswers = [answer(0, 0, 0, { incoming: 1 }), answer(1, 1, 1)];
    server.drainPolls = [moving(0, 0, 1), moving(1, 0), moving(1, 1), moving(0, 0)];
    const run = await mink(["drain", "node-1"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(
      [
        "node-1 is draining: 0 streams to move (0 transfers begun, 0 transferring, 0 with no other node to go to)",
        "drain node-1: 0/0 streams moved, 0 remaining, 0 transferring, 1 arriving",
        "drain node-1: 0/1 streams moved, 1 remaining, 1 transferring",
        "drain node-1: 1/1 streams moved, 0 remaining, 0 transferring",
        "node-1 is drained: 1 stream moved",
        "",
      ].join("\n"),
    );
    const drain = "/admin/nodes/node-1/drain";
    expect(routes()).toEqual([`POST ${drain}`, `GET ${drain}`, `GET ${drain}`, `POST ${drain}`, `GET ${drain}`, `GET ${drain}`]);
  });

  it("fails with exit 1, saying why, when the streams left have no other node to go to", async () => {
    const message = "2 streams cannot move: no other node has slots and is not draining (add a node, or raise a node's slots, then drain again)";
    server.drainAnswers = [answer(3, 5, 3, { unplaceable: 2 }), answer(0, 2, 0, { unplaceable: 2, stalled: { reason: "unplaceable", streams: 2, message } })];
    server.drainPolls = [moving(2, 0)];
    const run = await mink(["drain", "node-1"]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n").at(-2)).toBe("drain node-1: 3/5 streams moved, 2 remaining, 0 transferring");
    expect(run.stderr).toBe(
      "mink: warning: 2 of node-1's streams have no other node to go to (no node with slots that is not draining); add a node or raise a node's slots\n" +
        `mink: the drain of node-1 cannot finish: ${message}; node-1 stays draining ('mink undrain node-1' ends it)\n`,
    );
  });

  it("fails at once when the drain's first answer says so, and warns once and waits while transfers are refused for now", async () => {
    const stuck = { reason: "unplaceable", streams: 1, message: "1 stream cannot move: no other node has slots and is not draining (add a node, or raise a node's slots, then drain again)" };
    server.drainAnswers = [answer(0, 1, 0, { unplaceable: 1, stalled: stuck })];
    const first = await mink(["drain", "node-1"]);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/^mink: the drain of node-1 cannot finish: 1 stream cannot move: /);
    server.reset();

    const refused = { reason: "refused", streams: 1, message: "1 stream cannot move for now: the metadata log refused their transfers (a dead node's takeover may be pending); drain again shortly" };
    server.drainAnswers = [answer(0, 1, 0, { stalled: refused })];
    server.drainPolls = [moving(1, 0), moving(1, 0), moving(0, 0)];
    const run = await mink(["drain", "node-1"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(`mink: warning: ${refused.message}; still waiting\n`);
    expect(run.stdout).toMatch(/node-1 is drained: 1 stream moved\n$/);
  });

  it("fails with exit 1 when the node stops draining while it waits, without draining it again", async () => {
    server.drainPolls = [{ draining: false, remaining: 3, transferring: 0, done: false }];
    const run = await mink(["drain", "node-1"], { tty: true });
    expect(run.code).toBe(1);
    expect(run.stdout.endsWith("\n")).toBe(true);
    expect(run.stderr).toBe("mink: node-1 is no longer draining (undrained meanwhile?) with 3 streams still assigned\n");
    expect(routes()).toEqual(["POST /admin/nodes/node-1/drain", "GET /admin/nodes/node-1/drain"]);
  });

  it("undrains a node", async () => {
    const run = await mink(["undrain", "node-1"]);
    expect(run.code).toBe(0);
    expect(server.requests[0]).toMatchObject({ method: "DELETE", url: "/admin/nodes/node-1/drain" });
    expect(run.stdout).toBe("node-1 is no longer draining: 1 stream assigned, 0 transferring\n");
  });
});

describe("mink cluster rebalance", () => {
  const move = (n: number, from: string, to: string, kind = "transfer") => ({ streamId: `s${n}`, name: `demo/${n}`, from, to, kind });
  const plan = (moves: ReturnType<typeof move>[], extra: Partial<RebalanceRound["plan"]> = {}): RebalanceRound["plan"] => ({
    orphans: [],
    moves,
    meanLoad: 2.5,
    bands: { above: 2.75, below: 2.25 },
    unplaceable: 0,
    ...extra,
  });
  const round = (moves: ReturnType<typeof move>[], begun: number, pending: number, extra: Partial<RebalanceRound> = {}): RebalanceRound => ({
    plan: plan(moves),
    begun: moves.slice(0, begun),
    pending,
    done: false,
    version: 9,
    ...extra,
  });
  const [m1, m2, m3] = [move(1, "node-0", "node-1"), move(2, "node-0", "node-2"), move(3, "node-0", "node-1")];
  // maxConcurrent 2: the first round begins two of three moves; the third begins once one of them landed.
  const rounds = [round([m1, m2, m3], 2, 2), round([m3], 0, 2), round([m3], 1, 2), round([], 0, 1), round([], 0, 0, { done: true })];
  const bodies = (): unknown[] => server.requests.filter((r) => r.url === "/admin/rebalance").map((r) => r.body);

  it("--dry-run prints the plan: orphans first, then the moves, the mean load and the bands", async () => {
    server.rebalanceRounds = [{ ...round([m1, m2], 0, 0), plan: plan([m1, m2], { orphans: [move(9, "node-3", "node-1", "reassign")] }) }];
    const run = await mink(["cluster", "rebalance", "--dry-run"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(bodies()).toEqual([{ dryRun: true }]);
    expect(run.stdout).toBe(
      [
        "orphans: 1 stream of nodes that are not live, re-led by the coordinator (no transfer)",
        "STREAM  ID  FROM    TO",
        "demo/9  s9  node-3  node-1",
        "",
        "moves: 2 transfers, at most 4 pending at a time",
        "STREAM  ID  FROM    TO",
        "demo/1  s1  node-0  node-1",
        "demo/2  s2  node-0  node-2",
        "",
        "mean load 2.50 streams per slot over the live nodes that take streams: sources above 2.75, targets below 2.25",
        "",
      ].join("\n"),
    );
  });

  it("--dry-run says when nothing moves, and when streams have no live node to go to", async () => {
    const balanced = await mink(["cluster", "rebalance", "--dry-run", "--max-concurrent", "8"]);
    expect(bodies()).toEqual([{ dryRun: true, maxConcurrent: 8 }]);
    expect(balanced.stdout).toBe("nothing to move: the cluster is balanced\n\nmean load 2.00 streams per slot over the live nodes that take streams: sources above 2.20, targets below 1.80\n");
    server.rebalanceRounds = [{ ...round([], 0, 3), plan: plan([], { unplaceable: 3, meanLoad: 0, bands: { above: 0, below: 0 } }) }];
    const stuck = await mink(["cluster", "rebalance", "--dry-run"]);
    expect(stuck.code).toBe(0);
    expect(stuck.stdout.split("\n")[0]).toBe(
      "no live node can take 3 streams (orphans of nodes that are not live, and no live node has slots and is not draining): add a node or raise a node's slots",
    );
    expect(stuck.stdout).toMatch(/\n3 transfers pending now \(counted where they go\)\n$/);
  });

  it("--dry-run --json prints the server's plan", async () => {
    server.rebalanceRounds = [round([m1], 0, 0)];
    const run = await mink(["cluster", "rebalance", "--dry-run", "--json"]);
    expect(JSON.parse(run.stdout)).toEqual({ dryRun: true, maxConcurrent: 4, ...round([m1], 0, 0) });
  });

  it("calls the server round after round until done, one plain line per change", async () => {
    server.rebalanceRounds = rounds;
    const run = await mink(["cluster", "rebalance", "--max-concurrent", "2"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(
      [
        "rebalance: 3 moves planned; 2 transfers begun, at most 2 pending at a time",
        "rebalance: 0/3 moves done, 2 transferring, 1 to begin",
        "rebalance: 1/3 moves done, 2 transferring, 0 to begin",
        "rebalance: 2/3 moves done, 1 transferring, 0 to begin",
        "rebalance: 3/3 moves done, 0 transferring, 0 to begin",
        "rebalanced: 3 transfers completed; mean load 2.50 streams per slot over the live nodes that take streams: sources above 2.75, targets below 2.25",
        "",
      ].join("\n"),
    );
    expect(bodies()).toEqual(Array<unknown>(5).fill({ dryRun: false, maxConcurrent: 2 }));
    expect(run.sleeps).toEqual([250, 250, 250, 250]);
  });

  it("redraws a progress bar on a terminal, and prints the last answer with --json", async () => {
    server.rebalanceRounds = rounds;
    const tty = await mink(["cluster", "rebalance"], { tty: true });
    const frames = tty.stdout.split("\r").slice(1);
    expect(frames).toHaveLength(5);
    expect(frames[2]).toBe("rebalancing [##########....................] 1/3 moves done, 2 transferring\u001b[K");
    expect(frames[4]).toMatch(/^rebalancing \[#{30}\] 3\/3 moves done, 0 transferring\u001b\[K\nrebalanced: 3 transfers completed; /);
    server.reset();
    server.rebalanceRounds = rounds;
    const json = await mink(["cluster", "rebalance", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ dryRun: false, maxConcurrent: 4, ...rounds[4] });
  });

  it("--no-wait returns after the first round; a balanced cluster is done at once", async () => {
    server.rebalanceRounds = rounds;
    const run = await mink(["cluster", "rebalance", "--no-wait"]);
    expect(run.code).toBe(0);
    expect(bodies()).toHaveLength(1);
    expect(run.stdout).toBe(
      "rebalance: 3 moves planned; 2 transfers begun, at most 4 pending at a time\nrun 'mink cluster rebalance' again to begin the next moves as these finish\n",
    );
    server.reset();
    const balanced = await mink(["cluster", "rebalance"]);
    expect(balanced).toMatchObject({ code: 0, sleeps: [] });
    expect(balanced.stdout).toMatch(/^nothing to move: the cluster is balanced \(mean load 2\.00 streams per slot/);
  });

  it("fails with exit 1 when no live node can take the orphans", async () => {
    server.rebalanceRounds = [{ ...round([], 0, 0), plan: plan([], { unplaceable: 2 }) }];
    const run = await mink(["cluster", "rebalance"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "mink: the rebalance cannot finish: no live node can take 2 streams (orphans of nodes that are not live, and no live node has slots and is not draining): add a node or raise a node's slots\n",
    );
  });

  it("gives up with exit 1 when nothing changes for the stall timeout (an orphan the coordinator never re-leads)", async () => {
    const orphan = move(9, "node-3", "node-1", "reassign");
    server.rebalanceRounds = [round([m1], 1, 1), { ...round([], 0, 1), plan: plan([], { orphans: [orphan] }) }];
    const run = await mink(["cluster", "rebalance"], { stallTimeoutMs: 1_000 });
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n").slice(-2)[0]).toBe("rebalance: 0/1 moves done, 1 transferring, 0 to begin, 1 orphan waiting for the coordinator");
    expect(run.stderr).toBe(
      "mink: the rebalance made no progress for 1 s: 1 transfer pending, 0 moves not begun, 1 orphan waiting for the coordinator. " +
        "Transfers already begun go on ('mink transfers' lists them); run 'mink cluster rebalance' again later\n",
    );
    // The second answer (at 250 ms) changed the picture: an orphan appeared. The same answer followed until
    // 1,250 ms, a whole stall timeout later.
    expect(run.sleeps).toEqual([250, 250, 250, 250, 250]);
  });

  it("exits 2 without a request for a bad --max-concurrent", async () => {
    const run = await mink(["cluster", "rebalance", "--max-concurrent", "100"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("mink: --max-concurrent must be a whole number from 1 to 64 (got '100')\nRun 'mink cluster rebalance --help' for usage.\n");
    expect(server.requests).toHaveLength(0);
  });
});

describe("mink token create, revoke and list", () => {
  const create = ["token", "create", "--prefix", "other/", "--prefix", "demo/", "--ops", "append,read"];
  const routes = (): string[] => server.requests.map((r) => `${r.method} ${r.url}`);

  it("create sends the prefixes, ops and ttl, and prints the server's answer as key/value lines", async () => {
    const run = await mink([...create, "--ttl", "30m"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(server.requests).toEqual([
      expect.objectContaining({ method: "POST", url: "/admin/tokens", body: { prefixes: ["other/", "demo/"], ops: ["append", "read"], ttlSeconds: 1800 } }),
    ]);
    // The server's answer, not the command line: prefixes sorted, ops in the server's order.
    expect(run.stdout).toBe(
      [
        "id:        tok-00001",
        "token:     fake.tok-00001.signature",
        "expires:   2026-05-01T12:30:00.000Z",
        "prefixes:  demo/,other/",
        "ops:       read,append",
        "",
      ].join("\n"),
    );
  });

  it("create asks for an hour without --ttl, and prints the server's JSON with --json", async () => {
    const run = await mink([...create, "--json"]);
    expect(run.code).toBe(0);
    expect(server.requests[0]?.body).toMatchObject({ ttlSeconds: 3600 });
    expect(JSON.parse(run.stdout)).toEqual({
      id: "tok-00001",
      token: "fake.tok-00001.signature",
      expiresAt: "2026-05-01T13:00:00.000Z",
      prefixes: ["demo/", "other/"],
      ops: ["read", "append"],
    });
  });

  it("create prints the every-stream prefix as \"\" and a prefix's spaces, commas, quotes and % percent-encoded", async () => {
    const run = await mink(["token", "create", "--prefix", "", "--prefix", 'a b,"c"%/', "--ops", "read"]);
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests[0]?.body).toMatchObject({ prefixes: ["", 'a b,"c"%/'] });
    expect(run.stdout).toMatch(/^prefixes: {2}"",a%20b%2C%22c%22%25\/$/m);
  });

  it("create exits 1 with the server's message when it refuses the request, and 2 without a request for a usage error", async () => {
    const refused = await mink(["token", "create", "--prefix", "bad\u0001/", "--ops", "read"]);
    expect(refused).toMatchObject({ code: 1, stdout: "", stderr: "mink: invalid (HTTP 400): each prefix is a string without control characters or a leading '/'\n" });
    expect(server.requests).toHaveLength(1);
    server.reset();
    const usage = await mink(["token", "create", "--prefix", "demo/", "--ops", "read", "--ttl", "1y"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      "mink: --ttl must be a whole number and a unit, s, m, h or d (90s, 30m, 1h, 7d), from 1s to 366d (got '1y')\nRun 'mink token create --help' for usage.\n",
    );
    expect(server.requests).toHaveLength(0);
  });

  it("revoke sends DELETE /admin/tokens/<id> and prints `revoked <id>`; the list then shows the token revoked", async () => {
    expect((await mink(create)).code).toBe(0);
    expect((await mink(create)).code).toBe(0);
    const run = await mink(["token", "revoke", "tok-00002"]);
    expect(run).toMatchObject({ code: 0, stdout: "revoked tok-00002\n", stderr: "" });
    expect(routes().at(-1)).toBe("DELETE /admin/tokens/tok-00002");
    const list = await mink(["token", "list"]);
    expect(list).toMatchObject({ code: 0, stderr: "" });
    expect(list.stdout).toBe(
      [
        "ID         PREFIXES      OPS          EXPIRES                   REVOKED",
        "tok-00001  demo/,other/  read,append  2026-05-01T13:00:00.000Z  no",
        "tok-00002  demo/,other/  read,append  2026-05-01T13:00:00.000Z  yes",
        "",
      ].join("\n"),
    );
  });

  it("create --quiet prints only the token, for TOKEN=$(mink token create ... --quiet)", async () => {
    const run = await mink([...create, "--quiet"]);
    expect(run).toMatchObject({ code: 0, stdout: "fake.tok-00001.signature\n", stderr: "" });
  });

  it("revoke takes the token itself and revokes the id its jti claim names", async () => {
    const payload = Buffer.from(JSON.stringify({ jti: "tok-00001", aud: "mink-streams" })).toString("base64url");
    server.addTokens(1);
    const run = await mink(["token", "revoke", `eyJhbGciOiJIUzI1NiJ9.${payload}.c2lnbmF0dXJl`]);
    expect(run).toMatchObject({ code: 0, stdout: "revoked tok-00001\n", stderr: "" });
    expect(routes().at(-1)).toBe("DELETE /admin/tokens/tok-00001");
  });

  it("revoke --json prints the id revoked (the server's 204 has no body)", async () => {
    server.addTokens(1);
    const run = await mink(["token", "revoke", "tok-00001", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: "tok-00001", revoked: true });
  });

  it("revoke exits 1 with the server's message for an unknown id, and encodes the id in the path", async () => {
    const unknown = await mink(["token", "revoke", "tok-99999"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "", stderr: "mink: not_found (HTTP 404): no live token with this id\n" });
    const slashed = await mink(["token", "revoke", "a/b"]);
    expect(routes().at(-1)).toBe("DELETE /admin/tokens/a%2Fb");
    expect(slashed).toMatchObject({ code: 1, stderr: "mink: invalid (HTTP 400): id is not a token id\n" });
  });

  it("list says so when there are no tokens", async () => {
    const run = await mink(["token", "list"]);
    expect(run).toMatchObject({ code: 0, stdout: "no tokens\n" });
    expect(routes()).toEqual(["GET /admin/tokens?limit=100"]);
  });

  it("list follows `next` page after page to the last one, and --json prints every page's tokens in the server's shape", async () => {
    server.addTokens(250);
    const run = await mink(["token", "list"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(routes()).toEqual(["GET /admin/tokens?limit=100", "GET /admin/tokens?after=tok-00100&limit=100", "GET /admin/tokens?after=tok-00200&limit=100"]);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(251);
    expect(lines[250]).toBe("tok-00250  demo/     read  2026-05-01T13:00:00.000Z  no");
    server.requests.length = 0;
    const json = await mink(["token", "list", "--json"]);
    const answer = JSON.parse(json.stdout) as { tokens: Array<{ id: string; issuedAt: string }>; next: string | null };
    expect(answer.next).toBeNull();
    expect(answer.tokens.map((token) => token.id)).toEqual(Array.from({ length: 250 }, (_, i) => `tok-${String(i + 1).padStart(5, "0")}`));
    expect(answer.tokens[0]).toEqual({ id: "tok-00001", prefixes: ["demo/"], ops: ["read"], issuedAt: TOKEN_ISSUED_AT, expiresAt: "2026-05-01T13:00:00.000Z", revoked: false });
    expect(server.requests).toHaveLength(3);
  });

  it("list stops after 100 pages: it prints the 10,000 tokens read and exits 1 saying there are more", async () => {
    server.addTokens(10_001);
    const run = await mink(["token", "list"]);
    expect(run.code).toBe(1);
    expect(server.requests).toHaveLength(100);
    expect(run.stdout.trimEnd().split("\n")).toHaveLength(10_001); // the header and 10,000 rows
    expect(run.stderr).toBe("mink: more tokens than 100 pages of 100: listed the first 10000, the rest not\n");
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
