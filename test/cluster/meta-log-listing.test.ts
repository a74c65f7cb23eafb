// MetaLogService.listStreams (GET /admin/streams): the sorted names it keeps across accepted changes. After
// the first listing it inserts and removes names as streams are created and deleted instead of sorting
// again; a property drives random creates, deletes, placements and listings and checks every listing
// against a fresh sort of the state's names.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareNames, type MetaState, type StreamListQuery } from "../../src/core/meta/index.ts";
import { MemoryMetaLog } from "./support/memory-meta-log.ts";

const NAMES = ["a", "a/b", "a/c", "b", "b/a", "B", "ab", "c/x/y"];

/** Every page's names, in order, from the first page on. */
function listAll(log: MemoryMetaLog, prefix: string, limit: number): string[] {
  const names: string[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const query: StreamListQuery = { prefix, after, limit };
    const page = log.service.listStreams(query);
    names.push(...page.streams.map((entry) => entry.stream.name));
    if (page.next === null) return names;
    after = page.next;
  }
  throw new Error("the listing never ended");
}

function expectedNames(state: MetaState, prefix: string): string[] {
  return [...state.streams.values()].map((stream) => stream.name).filter((name) => name.startsWith(prefix)).sort(compareNames);
}

describe("MetaLogService.listStreams", () => {
  it("lists the log's streams by name, with the version, and follows creates and deletes after the first listing", () => {
    const log = new MemoryMetaLog(() => 1_000);
    log.service.propose({ type: "RegisterNode", nodeId: "n1", nodeEpoch: 1, addr: "http://mink.test/n/n1" });
    for (const name of ["demo/b", "demo/a", "other"]) log.service.propose({ type: "CreateStream", name, config: { contentType: "text/plain" } });
    const first = log.service.listStreams({ prefix: "demo/", after: null, limit: 10 });
    expect(first.version).toBe(log.service.state.version);
    expect(first.streams.map((entry) => entry.stream.name)).toEqual(["demo/a", "demo/b"]);
    const created = log.service.propose({ type: "CreateStream", name: "demo/0", config: {} });
    expect(created.ok).toBe(true);
    const id = log.service.lookupStream({ name: "demo/a" }).stream?.id ?? "";
    expect(log.service.propose({ type: "DeleteStream", streamId: id }).ok).toBe(true);
    expect(listAll(log, "demo/", 1)).toEqual(["demo/0", "demo/b"]);
    log.service.propose({ type: "PlaceStream", streamId: log.service.lookupStream({ name: "demo/b" }).stream?.id ?? "" });
    const placed = log.service.listStreams({ prefix: "demo/b", after: null, limit: 10 }).streams[0];
    expect(placed).toMatchObject({ stream: { name: "demo/b", owner: "n1", ownership: "placed" }, ownerAddress: "http://mink.test/n/n1" });
  });

  it("property: after any creates, deletes and placements between listings, every listing equals a fresh sort", () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("create" as const), name: fc.constantFrom(...NAMES) }),
      fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom(...NAMES) }),
      fc.record({ kind: fc.constant("place" as const), name: fc.constantFrom(...NAMES) }),
      fc.record({ kind: fc.constant("list" as const), prefix: fc.constantFrom("", "a", "a/", "b", "c/x"), limit: fc.integer({ min: 1, max: 4 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const log = new MemoryMetaLog(() => 1_000);
        log.service.propose({ type: "RegisterNode", nodeId: "n1", nodeEpoch: 1, addr: "http://mink.test/n/n1" });
        for (const s of steps) {
          const id = s.kind === "list" ? undefined : log.service.lookupStream({ name: s.name }).stream?.id;
          if (s.kind === "create") log.service.propose({ type: "CreateStream", name: s.name, config: {} });
          else if (s.kind === "delete" && id !== undefined) log.service.propose({ type: "DeleteStream", streamId: id });
          else if (s.kind === "place" && id !== undefined) log.service.propose({ type: "PlaceStream", streamId: id });
          else if (s.kind === "list") expect(listAll(log, s.prefix, s.limit)).toEqual(expectedNames(log.service.state, s.prefix));
        }
        expect(listAll(log, "", 3)).toEqual(expectedNames(log.service.state, ""));
      }),
      { numRuns: 300 },
    );
  });
});
