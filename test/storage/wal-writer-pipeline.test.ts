// The WAL writer with several objects in flight (WAL_MAX_IN_FLIGHT): acknowledgements stay in seq order
// whatever order the objects land in, a failure at seq n stops everything at or above n but not below it,
// and the batching follows the observed round trip (docs/storage-format.md, "The WAL writer").
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { walKey } from "../../src/storage/keys.ts";
import type { WalRecord } from "../../src/storage/record-codec.ts";
import { WAL_IN_FLIGHT_CAP, encodeWalObject, walObjectOverheadBytes, walRecordBytes } from "../../src/storage/wal-format.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { WalFencedError } from "../../src/storage/wal-writer-bounds.ts";
import { interceptStore } from "../support/store-wrappers.ts";
import { eventually } from "../support/eventually.ts";

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const record = (label: string): WalRecord => ({ streamId: "s1", streamEpoch: 1, firstOffset: 0, flags: 0, meta: new Uint8Array(0), data: new TextEncoder().encode(label) });

/** A store whose WAL PUTs each wait until the test lands them, by seq, in any order. */
function heldStore(inner: ObjectStore): { store: ObjectStore; held: () => number[]; land: (seq: number) => Promise<void> } {
  const waiting = new Map<number, () => void>();
  const landed = new Map<number, Promise<void>>();
  const store = interceptStore(inner, async (op, key, run) => {
    if (op !== "put") return run();
    const seq = Number(key.split("/").at(-1));
    await new Promise<void>((resolve) => waiting.set(seq, resolve));
    const result = run();
    landed.set(seq, result.then(() => undefined, () => undefined));
    return result;
  });
  return {
    store,
    held: () => [...waiting.keys()].sort((a, b) => a - b),
    land: async (seq) => {
      const release = waiting.get(seq);
      if (release === undefined) throw new Error(`no PUT of seq ${seq} is held`);
      waiting.delete(seq);
      release();
      await tick();
      await landed.get(seq);
      await tick();
    },
  };
}

/** Appends one record per label, a tick apart (so each takes its own object), and records who resolved. */
async function appendEach(writer: WalWriter, labels: readonly string[]): Promise<{ outcomes: Map<string, number | Error>; all: Promise<void> }> {
  const outcomes = new Map<string, number | Error>();
  const appends: Promise<void>[] = [];
  for (const label of labels) {
    appends.push(
      writer.append([record(label)]).then(
        ({ seq }) => void outcomes.set(label, seq),
        (error: unknown) => void outcomes.set(label, error as Error),
      ),
    );
    await tick();
  }
  return { outcomes, all: Promise.all(appends).then(() => undefined) };
}

describe("WalWriter pipeline (WAL_MAX_IN_FLIGHT)", () => {
  it("keeps up to maxInFlight objects in flight; an object that lands before the one below it waits for it", async () => {
    const { store, held, land } = heldStore(new MemoryStore());
    const writer = new WalWriter(store, "n1", 1, 10, { maxInFlight: 3, now: () => 0 });
    const { outcomes, all } = await appendEach(writer, ["a", "b", "c", "d"]);
    expect(held()).toEqual([10, 11, 12]); // d waits for a free slot
    expect(writer.objectsInFlight).toBe(3);
    await land(12);
    await land(11);
    expect(outcomes.size).toBe(0); // 11 and 12 landed, but 10 has not: nothing is acknowledged
    expect(held()).toEqual([10]); // and d still waits: landed is not acknowledged
    await land(10);
    expect([...outcomes]).toEqual([
      ["a", 10],
      ["b", 11],
      ["c", 12],
    ]);
    expect(held()).toEqual([13]);
    await land(13);
    await all;
    expect(outcomes.get("d")).toBe(13);
    expect(writer.stats).toMatchObject({ objectsWritten: 4, appendsAcknowledged: 4 });
  });

  it("a fence at seq n rejects every append at or above n, landed or not, and acknowledges those below n as they land", async () => {
    const memory = new MemoryStore();
    const { store, held, land } = heldStore(memory);
    const writer = new WalWriter(store, "n1", 1, 0, { maxInFlight: 4, now: () => 0 });
    const { outcomes, all } = await appendEach(writer, ["a", "b", "c"]);
    expect(held()).toEqual([0, 1, 2]);
    await memory.put(walKey("n1", 1), encodeWalObject({ kind: "seal", nodeId: "n1", seq: 1, sealedBy: "n2", sealEpoch: 2 }));
    await land(2); // lands above the hole at 1: garbage, never acknowledged
    await land(1); // loses to the seal: fenced
    expect(outcomes.get("b")).toBeInstanceOf(WalFencedError);
    expect(outcomes.get("c")).toBeInstanceOf(WalFencedError);
    expect(outcomes.has("a")).toBe(false);
    expect(writer.state).toBe("fenced");
    expect(writer.nextSeq).toBe(1);
    await expect(writer.append([record("e")])).rejects.toBeInstanceOf(WalFencedError);
    await land(0); // below the fence: it landed, and everything below it did, so it is acknowledged
    await all;
    expect(outcomes.get("a")).toBe(0);
    expect(writer.stats.appendsAcknowledged).toBe(1);
    expect(held()).toEqual([]); // nothing was issued after the fence
  });

  it("batching follows the round trip: with objects in flight the next waits for round trip / maxInFlight, a full one goes at once", async () => {
    let clockMs = 0;
    const { store, held, land } = heldStore(new MemoryStore());
    const one = walRecordBytes(record("x"));
    const writer = new WalWriter(store, "n1", 1, 0, { maxInFlight: 2, now: () => clockMs, maxBatchBytes: walObjectOverheadBytes("n1") + 3 * one });
    const first = await appendEach(writer, ["a"]);
    clockMs = 40;
    await land(0); // a round trip of 40 ms observed
    await first.all;
    expect(writer.observedRoundTripMs).toBe(40);
    const second = await appendEach(writer, ["b", "c"]);
    expect(held()).toEqual([1]); // b went at once (nothing in flight); c waits 40 / 2 = 20 ms
    clockMs = 60;
    await eventually(() => held().length === 2, { timeoutMs: 2_000, what: "the held append to go out once its 20 ms passed" });
    expect(held()).toEqual([1, 2]);
    await land(1);
    await land(2);
    await second.all;
    // Three appends fill an object: it goes without waiting, though one is in flight.
    const third = await appendEach(writer, ["d"]);
    const fourth = await appendEach(writer, ["e", "f", "g"]);
    expect(held()).toEqual([3, 4]);
    await land(3);
    await land(4);
    await Promise.all([third.all, fourth.all]);
    expect(fourth.outcomes.get("g")).toBe(4);
  });

  it("refuses an in-flight limit outside 1..WAL_IN_FLIGHT_CAP: a sealer relies on the cap", () => {
    const store = new MemoryStore();
    expect(() => new WalWriter(store, "n1", 1, 0, { maxInFlight: 0 })).toThrow(RangeError);
    expect(() => new WalWriter(store, "n1", 1, 0, { maxInFlight: WAL_IN_FLIGHT_CAP + 1 })).toThrow(RangeError);
    expect(new WalWriter(store, "n1", 1, 0, { maxInFlight: WAL_IN_FLIGHT_CAP }).state).toBe("open");
  });
});
