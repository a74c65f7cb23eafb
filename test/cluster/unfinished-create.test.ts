// A PUT answered with a 307 (placed on another node) whose redirect the client does not follow leaves the
// stream placed and never opened. The owner's answers for it must say so, and the same PUT, sent on to the
// owner, must still complete the create.
import { describe, expect, it } from "vitest";
import { TestCluster, type TestNode } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };

/** A PUT at `from` that placement sends to another node (the 307 not followed), and that node. */
async function unfollowedCreate(cluster: TestCluster, nodes: Map<string, TestNode>, from: TestNode): Promise<{ name: string; owner: TestNode }> {
  for (let i = 0; i < 20; i++) {
    const name = `demo/unfollowed-${i}`;
    const response = await from.request("PUT", name, { headers: TEXT });
    if (response.status === 307) {
      const ownerId = /\/n\/([^/]+)\//.exec(response.headers.get("location") ?? "")?.[1] ?? "";
      expect(cluster.meta.service.lookupStream({ name }).stream?.ownership).toBe("placed");
      return { name, owner: nodes.get(ownerId)! };
    }
    expect(response.status).toBe(201);
  }
  throw new Error("placement never chose another node in 20 creates");
}

async function world(): Promise<{ cluster: TestCluster; nodes: Map<string, TestNode> }> {
  const cluster = new TestCluster();
  const nodes = new Map<string, TestNode>();
  for (const id of ["a", "b", "c"]) nodes.set(id, await cluster.start(id));
  for (const node of nodes.values()) await node.runtime.beat();
  return { cluster, nodes };
}

describe("a create whose 307 was not followed", () => {
  it("answers an append, a read and a delete at the owner with a 404 that says to repeat the PUT following redirects", async () => {
    const { cluster, nodes } = await world();
    const { name, owner } = await unfollowedCreate(cluster, nodes, nodes.get("a")!);
    for (const [method, path, body] of [["POST", name, "x"], ["GET", `${name}?offset=-1`, undefined], ["DELETE", name, undefined]] as const) {
      const response = await owner.request(method, path, { headers: TEXT, ...(body === undefined ? {} : { body }) });
      expect(response.status, method).toBe(404);
      const { error } = (await response.json()) as { error: { message: string } };
      expect(error.message, method).toContain("never completed at its owner");
      expect(error.message, method).toContain("repeat the PUT, following redirects");
    }
  });

  it("is completed by the same PUT at the owner, after which appends are acknowledged", async () => {
    const { cluster, nodes } = await world();
    const { name, owner } = await unfollowedCreate(cluster, nodes, nodes.get("a")!);
    expect((await owner.request("PUT", name, { headers: TEXT })).status).toBe(201);
    expect((await owner.request("POST", name, { headers: TEXT, body: "hello" })).status).toBe(204);
    expect(await (await owner.request("GET", `${name}?offset=-1`)).text()).toBe("hello");
  });

  it("keeps the plain 404 for a name nobody created", async () => {
    const { nodes } = await world();
    const response = await nodes.get("b")!.request("POST", "demo/never", { headers: TEXT, body: "x" });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe("no such stream");
  });
});
