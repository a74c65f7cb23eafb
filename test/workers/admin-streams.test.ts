// GET /admin/streams through the Worker (docs/operations.md, "GET /admin/streams"): one page of the metadata
// log's streams by name, each opened one with its tail from its owner node (one `tails` RPC per owner).
// Prefix, exclusive `after` and `next` across pages, the 400s of a bad query, the tail's bytes and offset
// after appends and a close, `tail` null for a stream nobody opened or whose owner is not asked, and 401
// without the admin token. Two nodes of their own, in forwarding mode; every name is under `lst/`, so other
// files' streams in the same MetaLog never show up.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { metaLogClient, streamNodeClient, type Env } from "../../src/env.ts";

const NODES = ["lst-0", "lst-1"];
const TOKEN = "mink-test-admin"; // vitest.config.ts binds it
const adminEnv = (vars: Partial<Env> = {}): Env => ({ ...(env as unknown as Env), NODE_IDS: NODES.join(","), PUBLIC_ORIGIN: "http://127.0.0.1:8787", ROUTER_MODE: "forward", ...vars });
const meta = metaLogClient(adminEnv().META_LOG);
const BEARER = { authorization: `Bearer ${TOKEN}` };
const TEXT = { "content-type": "text/plain" };

interface Listed {
  name: string;
  id: string;
  owner: string | null;
  ownerAddress: string | null;
  epoch: number;
  ownership: string;
  contentType: string | null;
  pendingTransfer: { source: string; target: string } | null;
  tail: { offset: string; bytes: number; closed: boolean } | null;
}
interface Page {
  version: number;
  streams: Listed[];
  next: string | null;
}

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string; vars?: Partial<Env> } = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`http://mink.test${path}`, { method, headers: init.headers, body: init.body ?? null });
  const response = await worker.fetch(request, adminEnv(init.vars), ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function list(query: string, vars?: Partial<Env>): Promise<Page> {
  const response = await call("GET", `/admin/streams${query}`, { headers: BEARER, ...(vars === undefined ? {} : { vars }) });
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  return response.json<Page>();
}

async function put(name: string, body: string, headers: Record<string, string> = TEXT): Promise<Response> {
  const response = await call("PUT", `/v1/stream/${name}`, { headers, body });
  expect(response.status, await response.clone().text()).toBe(201);
  return response;
}

describe("GET /admin/streams", () => {
  const names = ["lst/a/2", "lst/a/1", "lst/b", "lst/a/10", "lst/c"];

  it("answers 401 without the admin token or with a wrong one", async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${TOKEN}` }];
    for (const headers of attempts) {
      const response = await call("GET", "/admin/streams?prefix=lst/", { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await response.json<{ error: { code: string } }>()).error.code).toBe("unauthorized");
    }
  });

  it("lists the streams under a prefix sorted by name, each opened one with its owner and its tail's bytes and offset", async () => {
    for (const name of names) await put(name, `body of ${name}`);
    const page = await list("?prefix=lst/");
    expect(page.version).toBeGreaterThan(0);
    expect(page.next).toBeNull();
    expect(page.streams.map((stream) => stream.name)).toEqual(["lst/a/1", "lst/a/10", "lst/a/2", "lst/b", "lst/c"]);
    for (const stream of page.streams) {
      const { stream: record } = await meta.lookupStream({ name: stream.name });
      const head = await call("HEAD", `/v1/stream/${stream.name}`);
      expect(stream).toEqual({
        name: stream.name,
        id: record?.id,
        owner: record?.owner,
        ownerAddress: `http://127.0.0.1:8787/n/${record?.owner}`,
        epoch: record?.epoch,
        ownership: "opened",
        contentType: "text/plain",
        pendingTransfer: null,
        tail: { offset: head.headers.get("stream-next-offset"), bytes: `body of ${stream.name}`.length, closed: false },
      });
      expect(NODES).toContain(stream.owner);
    }
  });

  it("the tail follows appends and a close", async () => {
    await put("lst/tail", "12345");
    expect((await call("POST", "/v1/stream/lst/tail", { headers: TEXT, body: "678" })).status).toBe(204);
    const [appended] = (await list("?prefix=lst/tail")).streams;
    expect(appended?.tail).toMatchObject({ bytes: 8, closed: false });
    expect(appended?.tail?.offset).toBe((await call("HEAD", "/v1/stream/lst/tail")).headers.get("stream-next-offset"));
    expect((await call("POST", "/v1/stream/lst/tail", { headers: { ...TEXT, "stream-closed": "true" }, body: "9" })).status).toBe(204);
    const [closed] = (await list("?prefix=lst/tail")).streams;
    expect(closed?.tail).toMatchObject({ bytes: 9, closed: true });
  });

  it("pages with limit: after is exclusive, next is the after of the next page and null on the last", async () => {
    const first = await list("?prefix=lst/a/&limit=2");
    expect(first.streams.map((stream) => stream.name)).toEqual(["lst/a/1", "lst/a/10"]);
    expect(first.next).toBe("lst/a/10");
    const second = await list(`?prefix=lst/a/&limit=2&after=${encodeURIComponent(first.next ?? "")}`);
    expect(second.streams.map((stream) => stream.name)).toEqual(["lst/a/2"]);
    expect(second.next).toBeNull();
    // Exactly full and nothing after it: the last page says so.
    expect((await list("?prefix=lst/a/&limit=3")).next).toBeNull();
    expect((await list("?prefix=lst/&after=lst/b")).streams.map((stream) => stream.name)).toEqual(["lst/c", "lst/tail"]);
    expect((await list("?prefix=lst/&after=lst/a/2&limit=1")).streams.map((stream) => stream.name)).toEqual(["lst/b"]);
    expect((await list("?prefix=lst/zzz")).streams).toEqual([]);

    // Every page of the whole listing with limit 1 (other files' streams too): sorted, each name once.
    const all: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 500; pages++) {
      const page: Page = await list(`?limit=50${after === null ? "" : `&after=${encodeURIComponent(after)}`}`);
      all.push(...page.streams.map((stream) => stream.name));
      if (page.next === null) break;
      after = page.next;
    }
    expect(all).toEqual([...new Set(all)].sort());
    for (const name of [...names, "lst/tail"]) expect(all).toContain(name);
  });

  it("shows a stream nobody opened with tail null, and an opened one with tail null when its owner is not asked", async () => {
    const created = await meta.propose({ type: "CreateStream", name: "lst/unplaced", config: { contentType: "application/json" } });
    expect(created.ok).toBe(true);
    const [unplaced] = (await list("?prefix=lst/unplaced")).streams;
    expect(unplaced).toMatchObject({ name: "lst/unplaced", owner: null, ownerAddress: null, ownership: "unplaced", contentType: "application/json", tail: null });

    // A deployment whose NODE_IDS leaves an owner out never wakes that node for a listing: its streams have no tail.
    const page = await list("?prefix=lst/", { NODE_IDS: "lst-0" });
    const opened = page.streams.filter((s) => s.ownership === "opened");
    // Placement spreads the six streams over both nodes.
    expect(new Set(opened.map((s) => s.owner))).toEqual(new Set(NODES));
    for (const stream of opened) {
      if (stream.owner === "lst-0") expect(stream.tail).not.toBeNull();
      else expect(stream.tail).toBeNull();
    }
  });

  it("answers 400 invalid for a bad limit, prefix or after, or one given twice", async () => {
    for (const query of ["?limit=0", "?limit=1001", "?limit=abc", "?limit=", "?limit=1.5", "?prefix=a%00b", "?after=a%0Ab", `?after=${"x".repeat(1025)}`, `?prefix=${"x".repeat(1025)}`, "?limit=1&limit=2", "?prefix=a&prefix=b"]) {
      const response = await call("GET", `/admin/streams${query}`, { headers: BEARER });
      expect(response.status, query).toBe(400);
      const error = (await response.json<{ error: { code: string; message: string } }>()).error;
      expect(error.code, query).toBe("invalid");
    }
    const limit = await call("GET", "/admin/streams?limit=0", { headers: BEARER });
    expect((await limit.json<{ error: { message: string } }>()).error.message).toContain("limit must be a whole number from 1 to 1000");
  });

  it("the tails RPC answers from memory for the ids its node holds, leaves others out, and refuses more than 1000 ids", async () => {
    const { stream } = await meta.lookupStream({ name: "lst/tail" });
    const node = streamNodeClient(adminEnv().STREAM_NODE, stream?.owner ?? "");
    const head = await call("HEAD", "/v1/stream/lst/tail");
    const offset = head.headers.get("stream-next-offset");
    expect(await node.tails([stream?.id ?? "", "s999999", stream?.id ?? ""])).toEqual([{ streamId: stream?.id, offset, bytes: 9, closed: true }]);
    const refused = await Promise.resolve(node.tails(Array.from({ length: 1001 }, (_, i) => `s${i}`))).then(
      () => null,
      (error: unknown) => error,
    );
    expect(String(refused)).toMatch(/at most 1000 stream ids/);
  });

  it("still answers one stream's record at /admin/streams/<path>", async () => {
    const response = await call("GET", "/admin/streams/lst/b", { headers: BEARER });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ name: "lst/b", ownership: "opened", config: { contentType: "text/plain" } });
    expect((await call("GET", "/admin/streams/lst/nope", { headers: BEARER })).status).toBe(404);
  });
});
