// The node checkpoint moves only forwards, only by compare-and-swap, never for a stale epoch; WAL below it
// (and only below it) may be deleted.
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { checkpointKey, walKey } from "../../src/storage/keys.ts";
import { StaleEpochError } from "../../src/storage/manifest.ts";
import {
  CheckpointCorruptError,
  UncheckpointedDeleteError,
  advanceCheckpoint,
  deleteWalBelow,
  readCheckpoint,
} from "../../src/storage/checkpoint.ts";

describe("checkpoint", () => {
  it("is created, moves forwards, and never moves backwards", async () => {
    const store = new MemoryStore();
    expect(await readCheckpoint(store, "n1")).toBeNull();
    expect((await advanceCheckpoint(store, "n1", 5, 10)).checkpoint).toEqual({ nodeId: "n1", walSeq: 10, epoch: 5 });
    expect((await advanceCheckpoint(store, "n1", 5, 20)).checkpoint.walSeq).toBe(20);
    const puts = store.counts.put;
    expect((await advanceCheckpoint(store, "n1", 5, 15)).checkpoint.walSeq).toBe(20);
    expect((await advanceCheckpoint(store, "n1", 6, 20)).checkpoint).toEqual({ nodeId: "n1", walSeq: 20, epoch: 5 });
    expect(store.counts.put).toBe(puts);
    expect((await advanceCheckpoint(store, "n1", 6, 21)).checkpoint).toEqual({ nodeId: "n1", walSeq: 21, epoch: 6 });
    expect((await readCheckpoint(store, "n1"))?.checkpoint.walSeq).toBe(21);
  });

  it("refuses a stale epoch", async () => {
    const store = new MemoryStore();
    await advanceCheckpoint(store, "n1", 7, 3);
    const error = await advanceCheckpoint(store, "n1", 6, 30).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleEpochError);
    expect((error as StaleEpochError).currentEpoch).toBe(7);
    expect((await readCheckpoint(store, "n1"))?.checkpoint.walSeq).toBe(3);
  });

  it("a racing advance is re-read, so the higher one wins whatever the order", async () => {
    for (const [mine, theirs] of [[10, 20], [20, 10]] as const) {
      const memory = new MemoryStore();
      await advanceCheckpoint(memory, "n1", 1, 1);
      let raced = false;
      const store: ObjectStore = {
        get: (k, r) => memory.get(k, r),
        head: (k) => memory.head(k),
        list: (p, o) => memory.list(p, o),
        delete: (k) => memory.delete(k),
        put: async (k, b, o) => {
          if (!raced) {
            raced = true;
            await advanceCheckpoint(memory, "n1", 1, theirs);
          }
          return memory.put(k, b, o);
        },
      };
      await advanceCheckpoint(store, "n1", 1, mine);
      expect((await readCheckpoint(memory, "n1"))?.checkpoint.walSeq).toBe(20);
    }
  });

  it("a corrupt checkpoint is a typed error naming the key", async () => {
    const store = new MemoryStore();
    await store.put(checkpointKey("n1"), new TextEncoder().encode('{"formatVersion":1,"nodeId":"n2","walSeq":1,"epoch":1}'));
    await expect(readCheckpoint(store, "n1")).rejects.toBeInstanceOf(CheckpointCorruptError);
    await expect(readCheckpoint(store, "n1")).rejects.toThrow(checkpointKey("n1"));
  });

  it("a checkpoint is read only when it is exactly {formatVersion 1, its node, two counts}; zero counts are counts", async () => {
    const store = new MemoryStore();
    const put = (value: unknown): Promise<unknown> => store.put(checkpointKey("n1"), new TextEncoder().encode(JSON.stringify(value)));
    await put({ formatVersion: 1, nodeId: "n1", walSeq: 0, epoch: 0 });
    expect((await readCheckpoint(store, "n1"))?.checkpoint).toEqual({ nodeId: "n1", walSeq: 0, epoch: 0 });
    const malformed: [unknown, string][] = [
      [null, "not a checkpoint of format version 1"],
      [7, "not a checkpoint of format version 1"],
      [{ nodeId: "n1", walSeq: 1, epoch: 1 }, "not a checkpoint of format version 1"],
      [{ formatVersion: 2, nodeId: "n1", walSeq: 1, epoch: 1 }, "not a checkpoint of format version 1"],
      [{ formatVersion: 1, nodeId: "n1", walSeq: -1, epoch: 1 }, "malformed"],
      [{ formatVersion: 1, nodeId: "n1", walSeq: 1.5, epoch: 1 }, "malformed"],
      [{ formatVersion: 1, nodeId: "n1", walSeq: "1", epoch: 1 }, "malformed"],
      [{ formatVersion: 1, nodeId: "n1", walSeq: 1, epoch: -1 }, "malformed"],
      [{ formatVersion: 1, nodeId: "n1", walSeq: 1, epoch: 2 ** 53 }, "malformed"],
      [{ formatVersion: 1, nodeId: "n1", walSeq: 1, epoch: 1, extra: true }, "malformed"],
    ];
    for (const [value, problem] of malformed) {
      await put(value);
      const error = await readCheckpoint(store, "n1").then(() => undefined, (caught: unknown) => caught);
      expect(error, JSON.stringify(value)).toBeInstanceOf(CheckpointCorruptError);
      expect((error as CheckpointCorruptError).problem, JSON.stringify(value)).toContain(problem);
    }
  });
});

describe("deleteWalBelow", () => {
  it("deletes exactly the WAL objects below the seq, across list pages, and nothing of other nodes", async () => {
    const store = new MemoryStore();
    const body = new Uint8Array([1]);
    for (let seq = 0; seq < 1_100; seq++) await store.put(walKey("n1", seq), body);
    await store.put(walKey("n1-b", 0), body);
    await store.put(walKey("n", 0), body);
    await advanceCheckpoint(store, "n1", 1, 1_050);
    expect(await deleteWalBelow(store, "n1", 1_050)).toEqual({ deleted: 1_050 });
    expect(store.keys().filter((k) => k.startsWith("wal/"))).toEqual(
      [walKey("n", 0), walKey("n1-b", 0), ...Array.from({ length: 50 }, (_, i) => walKey("n1", 1_050 + i))].sort(),
    );
    expect(await deleteWalBelow(store, "n1", 1_050)).toEqual({ deleted: 0 });
  });

  it("refuses to delete what the checkpoint does not cover", async () => {
    const store = new MemoryStore();
    await store.put(walKey("n1", 0), new Uint8Array([1]));
    await expect(deleteWalBelow(store, "n1", 1)).rejects.toBeInstanceOf(UncheckpointedDeleteError);
    await advanceCheckpoint(store, "n1", 1, 1);
    await expect(deleteWalBelow(store, "n1", 2)).rejects.toBeInstanceOf(UncheckpointedDeleteError);
    expect(store.keys()).toContain(walKey("n1", 0));
    expect(await deleteWalBelow(store, "n1", 1)).toEqual({ deleted: 1 });
  });
});
