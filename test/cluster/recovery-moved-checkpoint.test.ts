// A node's start reads its checkpoint, seals its WAL chain, and replays from the checkpoint. The
// incarnation the seal fences may still be running: if it finishes a compaction in between (below the
// seal), it moves the checkpoint and deletes the WAL objects under it, and the replay from the checkpoint
// read first meets a gap. Recovery must read the checkpoint again and replay from there (streams/recovery.ts),
// not fail the start as corrupt. The simulation found this race (seed 396); here it is forced.
import { describe, expect, it } from "vitest";
import type { ListOptions, ListResult } from "../../src/storage/object-store.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { decodeWalObject } from "../../src/storage/wal-format.ts";
import { TestCluster } from "./support/test-cluster.ts";

/** A store that runs `beforeWalList` once, at the first listing of a WAL chain after it is armed. */
class ArmedStore extends MemoryStore {
  beforeWalList: (() => Promise<void>) | null = null;

  override async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    const hook = this.beforeWalList;
    if (hook !== null && prefix.startsWith("wal/")) {
      this.beforeWalList = null;
      await hook();
    }
    return super.list(prefix, options);
  }
}

describe("recovery from a checkpoint the fenced incarnation moved", () => {
  it("a start whose replay meets WAL objects the old incarnation compacted away replays from the moved checkpoint, and loses nothing", async () => {
    const store = new ArmedStore();
    const cluster = new TestCluster({ store, logSink: () => {} });
    const old = await cluster.start("n");
    for (let i = 0; i < 4; i++) {
      expect((await old.request("PUT", `moved/s-${i}`, { headers: { "content-type": "text/plain" } })).status).toBe(201);
      expect((await old.request("POST", `moved/s-${i}`, { body: `data-${i};`, headers: { "content-type": "text/plain" } })).status).toBe(204);
    }
    // Data objects only: each start also leaves its window of seals, which a clean-up keeps.
    const walData = async (): Promise<number> => {
      let count = 0;
      for (const key of store.keys().filter((k) => k.startsWith("wal/n/"))) if (decodeWalObject((await store.get(key)).body, key).kind === "records") count++;
      return count;
    };
    const walBefore = await walData();
    // The new incarnation reads the checkpoint first; when it lists the chain to seal it, the old one
    // compacts (its snapshot lands below where the seal will go), moves the checkpoint and deletes the WAL
    // below it.
    let compacted = false;
    store.beforeWalList = async () => {
      compacted = (await old.runtime.compact()) !== null;
    };
    const fresh = await cluster.start("n");
    expect(compacted).toBe(true);
    expect(await walData()).toBeLessThan(walBefore);
    for (let i = 0; i < 4; i++) {
      const read = await fresh.request("GET", `moved/s-${i}?offset=-1`);
      expect(read.status).toBe(200);
      expect(await read.text()).toBe(`data-${i};`);
    }
  });
});
