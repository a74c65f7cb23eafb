// The leader cache: a `not_leader` answer's facts move the bucket's next request to the new leader, and
// when a fetch hides the redirect's body the client describes the table again instead of guessing.
import { describe, expect, it } from "vitest";
import { nodeAddr } from "./fake-table-service.ts";
import { ITEMS, USERS, harness, writesSeen } from "./harness.ts";

const describes = (urls: readonly { method: string; url: string }[]): number =>
  urls.filter((request) => request.method === "GET" && request.url.endsWith("/v1/table/items")).length;

describe("following a bucket's leader", () => {
  it("not_leader: the details update the cache, the batch goes to the new leader, and later batches go there first", async () => {
    const { service, client, sleeps } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const first = await table.write([{ upsert: { id: "k", v: 1 } }]);
    const bucket = first.buckets[0]!.bucket;
    const oldLeader = service.bucketOfTable("items", bucket).leader;
    const newLeader = ["node-1", "node-2", "node-3"].find((node) => node !== oldLeader)!;
    service.moveLeader("items", bucket, newLeader);
    const describedBefore = describes(service.seen);

    const second = await table.write([{ upsert: { id: "k", v: 2 } }]);
    const third = await table.write([{ upsert: { id: "k", v: 3 } }]);
    const urls = writesSeen(service).map((write) => write.url);
    const path = `/v1/table/items/bucket/${bucket}/write`;
    expect(urls).toEqual([nodeAddr(oldLeader), nodeAddr(oldLeader), nodeAddr(newLeader), nodeAddr(newLeader)].map((addr) => addr + path));
    expect(second.buckets[0]).toMatchObject({ leaderEpoch: 2, duplicate: false });
    expect(third.buckets[0]).toMatchObject({ leaderEpoch: 2 });
    // The facts were in the answer: no describe, no backoff.
    expect(describes(service.seen)).toBe(describedBefore);
    expect(sleeps).toEqual([]);
    expect([...service.bucketOfTable("items", bucket).rows.values()]).toEqual([{ id: "k", v: 3 }]);
  });

  it("a manual redirect whose body the fetch hides: the table is described again and the batch sent to its leader", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const first = await table.write([{ upsert: { id: "k", v: 1 } }]);
    const bucket = first.buckets[0]!.bucket;
    const newLeader = ["node-1", "node-2", "node-3"].find((node) => node !== service.bucketOfTable("items", bucket).leader)!;
    service.moveLeader("items", bucket, newLeader);
    service.fault((request) => request.url.endsWith("/write"), "hide-redirect", 1);
    const describedBefore = describes(service.seen);

    await table.write([{ upsert: { id: "k", v: 2 } }]);
    expect(describes(service.seen)).toBe(describedBefore + 1);
    expect(writesSeen(service).at(-1)!.url).toBe(`${nodeAddr(newLeader)}/v1/table/items/bucket/${bucket}/write`);
    expect([...service.bucketOfTable("items", bucket).rows.values()]).toEqual([{ id: "k", v: 2 }]);
  });

  it("a lookup answered not_leader is asked again at the leader the details name", async () => {
    const { service, client } = harness();
    const table = client.table("users");
    await table.create(USERS);
    await table.write([{ upsert: { org: "acme", id: 1, name: "ada" } }]);
    const bucket = writesSeen(service)[0]!.bucket;
    const newLeader = ["node-1", "node-2", "node-3"].find((node) => node !== service.bucketOfTable("users", bucket).leader)!;
    service.moveLeader("users", bucket, newLeader);

    expect(await table.lookup([{ org: "acme", id: 1 }])).toEqual([{ org: "acme", id: 1, name: "ada" }]);
    const lookups = service.seen.filter((request) => request.url.endsWith("/lookup")).map((request) => request.url);
    expect(lookups.at(-1)).toBe(`${nodeAddr(newLeader)}/v1/table/users/bucket/${bucket}/lookup`);
    expect(lookups.length).toBe(2);
  });
});
