// The files in examples/ run against `npm run dev` as a newcomer starts it (scripts/dev.ts, fresh state,
// free ports), and say what they claim: the producer's messages read back, the live tail receives
// messages appended after it connected and stops at its count (and the next offset it prints resumes with
// the next message), the idempotent writer's retry is a 204 duplicate and the stream holds each message
// once (a second run reads back its own orders), and the CLI script moves a stream to another node.
// Also what the README's first session says a fresh start answers.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { REPO_ROOT, run, startDev, type DevProcess } from "./dev-process.ts";

const TSX = join(REPO_ROOT, "node_modules", ".bin", "tsx");
const EXAMPLE_TIMEOUT_MS = 60_000;
/** cli.sh runs the CLI a dozen times, each a Node start through tsx: 45 s on 2 busy cores. */
const CLI_SCRIPT_TIMEOUT_MS = 180_000;
let dev: DevProcess;

beforeAll(async () => {
  dev = await startDev();
});
afterAll(async () => {
  await dev?.stop();
});

const env = (): NodeJS.ProcessEnv => ({ ...process.env, MINK_URL: dev.baseUrl, MINK_TOKEN: "", MINK_ADMIN_TOKEN: "" });

async function example(file: string, ...args: string[]): Promise<string> {
  const script = file.endsWith(".sh");
  const finished = await run(script ? "bash" : TSX, [join("examples", file), ...args], { env: env(), timeoutMs: script ? CLI_SCRIPT_TIMEOUT_MS : EXAMPLE_TIMEOUT_MS });
  expect(finished.code, `${file} ${args.join(" ")}: ${finished.stderr}\n${finished.stdout}\n--- npm run dev:\n${dev.logTail(20)}`).toBe(0);
  return finished.stdout;
}

const greetings = (from: number, to: number): object[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ type: "greeting", n: from + i, text: `hello ${from + i}` }));

describe("examples against npm run dev", () => {
  it("R1a: a fresh start sends each new name straight to a node placement chooses (201, no 307), two names to two nodes; a read through the router is a 307 to the owner", async () => {
    const put = (name: string): Promise<Response> =>
      fetch(`${dev.baseUrl}/v1/stream/${name}`, { method: "PUT", headers: { "Content-Type": "text/plain" }, redirect: "manual" });
    expect((await put("demo/hello")).status).toBe(201);
    expect((await put("demo/second")).status).toBe(201);
    /** Where a read through the router goes: the owner's address, or the router's own node (no 307). */
    const ownerOf = async (name: string): Promise<string> => {
      const read = await fetch(`${dev.baseUrl}/v1/stream/${name}?offset=-1`, { redirect: "manual" });
      await read.body?.cancel();
      return read.status === 307 ? new URL(read.headers.get("location") ?? "").pathname.split("/v1/")[0]! : "the router's node";
    };
    expect(await ownerOf("demo/second")).not.toBe(await ownerOf("demo/hello"));
  });

  it("producer.ts creates a JSON stream, appends its messages and reads them back", async () => {
    const out = await example("producer.ts", "demo/events", "3");
    expect(JSON.parse(out.trim())).toEqual(greetings(1, 3));
  });

  // Two deadlines of its own (the tail printing what is there, then exiting): the test outlives both, so a
  // tail that never exits fails saying what it printed instead of as a bare test timeout.
  it("live-tail.ts receives messages appended after it connected and stops at its count", { timeout: 3 * EXAMPLE_TIMEOUT_MS }, async () => {
    // From the beginning: the 3 messages there, then 2 of the 3 the producer appends once those printed.
    const tail = spawn(TSX, ["examples/live-tail.ts", "demo/events", "5", "-1"], { cwd: REPO_ROOT, env: env(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    tail.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    tail.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    let exitCode: number | null | undefined;
    tail.on("close", (code) => (exitCode = code));
    const sofar = (): string => `printed so far:\n${out}\nstderr:\n${err}\n--- npm run dev:\n${dev.logTail(20)}`;
    try {
      await eventually(
        () => {
          if (out.split("\n").filter((line) => line.startsWith("{")).length !== 3) throw new NotYet(sofar());
          return true;
        },
        { timeoutMs: EXAMPLE_TIMEOUT_MS, what: "the tail to print the 3 existing messages" },
      );
      await example("producer.ts", "demo/events", "3");
      await eventually(
        () => {
          if (exitCode === undefined) throw new NotYet(sofar());
          return true;
        },
        { timeoutMs: EXAMPLE_TIMEOUT_MS, what: "the tail to exit once the producer's messages reached its count" },
      );
      expect(exitCode, sofar()).toBe(0);
    } finally {
      tail.kill("SIGKILL");
    }
    // Messages that arrive together are printed together: 5, or 6 when the producer's last two came as one.
    const lines = out.trim().split("\n");
    const printed = lines.slice(0, -1).map((line) => JSON.parse(line) as object);
    expect(printed.slice(0, 5)).toEqual([...greetings(1, 3), ...greetings(1, 2)]);
    expect(printed.length).toBeLessThanOrEqual(6);
    expect(lines.at(-1)).toMatch(new RegExp(`^${printed.length} messages, next offset \\d+_\\d+$`));
  });

  it("live-tail.ts prints the offset right after its last printed message: a tail resumed from it prints the next message", async () => {
    await example("producer.ts", "demo/resume", "3");
    const first = (await example("live-tail.ts", "demo/resume", "2", "-1")).trim().split("\n");
    const printed = first.slice(0, -1).map((line) => JSON.parse(line) as object);
    const next = / next offset (\S+)$/.exec(first.at(-1) ?? "")?.[1];
    expect(next, first.join("\n")).toBeDefined();
    // One more message, so there is a next one whether the first tail printed 2 or all 3.
    await example("producer.ts", "demo/resume", "1");
    const all = (await (await fetch(`${dev.baseUrl}/v1/stream/demo/resume?offset=-1`)).json()) as object[];
    const resumed = (await example("live-tail.ts", "demo/resume", "1", next!)).trim().split("\n");
    expect(JSON.parse(resumed[0]!)).toEqual(all[printed.length]);
  });

  it("idempotent-writer.ts: a retried append is a 204 duplicate and the stream holds each message once", async () => {
    const out = await example("idempotent-writer.ts", "demo/orders");
    expect(out).toContain("PUT 201");
    expect(out).toContain("retry of seq 0: 204, Producer-Seq 0");
    expect(out).toContain("seq 1: 200");
    expect(out).toContain("read back: order 1;order 2;\n");
  });

  it("idempotent-writer.ts run twice: the second run is a new writer whose two orders follow the first's, and it reads back only its own", async () => {
    await example("idempotent-writer.ts", "demo/orders-twice");
    const again = await example("idempotent-writer.ts", "demo/orders-twice");
    expect(again).toContain("PUT 200");
    expect(again).toContain("retry of seq 0: 204, Producer-Seq 0");
    expect(again).toContain("read back: order 1;order 2;\n");
    const all = await (await fetch(`${dev.baseUrl}/v1/stream/demo/orders-twice?offset=-1`)).text();
    expect(all).toBe("order 1;order 2;order 1;order 2;");
  });

  it("cli.sh lists three nodes, moves a stream to another node with its data intact, and lists it there", { timeout: CLI_SCRIPT_TIMEOUT_MS + 10_000 }, async () => {
    const out = await example("cli.sh", "demo/cli");
    for (const node of ["node-0", "node-1", "node-2"]) expect(out).toMatch(new RegExp(`^${node}\\s+yes`, "m"));
    const moved = /^moved from (node-\d) to (node-\d); read back: before the move;after the move;$/m.exec(out);
    expect(moved, out).not.toBeNull();
    expect(moved![1]).not.toBe(moved![2]);
    // The listing of demo/ at the end shows the stream on its new owner.
    expect(out).toMatch(new RegExp(`^demo/cli\\s+${moved![2]}\\s`, "m"));
  });
});
