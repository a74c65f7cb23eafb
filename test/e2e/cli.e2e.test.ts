// The mink CLI against mink started for real (three nodes under the local runtime, test/e2e/service.ts): the
// commands people use to look at the cluster and to move streams, run in-process through main() and, at
// least once, as the real `node bin/mink.js` child process. A transfer is accepted (exit 0, the pending
// transfer printed) and then completes: `mink stream --json` shows the target owning the stream, opened, and
// the bytes read back through the router are the same. A drain waits until the node owns nothing, and every
// stream reads back the same. `mink cluster rebalance` plans (dry run) and then moves streams off a node that
// got every new one, and they read back the same. `mink token create` mints an access token that `mink token
// list` shows and `mink token revoke` marks revoked (the service runs AUTH_MODE=open, where stream requests
// need no token; conformance.e2e.test.ts runs streams with tokens in AUTH_MODE=token). `mink streams` lists
// streams under a prefix with their owners and sizes, a page at a time. `mink tables`, `mink table` and
// `mink table snapshot` show a table created and written through /v1/table: its rows per bucket, and after
// the snapshot each written bucket's snapshot offset. The waits are for conditions with a deadline
// (eventually); nothing here asserts on timing.
//
//   npm run test:e2e -- test/e2e/cli.e2e.test.ts

import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { fileURLToPath } from "node:url";
import { fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import { E2E_TOKEN_SECRET, startService, type Service } from "./service.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STREAM_PATH = "cli-e2e/orders/2026";
const STREAM_CONTENT = "order 1\norder 2\norder 3\n";
const NODE_IDS = ["node-0", "node-1", "node-2"];
const TABLE_NAME = "cli_e2e_users";
const TABLE_BUCKETS = 2;
const TABLE_ROWS = 8;
/** Bound on each wait for a transfer or drain to settle (generous: 2 busy cores). */
const SETTLE_TIMEOUT_MS = 60_000;

interface StreamJson {
  owner: string | null;
  ownership: string;
  pendingTransfer: { source: string; target: string } | null;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe("mink CLI against a three-node mink", () => {
  let service: Service;

  beforeAll(async () => {
    service = await startService({ nodes: 3 });
    await createWithContent(STREAM_PATH, STREAM_CONTENT);
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

  /**
   * A stream request through the router as a client makes it: undici 7's fetch follows the 307 to the owner
   * (with the body; Node 20's own fetch may not), and a 409 or 503 while a transfer settles is retried.
   */
  async function streamRequest(path: string, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; text: string }> {
    return eventually(
      async () => {
        const response = await undiciFetch(`${service.baseUrl}/v1/stream/${path}`, init);
        const text = await response.text();
        if (response.status === 409 || response.status === 503) throw new NotYet(`${init.method} ${path} answered ${response.status}: ${text}`);
        return { status: response.status, text };
      },
      { what: `${init.method} ${path} answered other than 409 or 503`, timeoutMs: SETTLE_TIMEOUT_MS, errors: "fail" },
    );
  }

  async function createWithContent(path: string, content: string): Promise<void> {
    const created = await streamRequest(path, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(created.status, created.text).toBe(201);
    const appended = await streamRequest(path, { method: "POST", headers: { "content-type": "text/plain" }, body: content });
    expect([200, 204], appended.text).toContain(appended.status);
  }

  async function readBack(path: string): Promise<string> {
    const read = await streamRequest(`${path}?offset=-1`, { method: "GET" });
    expect(read.status, read.text).toBe(200);
    return read.text;
  }

  async function streamJson(path: string): Promise<StreamJson> {
    const run = await mink(["stream", path, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as StreamJson;
  }

  async function owner(path = STREAM_PATH): Promise<string> {
    return (await streamJson(path)).owner ?? "";
  }

  /**
   * Waits (eventually) until `done` holds for the value `read` gives; fails naming `what` and the last value
   * after SETTLE_TIMEOUT_MS, or at once when `read` throws (an `expect` in it).
   */
  async function waitUntil<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    const { value } = await eventually(
      async () => {
        const value = await read();
        if (!done(value)) throw new NotYet(`last seen ${JSON.stringify(value)}`);
        return { value };
      },
      { what, timeoutMs: SETTLE_TIMEOUT_MS, errors: "fail" },
    );
    return value;
  }

  async function noPendingTransfers(): Promise<void> {
    await waitUntil("no pending transfers", async () => {
      const run = await mink(["transfers", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { transfers: unknown[] }).transfers.length;
    }, (pending) => pending === 0);
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
    // The table follows the coordinator line; its cells hold no spaces, so a split finds the columns.
    const header = (lines.find((line) => line.startsWith("NODE ")) ?? "").split(/\s+/);
    const row = lines.find((line) => line.startsWith("node-1 "))?.split(/\s+/) ?? [];
    expect(row[header.indexOf("SLOTS")]).toBe("2");
  });

  it("lists pending transfers (none yet)", async () => {
    const run = await mink(["transfers"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^(no pending transfers|STREAM +ID +SOURCE +TARGET)/);
  });

  it("accepts a transfer to another node, prints it as pending, and the target ends up serving the same bytes", { timeout: 90_000 }, async () => {
    const source = await owner();
    const target = NODE_IDS.find((id) => id !== source) ?? "";
    const run = await mink(["transfer", STREAM_PATH, target]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split("\n")[0]).toMatch(new RegExp(`^transfer of ${STREAM_PATH} from ${source} to ${target} (is|was already) pending$`));
    expect(run.stdout).toMatch(new RegExp(`^target: +${target}$`, "m"));

    const settled = await waitUntil(`${STREAM_PATH} opened by ${target}`, () => streamJson(STREAM_PATH),
      (stream) => stream.owner === target && stream.ownership === "opened" && stream.pendingTransfer === null);
    expect(settled).toMatchObject({ owner: target, ownership: "opened", pendingTransfer: null });
    expect(await readBack(STREAM_PATH)).toBe(STREAM_CONTENT);
  });

  it("accepts a drain with --no-wait, and an undrain", async () => {
    const drain = await mink(["drain", "node-2", "--no-wait"]);
    expect(drain.code, drain.stderr).toBe(0);
    expect(drain.stdout).toMatch(/^node-2 is draining: \d+ streams to move/);
    const undrain = await mink(["undrain", "node-2"]);
    expect(undrain.code, undrain.stderr).toBe(0);
    expect(undrain.stdout).toMatch(/^node-2 is no longer draining/);
  });

  it("drains a node (waiting until done): it owns nothing afterwards, every stream reads back the same; then undrains it", { timeout: 120_000 }, async () => {
    // Earlier tests left transfers moving (the --no-wait drain): let them land first, so the drained node
    // cannot receive a stream that was already on its way to it.
    await noPendingTransfers();
    const paths = Array.from({ length: 6 }, (_, i) => `cli-e2e/drain/${i}`);
    const contents = new Map(paths.map((path, i) => [path, `stream ${i}: ${"x".repeat(10 * i)}\n`]));
    for (const [path, content] of contents) await createWithContent(path, content);
    const drained = await owner(paths[0]);
    expect(NODE_IDS).toContain(drained);

    const drain = await mink(["drain", drained]);
    expect(drain.code, drain.stderr).toBe(0);
    expect(drain.stdout).toMatch(new RegExp(`^${drained} is drained: \\d+ streams? moved$`, "m"));

    const nodes = await mink(["nodes", "--json"]);
    expect(nodes.code, nodes.stderr).toBe(0);
    const row = (JSON.parse(nodes.stdout) as { nodes: Array<{ id: string; streams: number; draining: boolean }> }).nodes.find((node) => node.id === drained);
    expect(row).toMatchObject({ streams: 0, draining: true });
    for (const [path, content] of contents) {
      const stream = await streamJson(path);
      expect(stream.owner, path).not.toBe(drained);
      expect(await readBack(path), path).toBe(content);
    }
    expect(await readBack(STREAM_PATH)).toBe(STREAM_CONTENT);

    const undrain = await mink(["undrain", drained]);
    expect(undrain.code, undrain.stderr).toBe(0);
    expect(undrain.stdout).toMatch(new RegExp(`^${drained} is no longer draining`));
  });

  it("rebalances: a dry run plans moves off the node that got every new stream and changes nothing; the real one spreads them, and every stream reads back", { timeout: 180_000 }, async () => {
    await noPendingTransfers();
    const nodesJson = async (): Promise<Array<{ id: string; slots: number; streams: number }>> => {
      const run = await mink(["nodes", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { nodes: Array<{ id: string; slots: number; streams: number }> }).nodes;
    };
    // Every new stream lands on node-0: the other nodes take none while they are created.
    const heavy = "node-0";
    const others = (await nodesJson()).filter((node) => node.id !== heavy);
    for (const node of others) expect((await mink(["slots", node.id, "0"])).code).toBe(0);
    const paths = Array.from({ length: 9 }, (_, i) => `cli-e2e/rebalance/${i}`);
    const contents = new Map(paths.map((path, i) => [path, `rebalanced ${i}\n`]));
    try {
      for (const [path, content] of contents) await createWithContent(path, content);
    } finally {
      for (const node of others) expect((await mink(["slots", node.id, String(node.slots)])).code).toBe(0);
    }
    for (const path of paths) expect(await owner(path), path).toBe(heavy);
    const heavyBefore = (await nodesJson()).find((node) => node.id === heavy)?.streams ?? 0;

    const dry = await mink(["cluster", "rebalance", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as { dryRun: boolean; begun: unknown[]; plan: { moves: Array<{ name: string; from: string; to: string }>; orphans: unknown[] } };
    expect(plan).toMatchObject({ dryRun: true, begun: [], plan: { orphans: [] } });
    expect(plan.plan.moves.filter((move) => move.from === heavy && paths.includes(move.name)).length).toBeGreaterThan(0);
    const pending = await mink(["transfers", "--json"]);
    expect((JSON.parse(pending.stdout) as { transfers: unknown[] }).transfers).toEqual([]); // the dry run began nothing
    const dryText = await mink(["cluster", "rebalance", "--dry-run"]);
    expect(dryText.code, dryText.stderr).toBe(0);
    expect(dryText.stdout).toMatch(/^moves: \d+ transfers?, at most 4 pending at a time$/m);
    expect(dryText.stdout).toMatch(/^mean load \d+\.\d\d streams per slot .*: sources above \d+\.\d\d, targets below \d+\.\d\d$/m);

    const rebalance = await mink(["cluster", "rebalance", "--max-concurrent", "2"]);
    expect(rebalance.code, rebalance.stderr).toBe(0);
    expect(rebalance.stdout).toMatch(/^rebalance: \d+ moves? planned; 2 transfers begun, at most 2 pending at a time$/m);
    expect(rebalance.stdout).toMatch(/^rebalanced: \d+ transfers? completed; mean load /m);

    const after = await nodesJson();
    expect(after.find((node) => node.id === heavy)?.streams ?? 0).toBeLessThan(heavyBefore);
    const moved: string[] = [];
    for (const [path, content] of contents) {
      if ((await owner(path)) !== heavy) moved.push(path);
      expect(await readBack(path), path).toBe(content);
    }
    expect(moved.length).toBeGreaterThan(0);
    expect(await readBack(STREAM_PATH)).toBe(STREAM_CONTENT);
    // Balanced now: another round plans nothing and is done at once.
    const again = await mink(["cluster", "rebalance", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ done: true, begun: [], plan: { moves: [], orphans: [] } });
  });

  it("mints an access token signed by the service that `mink token list` shows, and `mink token revoke` marks it revoked", async () => {
    const created = await mink(["token", "create", "--prefix", "cli-e2e/", "--prefix", "", "--ops", "read,append", "--ttl", "10m", "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const token = JSON.parse(created.stdout) as { id: string; token: string; expiresAt: string; prefixes: string[]; ops: string[] };
    expect(token).toMatchObject({ prefixes: ["", "cli-e2e/"], ops: ["read", "append"] });
    // A JWT (HS256) signed with the service's TOKEN_SECRET, granting what was asked under the id printed.
    const [header = "", payload = "", signature = ""] = token.token.split(".");
    expect(signature).toBe(createHmac("sha256", E2E_TOKEN_SECRET).update(`${header}.${payload}`).digest("base64url"));
    expect(JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))).toMatchObject({
      jti: token.id,
      prefixes: ["", "cli-e2e/"],
      ops: ["read", "append"],
      exp: Date.parse(token.expiresAt) / 1000,
    });
    const lifetimeMs = Date.parse(token.expiresAt) - Date.now();
    expect(lifetimeMs).toBeGreaterThan(0);
    expect(lifetimeMs).toBeLessThanOrEqual(600_000);

    const row = async (): Promise<string[]> => {
      const list = await mink(["token", "list"]);
      expect(list.code, list.stderr).toBe(0);
      const lines = list.stdout.trimEnd().split("\n");
      expect(lines[0]?.split(/\s+/)).toEqual(["ID", "PREFIXES", "OPS", "EXPIRES", "REVOKED"]);
      return lines.find((line) => line.startsWith(`${token.id} `))?.split(/\s+/) ?? [];
    };
    expect(await row()).toEqual([token.id, '"",cli-e2e/', "read,append", token.expiresAt, "no"]);

    const revoked = await mink(["token", "revoke", token.id]);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${token.id}\n` });
    expect(await row()).toEqual([token.id, '"",cli-e2e/', "read,append", token.expiresAt, "yes"]);

    const unknown = await mink(["token", "revoke", "no-such-token"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^mink: not_found \(HTTP 404\)/);
  });

  it("lists streams under a prefix with their owners and bytes, and pages with --limit", async () => {
    const contents = new Map([
      ["cli-e2e/list/b", "bb\n"],
      ["cli-e2e/list/a", "a\n"],
      ["cli-e2e/list/c/1", "ccc ccc\n"],
      ["cli-e2e/list/d", ""],
    ]);
    for (const [path, content] of contents) {
      if (content === "") {
        const created = await streamRequest(path, { method: "PUT", headers: { "content-type": "text/plain" } });
        expect(created.status, created.text).toBe(201);
      } else {
        await createWithContent(path, content);
      }
    }
    const sorted = [...contents.keys()].sort();
    const run = await mink(["streams", "cli-e2e/list/"]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    // No name here holds a space, nor does any other cell: a split finds the columns.
    expect(lines[0]?.split(/\s+/)).toEqual(["NAME", "OWNER", "EPOCH", "STATE", "BYTES", "TAIL"]);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(sorted);
    for (const line of lines.slice(1)) {
      const [name = "", ownerCell = "", , state, bytes, tail = ""] = line.split(/\s+/);
      expect(ownerCell, name).toBe(await owner(name));
      expect(state, name).toBe("opened");
      expect(Number(bytes), name).toBe(Buffer.byteLength(contents.get(name) ?? "x"));
      expect(tail, name).toMatch(/^\d+_\d+$/);
    }

    const first = await mink(["streams", "cli-e2e/list/", "--limit", "3"]);
    expect(first.code, first.stderr).toBe(0);
    const firstLines = first.stdout.trimEnd().split("\n");
    expect(firstLines.slice(1, -1).map((line) => line.split(/\s+/)[0])).toEqual(sorted.slice(0, 3));
    expect(firstLines.at(-1)).toBe(`more streams follow: mink streams cli-e2e/list/ --after ${sorted[2]} --limit 3`);
    const second = await mink(["streams", "cli-e2e/list/", "--after", sorted[2] ?? "", "--limit", "3", "--json"]);
    expect(second.code, second.stderr).toBe(0);
    const page = JSON.parse(second.stdout) as { streams: Array<{ name: string; owner: string; tail: { bytes: number; closed: boolean } | null }>; next: string | null };
    expect(page.next).toBeNull();
    expect(page.streams.map((stream) => stream.name)).toEqual(sorted.slice(3));
    expect(page.streams[0]).toMatchObject({ owner: await owner(sorted[3] ?? ""), tail: { bytes: Buffer.byteLength(contents.get(sorted[3] ?? "") ?? "x"), closed: false } });
    const all = await mink(["streams", "cli-e2e/list/", "--limit", "1", "--all"]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.trimEnd().split("\n").slice(1).map((line) => line.split(/\s+/)[0])).toEqual(sorted);
  });

  /** A /v1/table request as JSON; a 503 (no coordinator yet, a bucket still loading) is retried. */
  async function tableRequest(path: string, method: string, body: unknown): Promise<{ status: number; text: string }> {
    return eventually(
      async () => {
        const response = await undiciFetch(`${service.baseUrl}/v1/table/${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const text = await response.text();
        if (response.status === 503) throw new NotYet(`${method} /v1/table/${path} answered 503: ${text}`);
        return { status: response.status, text };
      },
      { what: `${method} /v1/table/${path} answered other than 503`, timeoutMs: SETTLE_TIMEOUT_MS, errors: "fail" },
    );
  }

  it("shows a table written through /v1/table: its kind, rows per bucket, and each written bucket's snapshot offset after `mink table snapshot`", { timeout: 90_000 }, async () => {
    const definition = { columns: [{ name: "id", type: "int" }, { name: "name", type: "string" }], primaryKey: ["id"], buckets: TABLE_BUCKETS };
    const created = await tableRequest(TABLE_NAME, "PUT", definition);
    expect(created.status, created.text).toBe(201);
    const ids = Array.from({ length: TABLE_ROWS }, (_, i) => i + 1);
    const written = await tableRequest(`${TABLE_NAME}/write`, "POST", { ops: ids.map((id) => ({ upsert: { id, name: `user ${id}` } })) });
    expect(written.status, written.text).toBe(200);

    const list = await mink(["tables"]);
    expect(list.code, list.stderr).toBe(0);
    const listLines = list.stdout.trimEnd().split("\n");
    expect(listLines[0]?.split(/\s+/)).toEqual(["NAME", "KIND", "BUCKETS"]);
    expect(listLines.find((line) => line.startsWith(`${TABLE_NAME} `))?.split(/\s+/)).toEqual([TABLE_NAME, "primary-key", String(TABLE_BUCKETS)]);

    // Table NC: `mink nodes` counts the table's buckets under BUCKETS, so STREAMS adds up to `mink streams --all`.
    const nodes = await mink(["nodes"]);
    expect(nodes.code, nodes.stderr).toBe(0);
    const nodeLines = nodes.stdout.trimEnd().split("\n");
    const header = (nodeLines.find((line) => line.startsWith("NODE ")) ?? "").split(/\s+/);
    const nodeRows = nodeLines.filter((line) => line.startsWith("node-")).map((line) => line.split(/\s+/));
    const column = (name: string): number => nodeRows.reduce((sum, row) => sum + Number(row[header.indexOf(name)]), 0);
    const allStreams = await mink(["streams", "--all", "--json"]);
    expect(allStreams.code, allStreams.stderr).toBe(0);
    expect(column("STREAMS")).toBe((JSON.parse(allStreams.stdout) as { streams: unknown[] }).streams.length);
    expect(column("BUCKETS")).toBe(TABLE_BUCKETS);

    // The rows come from each leader's memory: wait until every bucket's leader has answered.
    const described = await waitUntil(`${TABLE_NAME}'s leaders report ${TABLE_ROWS} rows`, () => tableJson(), (table) => table.buckets.reduce((sum, b) => sum + (b.rows ?? 0), 0) === TABLE_ROWS);
    const shown = await mink(["table", TABLE_NAME]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^name: +${TABLE_NAME}\n[^]*^columns: +id int, name string$[^]*^primary key: +id$`, "m"));
    const rows = bucketRows(shown.stdout);
    expect(rows.map((row) => row["BUCKET"])).toEqual(described.buckets.map((b) => String(b.bucket)));
    for (const row of rows) expect(NODE_IDS).toContain(row["LEADER"]);
    expect(rows.reduce((sum, row) => sum + (row["ROWS"] === "-" ? 0 : Number(row["ROWS"])), 0)).toBe(TABLE_ROWS);
    expect(rows.every((row) => row["SNAPSHOT"] === "-")).toBe(true);

    const snapshot = await mink(["table", "snapshot", TABLE_NAME]);
    expect(snapshot.code, snapshot.stderr).toBe(0);
    const writtenBuckets = described.buckets.filter((b) => (b.rows ?? 0) > 0);
    expect(snapshot.stdout.split("\n")[0]).toBe(`snapshot of ${TABLE_NAME}: ${writtenBuckets.length} of ${TABLE_BUCKETS} buckets snapshotted`);
    const after = await tableJson();
    for (const bucket of writtenBuckets) {
      // Nothing was written since: the snapshot covers the bucket's whole stream.
      expect(after.buckets[bucket.bucket]?.snapshotOffset, `bucket ${bucket.bucket}`).toBe(bucket.nextOffset);
    }
    const shownAfter = bucketRows((await mink(["table", TABLE_NAME])).stdout);
    for (const bucket of writtenBuckets) expect(shownAfter[bucket.bucket]?.["SNAPSHOT"]).toBe(bucket.nextOffset);

    // docs/tiering.md: the table's rows go into its Iceberg copy, each key's row with an equality delete.
    const tiered = await mink(["table", "tier", TABLE_NAME]);
    expect(tiered.code, tiered.stderr).toBe(0);
    expect(tiered.stdout.split("\n")[0]).toMatch(new RegExp(`^tiering of ${TABLE_NAME}: committed snapshot \\d+ \\(${TABLE_ROWS} rows, ${TABLE_ROWS} deletes\\); metadata tiered/${TABLE_NAME}/metadata/v2\\.metadata\\.json$`));

    const missing = await mink(["table", "no-such-table"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^mink: not_found \(HTTP 404\): no such table/);
  });

  async function tableJson(): Promise<{ buckets: Array<{ bucket: number; rows: number | null; nextOffset: string | null; snapshotOffset: string | null }> }> {
    const run = await mink(["table", TABLE_NAME, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as { buckets: Array<{ bucket: number; rows: number | null; nextOffset: string | null; snapshotOffset: string | null }> };
  }

  /** The bucket table of `mink table`'s output (after the blank line), each row by column name; no cell holds a space. */
  function bucketRows(stdout: string): Array<Record<string, string>> {
    const lines = stdout.trimEnd().split("\n\n")[1]?.split("\n") ?? [];
    const header = (lines[0] ?? "").replace("NEXT OFFSET", "NEXT_OFFSET").split(/\s+/);
    expect(header).toEqual(["BUCKET", "LEADER", "EPOCH", "NEXT_OFFSET", "ROWS", "SNAPSHOT"]);
    return lines.slice(1).map((line) => Object.fromEntries(line.trim().split(/\s+/).map((value, i) => [header[i] ?? "", value])));
  }

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
