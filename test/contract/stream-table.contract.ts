// The stream-table contract: one suite, run unchanged against the in-memory table (node project), the stored
// table over in-memory rows (node project) and the stored table over the MetaLog's SQLite rows (workers
// project). Random changes, written to the rows at random points, must read back exactly as a plain map
// of the same records says: by id, by name, by owner, forks, and names in code-unit order from any name.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StreamRecord, StreamTable } from "../../src/core/meta/index.ts";

interface StreamTableUnderTest {
  /** A fresh empty table (over rows emptied first, for a stored one). */
  readonly empty: () => StreamTable;
  /** The table with its changes written where it keeps them (identity for a table kept in memory). */
  readonly settle: (table: StreamTable) => StreamTable;
}

/** Runs `body` over fresh, empty tables (inside the Durable Object, for SQLite). */
export type StreamTableRunner = (body: (tables: StreamTableUnderTest) => void) => Promise<void>;

const IDS = ["s1", "s2", "s3", "s4", "s5", "s6"];
// Upper before lower case, an astral character before U+FFFF: code-unit order, not code-point order.
const NAMES = ["a", "B", "a/b", "é", "\u{1F600}", "\uFFFF", "__ds/table/t/b/0", ""];
const OWNERS = [null, "n1", "n2"] as const;

/** Code-unit order, written out here rather than borrowed from either implementation. */
const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byId = (a: StreamRecord, b: StreamRecord): number => byCodeUnit(a.id, b.id);

type Change = { readonly id: string; readonly record: StreamRecord | null; readonly settle: boolean };

const changeArbitrary: fc.Arbitrary<Change> = fc.record({
  id: fc.constantFrom(...IDS),
  removes: fc.boolean(),
  name: fc.constantFrom(...NAMES.filter((name) => name !== "")),
  owner: fc.constantFrom(...OWNERS),
  epoch: fc.nat(5),
  fork: fc.option(fc.constantFrom(...IDS), { nil: null }),
  settle: fc.boolean(),
}).map(({ id, removes, name, owner, epoch, fork, settle }): Change => ({
  id,
  settle,
  record: removes
    ? null
    : {
        id,
        name,
        owner,
        epoch,
        ownership: owner === null ? "unplaced" : "opened",
        config: fork === null ? { contentType: "text/plain" } : { fork: { sourceStreamId: fork } },
      },
}));

function expectSameAsModel(table: StreamTable, model: ReadonlyMap<string, StreamRecord>): void {
  const records = [...model.values()];
  expect(table.size).toBe(model.size);
  for (const id of IDS) expect(table.get(id)).toEqual(model.get(id));
  for (const name of NAMES) expect(table.idByName(name)).toBe(records.find((record) => record.name === name)?.id);
  expect([...table.values()].sort(byId)).toEqual(records.sort(byId));
  for (const owner of OWNERS) {
    if (owner === null) continue;
    expect([...table.ownedBy(owner)].sort(byId)).toEqual(records.filter((record) => record.owner === owner).sort(byId));
  }
  for (const source of IDS) {
    const forks = records.some((record) => (record.config["fork"] as { sourceStreamId?: string } | undefined)?.sourceStreamId === source);
    expect(table.forksFrom(source)).toBe(forks);
  }
  const sortedNames = records.map((record) => record.name).sort(byCodeUnit);
  for (const from of NAMES) expect([...table.namesFrom(from)]).toEqual(sortedNames.filter((name) => name >= from));
}

export function streamTableContract(tableName: string, withTables: StreamTableRunner): void {
  describe(`stream-table contract: ${tableName}`, () => {
    it("an empty table holds nothing and lists no name", async () => {
      await withTables(({ empty }) => expectSameAsModel(empty(), new Map()));
    });

    it("a name freed and taken again by another stream in one change reads back as the new stream's", async () => {
      await withTables(({ empty, settle }) => {
        const first: StreamRecord = { id: "s1", name: "a", owner: "n1", epoch: 1, ownership: "opened", config: {} };
        const second: StreamRecord = { ...first, id: "s2", owner: "n2" };
        const before = settle(empty().with("s1", first));
        const after = settle(before.with("s1", null).with("s2", second));
        expectSameAsModel(after, new Map([["s2", second]]));
      });
    });

    it("property: any changes, written at any points, read back as a plain map of the records says", async () => {
      await withTables(({ empty, settle }) => {
        fc.assert(
          fc.property(fc.array(changeArbitrary, { maxLength: 25 }), (changes) => {
            let table = empty();
            const model = new Map<string, StreamRecord>();
            for (const change of changes) {
              const holder = change.record === null ? undefined : [...model.values()].find((record) => record.name === change.record?.name);
              // The rules never give a name to two streams: such a change is not one they make.
              if (holder !== undefined && holder.id !== change.id) continue;
              table = table.with(change.id, change.record);
              if (change.record === null) model.delete(change.id);
              else model.set(change.id, change.record);
              if (change.settle) table = settle(table);
              expectSameAsModel(table, model);
            }
            expectSameAsModel(settle(table), model);
          }),
          { numRuns: 200 },
        );
      });
    });
  });
}
