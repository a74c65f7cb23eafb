// The node's in-memory pieces on their own: the stream registry (fork-stitched reads across memory records
// and compacted stream objects, the record at a fork anchor), the WAL record meta codec, per-name locks and
// live-reader wake-ups.
import { describe, expect, it } from "vitest";
import { KeyedWaiters } from "../../src/waits/keyed-waiters.ts";
import { KeyedLock } from "../../src/node/state/keyed-lock.ts";
import { decodeRecordMeta, encodeRecordMeta, RecordMetaError } from "../../src/node/state/record-meta.ts";
import { newStreamState, StreamRegistry, type StreamState } from "../../src/node/state/stream-registry.ts";
import type { StreamConfig } from "../../src/core/protocol/stream-config.ts";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const str = (data: Uint8Array): string => new TextDecoder().decode(data);
const noManifests = (): Promise<null> => Promise.resolve(null);

function config(contentType: string, fork: StreamConfig["fork"] = null): StreamConfig {
  return { contentType, ttlSeconds: null, expiresAtMs: null, fork };
}

function stream(registry: StreamRegistry, id: string, cfg: StreamConfig, appends: string[]): StreamState {
  const state = newStreamState({ id, name: id, config: cfg, createdAtMs: 0, epoch: 1, opened: true });
  registry.add(state);
  for (const text of appends) {
    registry.pushRecord(state, state.tail, bytes(text));
    state.tail += bytes(text).byteLength;
  }
  return state;
}

describe("StreamRegistry", () => {
  it("reads a fork's inherited bytes from its source and its own after the fork point", async () => {
    const registry = new StreamRegistry(() => Promise.reject(new Error("no objects here")), noManifests);
    const source = stream(registry, "s1", config("text/plain"), ["abc", "def"]);
    const fork = stream(
      registry,
      "s2",
      config("text/plain", { sourceName: "s1", sourceStreamId: "s1", anchorPositionBytes: 3, subOffset: 1, forkPositionBytes: 4 }),
      ["XY"],
    );
    source.forkCount = 1;
    expect(fork.base).toBe(4);
    expect(str(await registry.readBytes(fork, 0, fork.tail))).toBe("abcdXY");
    expect(str(await registry.readBytes(fork, 2, 5))).toBe("cdX");
    expect(str(await registry.readBytes(source, 0, source.tail))).toBe("abcdef");
    // The record at an anchor, cut at the fork point when inherited.
    expect(await registry.recordAt(fork, 3)).toEqual({ kind: "bytes", lengthBytes: 1 });
    expect(await registry.recordAt(fork, 4)).toEqual({ kind: "bytes", lengthBytes: 2 });
    expect(await registry.recordAt(fork, 6)).toBeNull();
  });

  it("reads compacted ranges from their stream object and counts only memory records as cached", async () => {
    const loads: string[] = [];
    const registry = new StreamRegistry(async (key) => {
      loads.push(key);
      return [
        { firstOffset: 0, data: bytes("[1]\n") },
        { firstOffset: 4, data: bytes("[2,3]\n\"x\"\n") },
      ];
    }, noManifests);
    const json = stream(registry, "s3", config("application/json"), ["[1]\n", "[2,3]\n\"x\"\n", "4\n"]);
    expect(json.memoryBytes).toBe(16);
    registry.replaceWithObject(json, "streams/s3/obj", 0, 14);
    expect(json.memoryBytes).toBe(2);
    expect(json.records.map((record) => [record.first, record.end, record.data === null])).toEqual([
      [0, 14, true],
      [14, 16, false],
    ]);
    expect(str(await registry.readBytes(json, 2, 16))).toBe(']\n[2,3]\n"x"\n4\n');
    expect(loads).toEqual(["streams/s3/obj"]);
    expect(await registry.recordAt(json, 4)).toEqual({ kind: "json", messageLengthsBytes: [6, 4] });
  });

  it("a stream replayed from a snapshot lists its stream objects at its first read below the snapshot, once, and not before", async () => {
    const listed: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const registry = new StreamRegistry(
      async (key) => (key === "o1" ? [{ firstOffset: 0, data: bytes("abc") }] : [{ firstOffset: 3, data: bytes("de") }]),
      async (id) => {
        listed.push(id);
        await gate;
        return [
          { key: "o1", firstOffset: 0, endOffset: 3, bytes: 3 },
          { key: "o2", firstOffset: 3, endOffset: 5, bytes: 2 },
          { key: "o3", firstOffset: 5, endOffset: 9, bytes: 4 }, // a later compaction's object: not below the snapshot
        ];
      },
    );
    const replayed = stream(registry, "s5", config("text/plain"), []);
    replayed.tail = 5;
    replayed.unlistedBelow = 5;
    registry.pushRecord(replayed, 5, bytes("fg"));
    replayed.tail = 7;
    // Everything below the snapshot counts as compacted before it is listed (compaction and hand-off rely on it).
    expect(registry.compactedEnd(replayed)).toBe(5);
    expect(str(await registry.readBytes(replayed, 5, 7))).toBe("fg");
    expect(listed).toEqual([]);
    const reads = Promise.all([registry.readBytes(replayed, 0, 7), registry.readBytes(replayed, 2, 4), registry.recordAt(replayed, 3)]);
    release();
    const [all, middle, at] = await reads;
    expect(str(all)).toBe("abcdefg");
    expect(str(middle)).toBe("cd");
    expect(at).toEqual({ kind: "bytes", lengthBytes: 2 });
    expect(listed).toEqual(["s5"]);
    expect(replayed.unlistedBelow).toBeNull();
    expect(replayed.records.map((record) => [record.first, record.end])).toEqual([
      [0, 3],
      [3, 5],
      [5, 7],
    ]);
  });

  it("a replayed stream whose manifest is missing fails its read below the snapshot, not its start", async () => {
    const registry = new StreamRegistry(() => Promise.reject(new Error("unused")), noManifests);
    const replayed = stream(registry, "s6", config("text/plain"), []);
    replayed.tail = 4;
    replayed.unlistedBelow = 4;
    await expect(registry.readBytes(replayed, 0, 4)).rejects.toThrow(/no manifest/);
  });

  it("frees a removed name at once but keeps a removed stream's data while a fork reads it", () => {
    const registry = new StreamRegistry(() => Promise.reject(new Error("unused")), noManifests);
    const source = stream(registry, "s4", config("text/plain"), ["a"]);
    source.forkCount = 1;
    registry.remove(source);
    expect(registry.byName("s4")).toBeUndefined();
    expect(registry.get("s4")).toBe(source);
    source.forkCount = 0;
    registry.release(source);
    expect(registry.get("s4")).toBeUndefined();
  });
});

describe("WAL record meta", () => {
  it("round-trips every kind", () => {
    const metas = [
      { k: "create", name: "a/b", config: config("application/json"), at: 5 },
      { k: "append", at: 6, p: ["p", 1, 2], q: "009" },
      { k: "append", at: 7 },
      { k: "append", at: 8, p: ["new", 0, 0], x: ["idle-1", "idle-2"] },
      { k: "soft-delete" },
      { k: "delete" },
      { k: "mark" },
      {
        k: "snapshot",
        name: "n",
        config: config("text/plain"),
        at: 1,
        tail: 10,
        eof: true,
        softDeleted: false,
        producers: [["p", 0, 3, 9]],
        q: null,
      },
    ] as const;
    for (const meta of metas) expect(decodeRecordMeta(encodeRecordMeta(meta))).toEqual(meta);
  });

  it("refuses what it does not know rather than skipping it", () => {
    const encode = (value: unknown): Uint8Array => bytes(JSON.stringify(value));
    expect(() => decodeRecordMeta(encode({ v: 2, k: "delete" }))).toThrow(RecordMetaError);
    expect(() => decodeRecordMeta(encode({ v: 1, k: "rename" }))).toThrow(RecordMetaError);
    expect(() => decodeRecordMeta(encode({ v: 1, k: "append", at: 1, p: ["p", "1", 2] }))).toThrow(RecordMetaError);
    expect(() => decodeRecordMeta(encode({ v: 1, k: "append", at: 1, p: ["p", 1, 2], x: ["a", 3] }))).toThrow(RecordMetaError);
    expect(() => decodeRecordMeta(bytes("{"))).toThrow(RecordMetaError);
  });
});

describe("KeyedLock and KeyedWaiters", () => {
  it("runs sections of one key one at a time, in arrival order", async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = lock.run("k", async () => {
      order.push("first:start");
      await gate;
      order.push("first:end");
    });
    const second = lock.run("k", async () => {
      order.push("second");
    });
    const other = lock.run("other", async () => {
      order.push("other");
    });
    await other;
    expect(order).toEqual(["first:start", "other"]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["first:start", "other", "first:end", "second"]);
  });

  it("wakes the readers of one stream only, and times out the others", async () => {
    const readers = new KeyedWaiters();
    const woken = readers.wait("s1", 60_000);
    const idle = readers.wait("s2", 1);
    expect(readers.size).toBe(2);
    readers.notify("s1");
    expect(await woken).toBe("changed");
    expect(await idle).toBe("timeout");
    expect(readers.size).toBe(0);
  });

  it("says when it is full, where a wait would return at once, and has room again once one is woken", async () => {
    const waiters = new KeyedWaiters(1);
    expect(waiters.full).toBe(false);
    const parked = waiters.wait("a", 60_000);
    expect(waiters.full).toBe(true);
    expect(await waiters.wait("b", 60_000)).toBe("timeout"); // over the cap: at once
    waiters.notify("a");
    expect(await parked).toBe("changed");
    expect(waiters.full).toBe(false);
  });
});
