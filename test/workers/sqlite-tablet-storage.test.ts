// The tablet-storage contract over the SQLite tablets, in the database of a StreamNode Durable Object
// (vitest pool). Each case gets a Durable Object of its own (an unnamed one, so no node starts in it); the
// SQLite-only cases show that a tablet outlives the storage object and the Durable Object instance.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SqliteTabletStorage } from "../../durable-objects/sqlite-tablet-storage.ts";
import type { StreamNode } from "../../durable-objects/stream-node.ts";
import { encodeKey } from "../../src/core/tables/key-encoding.ts";
import type { Env } from "../../src/env.ts";
import type { TabletStorage } from "../../src/ports/tablet-storage.ts";
import { tabletStorageContract } from "../contract/tablet-storage.contract.ts";

const nodes = (env as unknown as Env).STREAM_NODE;

function stubOf(id: DurableObjectId): DurableObjectStub<StreamNode> {
  return nodes.get(id) as DurableObjectStub<StreamNode>;
}

/** Runs `body` in the Durable Object `id` over a new SqliteTabletStorage of its database. */
async function inObject<T>(id: DurableObjectId, body: (storage: TabletStorage) => T): Promise<T> {
  return runInDurableObject(stubOf(id), (_instance, state) => body(new SqliteTabletStorage(state.storage)));
}

tabletStorageContract("SQLite in a StreamNode Durable Object", async (body) => {
  await inObject(nodes.newUniqueId(), body);
});

/** What a reader can observe of one bucket, for comparing before and after a restart. */
function observe(storage: TabletStorage, streamId: string) {
  const tablet = storage.open(streamId);
  return { mark: tablet.mark(), count: tablet.count(), rows: [...tablet.entries()], streamIds: storage.streamIds() };
}

function fill(storage: TabletStorage): void {
  const tablet = storage.open("bucket");
  const rows = Array.from({ length: 600 }, (_, i) => [encodeKey(["user", -i]), { i, name: `user-${i}` }] as const);
  tablet.apply({ set: rows, remove: [] }, { appliedOffset: 600, appliedPosition: 48_000 });
  tablet.apply({ set: [], remove: [encodeKey(["user", -5])] }, { appliedOffset: 601, appliedPosition: 48_050 });
}

describe("SQLite tablets outlive their storage object", () => {
  it("a tablet survives re-opening the storage over the same sql", async () => {
    await runInDurableObject(stubOf(nodes.newUniqueId()), (_instance, state) => {
      const first = new SqliteTabletStorage(state.storage);
      fill(first);
      const before = observe(first, "bucket");
      const reopened = new SqliteTabletStorage(state.storage);
      expect(observe(reopened, "bucket")).toEqual(before);
      expect(before.count).toBe(599);
      expect(before.mark).toEqual({ appliedOffset: 601, appliedPosition: 48_050 });
    });
  });

  it("a tablet survives a restart of the Durable Object", async () => {
    const id = nodes.newUniqueId();
    const before = await inObject(id, (storage) => {
      fill(storage);
      return observe(storage, "bucket");
    });
    await abortAllDurableObjects();
    const after = await inObject(id, (storage) => observe(storage, "bucket"));
    expect(after).toEqual(before);
    expect(after.rows).toHaveLength(599);
    expect(after.streamIds).toEqual(["bucket"]);
  });
});
