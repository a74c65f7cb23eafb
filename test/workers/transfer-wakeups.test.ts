// Live readers across a transfer (docs/transfers.md; invariant 2 of docs/architecture.md as a reader sees it): a long-poll
// waiting at a stream's tail is answered by the first append acknowledged after it, wherever the transfer
// finds it waiting: at the source (sent on by the release), arriving at the source while it hands off,
// parked at the target, at the target while it opens the stream, or sent by a stale router view to the node
// the stream left. Each interleaving is held in place with a gate in the node (its view of the log, its WAL,
// its object store), never with a sleep.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { StreamNode } from "../../durable-objects/stream-node.ts";
import type { StreamLookup } from "../../src/core/meta/view.ts";
import { adoptStream } from "../../src/node/ownership/adopt.ts";
import { handOff } from "../../src/node/ownership/hand-off.ts";
import type { WakeReason } from "../../src/waits/keyed-waiters.ts";
import { routeRequest, toNodeAddress, type RouterDeps } from "./router-as-worker.ts";
import { ViewCache } from "../../src/router/view-cache.ts";
import { eventually, stillPending } from "../support/eventually.ts";
import { begin, call, createOn, e, follow, meta, openedBy, ORIGIN, pauseWatcher, record, stub, TEXT } from "./transfer-support.ts";

/** The tail of a stream created with "a," (two bytes). */
const TAIL = "0000000000000000_0000000000000002";

/** What a test holds in a node: its next look at the log for a name, its next WAL append, or a PUT. */
type HookKind = "lookup" | "wal" | "put";

interface Hooks {
  /** Set once the held call has been made (and, for a lookup, answered by the log). */
  held: boolean;
  release: () => void;
  /** Why each parked wait for the name ended, for waits that began while the node held the stream. */
  parkedWhileHeld: WakeReason[];
  /** Releases the held call and puts the node's own functions back. */
  restore: () => void;
}

const hooks = new WeakMap<StreamNode, Map<HookKind, Hooks>>();

/** A new hook of `kind` in `node`, and the gate its held call waits at until the test releases it. */
function install(node: StreamNode, kind: HookKind): { installed: Hooks; gate: Promise<void> } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const installed: Hooks = { held: false, release: () => open(), parkedWhileHeld: [], restore: () => open() };
  const mine = hooks.get(node) ?? new Map<HookKind, Hooks>();
  hooks.set(node, mine);
  mine.set(kind, installed);
  return { installed, gate };
}

function hooksOf(node: StreamNode, kind: HookKind): Hooks {
  const found = hooks.get(node)?.get(kind);
  if (found === undefined) throw new Error(`no ${kind} hook installed in this node`);
  return found;
}

/**
 * The node's next look at the log for `name` is answered by the log at once, and that answer is handed back
 * only when the test releases it: the answer is on its way while the test changes the world.
 */
function holdNextLookup(node: StreamNode, name: string): void {
  const ctx = node.node!;
  const { installed, gate } = install(node, "lookup");
  const view = ctx.view;
  const lookup = view.lookup.bind(view);
  let armed = true;
  view.lookup = async (looked: string, fresh?: boolean): Promise<StreamLookup> => {
    const answer = await lookup(looked, fresh);
    if (armed && looked === name) {
      armed = false;
      installed.held = true;
      await gate;
    }
    return answer;
  };
  // Parked waits that begin while this node holds the stream (opened, or handing it on): nothing will ever
  // wake them but their timer.
  const parked = ctx.parked;
  const wait = parked.wait.bind(parked);
  parked.wait = (key: string, timeoutMs: number, signal?: AbortSignal): Promise<WakeReason> => {
    const whileHeld = key === name && ctx.registry.byName(name) !== undefined;
    const ended = wait(key, timeoutMs, signal);
    if (whileHeld) void ended.then((reason) => installed.parkedWhileHeld.push(reason));
    return ended;
  };
  installed.restore = () => {
    installed.release();
    view.lookup = lookup;
    parked.wait = wait;
  };
}

/** The node's next WAL append is made only when the test releases it. */
function holdNextWalAppend(node: StreamNode): void {
  const ctx = node.node!;
  const { installed, gate } = install(node, "wal");
  const port = ctx.wal;
  const append = port.append.bind(port);
  let armed = true;
  port.append = async (records) => {
    if (armed) {
      armed = false;
      installed.held = true;
      await gate;
    }
    return append(records);
  };
  installed.restore = () => {
    installed.release();
    port.append = append;
  };
}

/** The node's next object-store PUT under `prefix` is made only when the test releases it. */
function holdNextPut(node: StreamNode, prefix: string): void {
  const ctx = node.node!;
  const { installed, gate } = install(node, "put");
  const store = ctx.store;
  const put = store.put.bind(store);
  let armed = true;
  (store as { put: typeof store.put }).put = async (key, body, options) => {
    if (armed && key.startsWith(prefix)) {
      armed = false;
      installed.held = true;
      await gate;
    }
    return put(key, body, options);
  };
  installed.restore = () => {
    installed.release();
    (store as { put: typeof store.put }).put = put;
  };
}

const held = (nodeId: string, kind: HookKind): Promise<boolean> => runInDurableObject(stub(nodeId), (node) => hooksOf(node, kind).held);
const release = (nodeId: string, kind: HookKind): Promise<void> =>
  runInDurableObject(stub(nodeId), (node) => hooksOf(node, kind).release());
const parkedWhileHeld = (nodeId: string): Promise<WakeReason[]> =>
  runInDurableObject(stub(nodeId), (node) => hooksOf(node, "lookup").parkedWhileHeld);
/** Whatever a test left held in these nodes is let go and their own functions put back. */
async function restore(...nodeIds: string[]): Promise<void> {
  for (const nodeId of nodeIds) {
    await runInDurableObject(stub(nodeId), (node) => {
      for (const installed of hooks.get(node)?.values() ?? []) installed.restore();
      hooks.delete(node);
    });
  }
}

/**
 * A long-poll client from `offset`, entering at `nodeId`'s address: follows 307s, polls again after an empty
 * answer (a timeout, or the source sending it on), and resolves with the first data it gets.
 */
async function firstData(nodeId: string, name: string, offset: string, enter = follow): Promise<string> {
  for (let polls = 0; polls < 20; polls++) {
    const answer = await enter(nodeId, "GET", `${name}?offset=${offset}&live=long-poll`);
    if (answer.status === 200) return answer.text();
    await answer.body?.cancel();
    if (answer.status !== 204) throw new Error(`long-poll answered ${answer.status}`);
    offset = answer.headers.get("stream-next-offset") ?? offset;
  }
  throw new Error("no data after 20 polls");
}

async function append(nodeId: string, name: string, body: string): Promise<void> {
  expect((await call(nodeId, "POST", name, { headers: TEXT, body })).status).toBe(204);
}

describe("a long-poll reader across a transfer is woken by the first append acknowledged after it, wherever it waits", { timeout: 30_000 }, () => {
  it("waiting at the source when the transfer begins: the release sends it on, the target's first append wakes it", async () => {
    const name = "wk/source";
    await createOn("tr-0", name, "a,");
    const reader = firstData("tr-0", name, TAIL);
    await eventually(() => runInDurableObject(stub("tr-0"), (node) => node.node!.readers.size > 0), { what: "the reader waiting at tr-0" });
    await begin(name, "tr-1");
    await openedBy(name, "tr-1");
    expect(await stillPending(reader)).toBe(true);
    await append("tr-1", name, "b,");
    expect(await reader).toBe("b,");
  });

  it("arriving at the source while it hands off: sent on once the hand-off is over", async () => {
    const name = "wk/handing-off";
    await createOn("tr-0", name, "a,");
    const { id } = await record(name);
    const waiting = firstData("tr-0", name, TAIL);
    await eventually(() => runInDurableObject(stub("tr-0"), (node) => node.node!.readers.size > 0), { what: "the first reader waiting at tr-0" });
    // The hand-off stops appends, then waits here: its flush's stream object is held.
    await runInDurableObject(stub("tr-0"), (node) => holdNextPut(node, `streams/${id}/`));
    try {
      await begin(name, "tr-1");
      await eventually(() => held("tr-0", "put"), { what: "tr-0's hand-off flushing" });
      const arriving = firstData("tr-0", name, TAIL);
      expect(await stillPending(arriving)).toBe(true);
      await release("tr-0", "put");
      await openedBy(name, "tr-1");
      expect(await stillPending(waiting)).toBe(true);
      expect(await stillPending(arriving)).toBe(true);
      await append("tr-1", name, "b,");
      expect(await waiting).toBe("b,");
      expect(await arriving).toBe("b,");
    } finally {
      await restore("tr-0");
    }
  });

  it("parked at the target: the stream opening there wakes it, even when it opened while the reader's look at the log was on its way", async () => {
    const name = "wk/parked";
    await createOn("tr-0", name, "a,");
    const { id, epoch } = await record(name);
    await pauseWatcher("tr-0");
    await pauseWatcher("tr-1");
    try {
      await begin(name, "tr-1");
      // The reader reaches the target, which looks at the log: "transfer pending, to me". That answer is held.
      await runInDurableObject(stub("tr-1"), (node) => holdNextLookup(node, name));
      const reader = firstData("tr-1", name, TAIL);
      await eventually(() => held("tr-1", "lookup"), { what: "tr-1 looking at the log for the reader" });
      // Meanwhile the source hands off and the target opens the stream (what their watchers do): the
      // opening wakes the requests parked for it, and this reader is not parked yet.
      await runInDurableObject(stub("tr-0"), (node) => handOff(node.node!, id, name, epoch));
      const handed = (await meta.lookupStream({ name })).stream;
      if (handed === null) throw new Error(`${name} is not registered`);
      expect(await runInDurableObject(stub("tr-1"), (node) => adoptStream(node.node!, handed))).toBeNull();
      await release("tr-1", "lookup");
      await append("tr-1", name, "b,");
      expect(await reader).toBe("b,");
      // It must not have parked for a stream already open here: nothing wakes such a wait but its timer.
      expect(await parkedWhileHeld("tr-1")).toEqual([]);
    } finally {
      await restore("tr-1");
      await pauseWatcher("tr-0", false);
      await pauseWatcher("tr-1", false);
    }
  });

  it("parked at the target, which opened the stream and began handing it on while the reader's look at the log was on its way: sent on by that hand-off", async () => {
    const name = "wk/parked-moving-on";
    await createOn("tr-0", name, "a,");
    const { id, epoch } = await record(name);
    await pauseWatcher("tr-0");
    await pauseWatcher("tr-1");
    try {
      await begin(name, "tr-1");
      await runInDurableObject(stub("tr-1"), (node) => holdNextLookup(node, name));
      const reader = firstData("tr-1", name, TAIL);
      await eventually(() => held("tr-1", "lookup"), { what: "tr-1 looking at the log for the reader" });
      await runInDurableObject(stub("tr-0"), (node) => handOff(node.node!, id, name, epoch));
      const handed = (await meta.lookupStream({ name })).stream;
      if (handed === null) throw new Error(`${name} is not registered`);
      expect(await runInDurableObject(stub("tr-1"), (node) => adoptStream(node.node!, handed))).toBeNull();
      // The stream moves on to tr-0 at once; tr-1's hand-off stops appends and waits at its flush.
      await begin(name, "tr-0");
      const opened = await record(name);
      await runInDurableObject(stub("tr-1"), (node) => {
        holdNextPut(node, `streams/${id}/`);
        node.node!.background(handOff(node.node!, id, name, opened.epoch));
      });
      await eventually(() => held("tr-1", "put"), { what: "tr-1's hand-off flushing" });
      await release("tr-1", "lookup");
      expect(await stillPending(reader)).toBe(true);
      await release("tr-1", "put");
      const moved = await eventually(async () => {
        const now = await record(name);
        return now.owner === "tr-0" && now.transfer === undefined ? now : null;
      }, { what: `${name} handed to tr-0` });
      expect(await runInDurableObject(stub("tr-0"), (node) => adoptStream(node.node!, moved))).toBeNull();
      await append("tr-0", name, "b,");
      expect(await reader).toBe("b,");
      expect(await parkedWhileHeld("tr-1")).toEqual([]);
    } finally {
      await restore("tr-1");
      await pauseWatcher("tr-0", false);
      await pauseWatcher("tr-1", false);
    }
  });

  it("at the target while it opens the stream: served once it is open, woken by its first append", async () => {
    const name = "wk/opening";
    await createOn("tr-0", name, "a,");
    await pauseWatcher("tr-1");
    try {
      await begin(name, "tr-1");
      const handed = await eventually(async () => {
        const moved = await record(name);
        return moved.owner === "tr-1" && moved.transfer === undefined ? moved : null;
      }, { what: `${name} handed to tr-1` });
      // The target opens the stream (what its watcher does) and stops at its WAL record: the log says opened
      // by tr-1, and tr-1 does not hold the stream yet.
      await runInDurableObject(stub("tr-1"), (node) => {
        holdNextWalAppend(node);
        node.node!.background(adoptStream(node.node!, handed));
      });
      await eventually(() => held("tr-1", "wal"), { what: "tr-1 opening the stream" });
      expect(await record(name)).toMatchObject({ owner: "tr-1", ownership: "opened" });
      const reader = firstData("tr-1", name, TAIL);
      expect(await stillPending(reader)).toBe(true);
      await release("tr-1", "wal");
      await eventually(() => runInDurableObject(stub("tr-1"), (node) => node.node!.readers.size > 0), { what: "the reader waiting at tr-1" });
      await append("tr-1", name, "b,");
      expect(await reader).toBe("b,");
    } finally {
      await restore("tr-1");
      await pauseWatcher("tr-1", false);
    }
  });

  it("sent by a stale router view to the node the stream left: redirected to the new owner and woken there", async () => {
    const name = "wk/stale-view";
    await createOn("tr-1", name, "a,");
    const stale: RouterDeps = { cache: new ViewCache({ ttlMs: 60_000 }), lookup: (n) => meta.lookupStream({ name: n }) };
    const viaRouter = async (_nodeId: string, method: string, path: string): Promise<Response> => {
      const request = (url: string): Request => new Request(url, { method });
      let answer = await routeRequest(e, request(`${ORIGIN}/v1/stream/${path}`), stale);
      for (let hop = 0; answer.status === 307 && hop < 5; hop++) {
        const location = new URL(answer.headers.get("location") ?? "");
        await answer.body?.cancel();
        const nodeId = /^\/n\/([^/]+)\//.exec(location.pathname)?.[1] ?? "";
        answer = await toNodeAddress(e, nodeId, request(location.href));
      }
      return answer;
    };
    // The router learns that tr-1 owns the stream, and keeps believing it.
    expect(await firstData("router", name, "-1", viaRouter)).toBe("a,");
    await begin(name, "tr-2");
    await openedBy(name, "tr-2");
    const reader = firstData("router", name, TAIL, viaRouter);
    await eventually(() => runInDurableObject(stub("tr-2"), (node) => node.node!.readers.size > 0), { what: "the reader waiting at tr-2" });
    await append("tr-2", name, "b,");
    expect(await reader).toBe("b,");
  });
});

