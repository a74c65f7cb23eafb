// The tablet-storage contract: one suite, run unchanged against the in-memory tablets (node project) and the
// SQLite tablets of a StreamNode Durable Object (workers project). The table paths rely on everything here:
// rows and mark move together, scans are range scans in code-unit key order, buckets do not see each other.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Row } from "../../src/core/tables/changelog.ts";
import { encodeKey, type KeyValue } from "../../src/core/tables/key-encoding.ts";
import type { BucketTablet, TabletChanges, TabletMark, TabletStorage } from "../../src/ports/tablet-storage.ts";

/** Runs `body` over a fresh, empty storage (inside the Durable Object, for SQLite). */
export type TabletStorageRunner = (body: (storage: TabletStorage) => void) => Promise<void>;

const key = (...values: KeyValue[]): string => encodeKey(values);
/** A row that names its own key tuple, so a test can tell which row came back. */
const rowOf = (...values: KeyValue[]): Row => ({ tuple: values });
const mark = (appliedOffset: number): TabletMark => ({ appliedOffset, appliedPosition: appliedOffset * 100 + 7 });
const keysOf = (page: readonly { key: string }[]): string[] => page.map((entry) => entry.key);
const allRows = (tablet: BucketTablet): [string, Row][] => [...tablet.entries()].map(([k, row]) => [k, row]);
/** Larger than any tablet these tests build. */
const EVERYTHING = 1_000_000;

/** Code-unit order, written out here rather than borrowed from either implementation. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function tabletStorageContract(storageName: string, withStorage: TabletStorageRunner): void {
  describe(`tablet-storage contract: ${storageName}`, () => {
    it("an empty tablet has mark null and count 0, holds no rows and is not listed", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        expect(tablet.mark()).toBeNull();
        expect(tablet.count()).toBe(0);
        expect(tablet.get(key("a"))).toBeUndefined();
        expect(tablet.scan("", null, EVERYTHING)).toEqual([]);
        expect(allRows(tablet)).toEqual([]);
        expect(storage.streamIds()).toEqual([]);
      });
    });

    it("apply sets and removes rows and moves the mark with them", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        tablet.apply({ set: [[key("a"), rowOf("a")], [key("b"), rowOf("b")]], remove: [] }, mark(2));
        expect(tablet.mark()).toEqual(mark(2));
        expect(tablet.count()).toBe(2);
        tablet.apply({ set: [[key("c"), rowOf("c")]], remove: [key("a")] }, mark(4));
        expect(tablet.mark()).toEqual(mark(4));
        expect(allRows(tablet)).toEqual([[key("b"), rowOf("b")], [key("c"), rowOf("c")]]);
        expect(tablet.count()).toBe(2);
        expect(storage.streamIds()).toEqual(["bucket"]);
      });
    });

    it("a failed apply changes neither the rows nor the mark", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        tablet.apply({ set: [[key("a"), rowOf("a")]], remove: [] }, mark(1));
        // A BigInt has no JSON form: the second row fails after the first was accepted.
        const unstorable = { n: 1n } as unknown as Row;
        expect(() => tablet.apply({ set: [[key("b"), rowOf("b")], [key("c"), unstorable]], remove: [key("a")] }, mark(3))).toThrow();
        // Keys are printable ASCII: a space or a letter above `~` is refused, in `set` or in `remove`.
        expect(() => tablet.apply({ set: [[key("b"), rowOf("b")], ["with space", rowOf("x")]], remove: [] }, mark(3))).toThrow(RangeError);
        expect(() => tablet.apply({ set: [[key("b"), rowOf("b")]], remove: [key("a"), "caf\u00e9"] }, mark(3))).toThrow(RangeError);
        expect(() => tablet.replace([[key("z"), rowOf("z")], ["\u0000", rowOf("x")]], mark(9))).toThrow(RangeError);
        expect(tablet.mark()).toEqual(mark(1));
        expect(allRows(tablet)).toEqual([[key("a"), rowOf("a")]]);
        expect(tablet.count()).toBe(1);
      });
    });

    it("get returns a copy of the applied row, and undefined for a missing key", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        const written = { name: "ada", tags: ["x", "y"], nested: { depth: 2 } };
        tablet.apply({ set: [[key("ada"), written]], remove: [] }, mark(1));
        written.tags.push("changed after apply");
        const read = tablet.get(key("ada")) as { tags: string[] } | undefined;
        expect(read).toEqual({ name: "ada", tags: ["x", "y"], nested: { depth: 2 } });
        read?.tags.push("changed after get");
        expect(tablet.get(key("ada"))).toEqual({ name: "ada", tags: ["x", "y"], nested: { depth: 2 } });
        expect(tablet.get(key("ad"))).toBeUndefined();
        expect(tablet.get(key("ada", 1))).toBeUndefined();
      });
    });

    it("count follows new keys, updates, a key set twice in one apply, and removes of missing keys", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        tablet.apply({ set: [[key("one"), rowOf(1)], [key("two"), rowOf(2)], [key("one"), rowOf(1, "again")]], remove: [] }, mark(3));
        expect(tablet.count()).toBe(2);
        expect(tablet.get(key("one"))).toEqual(rowOf(1, "again"));
        tablet.apply({ set: [[key("two"), rowOf(2, "updated")]], remove: [key("three"), key("three")] }, mark(5));
        expect(tablet.count()).toBe(2);
        tablet.apply({ set: [], remove: [key("one"), key("one")] }, mark(6));
        expect(tablet.count()).toBe(1);
        expect(allRows(tablet)).toEqual([[key("two"), rowOf(2, "updated")]]);
      });
    });

    it("count and rows hold over applies of hundreds of rows mixing new keys, updates and repeats (more than one SQL statement's worth)", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        const first = Array.from({ length: 150 }, (_, i) => [key(`k${i}`), rowOf(i)] as const);
        tablet.apply({ set: first, remove: [] }, mark(1));
        expect(tablet.count()).toBe(150);
        // 100 updates of existing keys, 100 new keys, and every new key set twice (the last value wins).
        const second = [
          ...Array.from({ length: 100 }, (_, i) => [key(`k${i}`), rowOf(i, "updated")] as const),
          ...Array.from({ length: 100 }, (_, i) => [key(`n${i}`), rowOf(i, "first")] as const),
          ...Array.from({ length: 100 }, (_, i) => [key(`n${i}`), rowOf(i, "last")] as const),
        ];
        tablet.apply({ set: second, remove: [key("k149")] }, mark(2));
        expect(tablet.count()).toBe(249);
        expect(tablet.get(key("k5"))).toEqual(rowOf(5, "updated"));
        expect(tablet.get(key("k120"))).toEqual(rowOf(120));
        expect(tablet.get(key("n7"))).toEqual(rowOf(7, "last"));
        expect(tablet.get(key("k149"))).toBeUndefined();
        tablet.replace(second, mark(3));
        expect(tablet.count()).toBe(200);
        expect(allRows(tablet).length).toBe(200);
      });
    });

    it("a key both set and removed in one apply ends removed (sets come first)", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        tablet.apply({ set: [[key("kept"), rowOf("kept")], [key("gone"), rowOf("gone")]], remove: [key("gone")] }, mark(2));
        expect(tablet.get(key("gone"))).toBeUndefined();
        expect(keysOf(tablet.scan("", null, EVERYTHING))).toEqual([key("kept")]);
        expect(tablet.count()).toBe(1);
      });
    });

    it("scan honours prefix, exclusive after, limit and key order over encoded keys that prefix each other", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        // The family of ("a", ...) in the order the encoding promises: the tuple itself, then bools, ints, strings.
        const family: KeyValue[][] = [["a"], ["a", true], ["a", -2], ["a", 2], ["a", "x"], ["a", "x", -1], ["a", "y"]];
        // Neighbours that share raw characters with the family but are other tuples: "a!" escapes its `!`.
        const neighbours: KeyValue[][] = [[""], ["a!"], ["ab"], ["b"], [-5], [false]];
        const all = [...neighbours, ...family].reverse();
        tablet.apply({ set: all.map((tuple) => [key(...tuple), rowOf(...tuple)]), remove: [] }, mark(all.length));
        const familyKeys = family.map((tuple) => key(...tuple));

        const page = tablet.scan(key("a"), null, EVERYTHING);
        expect(keysOf(page)).toEqual(familyKeys);
        expect(page.map((entry) => entry.row)).toEqual(family.map((tuple) => rowOf(...tuple)));
        expect(keysOf(tablet.scan(key("a"), key("a", -2), EVERYTHING))).toEqual(familyKeys.slice(3));
        // An after that is no stored key: the page starts at the next key.
        expect(keysOf(tablet.scan(key("a"), key("a", -1), EVERYTHING))).toEqual(familyKeys.slice(3));
        expect(keysOf(tablet.scan(key("a"), key("a"), EVERYTHING))).toEqual(familyKeys.slice(1));
        expect(keysOf(tablet.scan(key("a"), key(""), EVERYTHING))).toEqual(familyKeys);
        expect(keysOf(tablet.scan(key("a"), key("b"), EVERYTHING))).toEqual([]);
        expect(keysOf(tablet.scan(key("a"), null, 2))).toEqual(familyKeys.slice(0, 2));
        expect(tablet.scan(key("a"), null, 0)).toEqual([]);
        expect(keysOf(tablet.scan(key("a", "x"), null, EVERYTHING))).toEqual([key("a", "x"), key("a", "x", -1)]);
        // A raw prefix that cuts inside an element reaches every string starting with "a".
        expect(keysOf(tablet.scan("sa", null, EVERYTHING))).toEqual([...familyKeys, key("a!"), key("ab")]);
        expect(keysOf(tablet.scan("", null, EVERYTHING))).toEqual([
          key(false), key(-5), key(""), ...familyKeys, key("a!"), key("ab"), key("b"),
        ]);
      });
    });

    it("paging a scan with its last key as the next after visits every row once, in order", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        const ints = Array.from({ length: 25 }, (_, i) => i - 25);
        tablet.apply({ set: ints.map((i) => [key("p", i), rowOf("p", i)]), remove: [] }, mark(1));
        const seen: string[] = [];
        let after: string | null = null;
        for (let page = tablet.scan(key("p"), after, 4); page.length > 0; page = tablet.scan(key("p"), after, 4)) {
          seen.push(...keysOf(page));
          after = page[page.length - 1]!.key;
        }
        expect(seen).toEqual(ints.map((i) => key("p", i)));
      });
    });

    it("removing a run of neighbouring keys and writing on both sides of the gap keeps key order", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        const name = (i: number): string => key("n", -100 + i * 2);
        tablet.apply({ set: Array.from({ length: 40 }, (_, i) => [name(i), rowOf(i)]), remove: [] }, mark(1));
        tablet.apply({ set: [], remove: Array.from({ length: 20 }, (_, i) => name(i + 10)) }, mark(2));
        // Odd ints fall between the stored ones: just before, inside and just after the gap.
        const between = [-100 + 19, -100 + 25, -100 + 59, -100 + 61, -100 + 79, -101];
        tablet.apply({ set: between.map((i) => [key("n", i), rowOf(i)]), remove: [] }, mark(3));
        const expected = [...Array.from({ length: 10 }, (_, i) => -100 + i * 2), ...Array.from({ length: 10 }, (_, i) => -40 + i * 2), ...between]
          .sort((a, b) => a - b)
          .map((i) => key("n", i));
        expect(allRows(tablet).map(([k]) => k)).toEqual(expected);
        expect(keysOf(tablet.scan(key("n"), key("n", -82), 3))).toEqual(expected.filter((k) => k > key("n", -82)).slice(0, 3));
        expect(tablet.count()).toBe(26);
      });
    });

    it("scan refuses a negative or fractional limit", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        tablet.apply({ set: [[key("a"), rowOf("a")]], remove: [] }, mark(1));
        expect(() => tablet.scan("", null, -1)).toThrow(RangeError);
        expect(() => tablet.scan("", null, 1.5)).toThrow(RangeError);
      });
    });

    it("entries lists every row in key order, across many pages", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        const total = 1_301;
        // Written in a scrambled order (7919 is prime, so i * 7919 mod total visits every i once).
        const scrambled = Array.from({ length: total }, (_, i) => (i * 7_919) % total);
        for (let start = 0; start < total; start += 100) {
          const batch = scrambled.slice(start, start + 100);
          tablet.apply({ set: batch.map((i) => [key(i - total), rowOf(i)]), remove: [] }, mark(start + batch.length));
        }
        const listed = allRows(tablet);
        expect(listed.map(([k]) => k)).toEqual(Array.from({ length: total }, (_, i) => key(i - total)));
        expect(listed[total - 1]).toEqual([key(-1), rowOf(total - 1)]);
        expect(tablet.count()).toBe(total);
      });
    });

    it("replace swaps every row and the mark, and stores a bucket that had no tablet", async () => {
      await withStorage((storage) => {
        const tablet = storage.open("bucket");
        tablet.apply({ set: [[key("old", 1), rowOf("old", 1)], [key("both"), rowOf("both", "old")]], remove: [] }, mark(2));
        function* snapshot(): Generator<readonly [string, Row]> {
          yield [key("both"), rowOf("both", "new")];
          yield [key("new"), rowOf("new")];
        }
        tablet.replace(snapshot(), mark(40));
        expect(tablet.mark()).toEqual(mark(40));
        expect(allRows(tablet)).toEqual([[key("both"), rowOf("both", "new")], [key("new"), rowOf("new")]]);
        expect(tablet.get(key("old", 1))).toBeUndefined();
        expect(tablet.count()).toBe(2);

        const restored = storage.open("restored");
        restored.replace([], mark(9));
        expect(restored.mark()).toEqual(mark(9));
        expect(restored.count()).toBe(0);
        expect(storage.streamIds().sort()).toEqual(["bucket", "restored"]);
      });
    });

    it("drop empties the tablet, streamIds no longer lists it, and the bucket can be stored again", async () => {
      await withStorage((storage) => {
        const dropped = storage.open("dropped");
        const kept = storage.open("kept");
        const rows = Array.from({ length: 700 }, (_, i): [string, Row] => [key("row", -i), rowOf("row", -i)]);
        dropped.apply({ set: rows, remove: [] }, mark(700));
        kept.apply({ set: rows.slice(0, 3), remove: [] }, mark(3));
        dropped.drop();
        expect(dropped.mark()).toBeNull();
        expect(dropped.count()).toBe(0);
        expect(dropped.get(key("row", 0))).toBeUndefined();
        expect(dropped.scan("", null, EVERYTHING)).toEqual([]);
        expect(storage.streamIds()).toEqual(["kept"]);
        expect(storage.open("dropped").mark()).toBeNull();
        expect(kept.count()).toBe(3);

        dropped.apply({ set: [[key("again"), rowOf("again")]], remove: [] }, mark(701));
        expect(dropped.count()).toBe(1);
        expect(allRows(dropped)).toEqual([[key("again"), rowOf("again")]]);
        expect(storage.streamIds().sort()).toEqual(["dropped", "kept"]);
      });
    });

    it("two buckets are independent, and two handles of one bucket share its tablet", async () => {
      await withStorage((storage) => {
        // One stream id is a prefix of the other: bucket rows are keyed by the whole id.
        const first = storage.open("t1-b1");
        const second = storage.open("t1-b10");
        first.apply({ set: [[key("k"), rowOf("k", 1)], [key("only-first"), rowOf("f")]], remove: [] }, mark(2));
        second.apply({ set: [[key("k"), rowOf("k", 10)]], remove: [] }, mark(1));
        expect(first.get(key("k"))).toEqual(rowOf("k", 1));
        expect(second.get(key("k"))).toEqual(rowOf("k", 10));
        expect(keysOf(second.scan("", null, EVERYTHING))).toEqual([key("k")]);
        expect([first.count(), second.count()]).toEqual([2, 1]);
        expect([first.mark(), second.mark()]).toEqual([mark(2), mark(1)]);

        const again = storage.open("t1-b1");
        again.apply({ set: [], remove: [key("only-first")] }, mark(3));
        expect(first.count()).toBe(1);
        expect(first.mark()).toEqual(mark(3));
        expect(second.mark()).toEqual(mark(1));
        expect(storage.streamIds().sort()).toEqual(["t1-b1", "t1-b10"]);
      });
    });

    describe("properties", () => {
      const element = fc.oneof(fc.constantFrom("", "a", "ab", "a!", "b", "\u00e9", " "), fc.integer({ min: -3, max: 3 }), fc.boolean());
      // Short tuples over few elements, so keys repeat, prefix each other and removes often hit stored keys.
      const tuple = fc.array(element, { minLength: 1, maxLength: 2 });
      const encoded = tuple.map((values) => encodeKey(values));
      const row = fc.record({ n: fc.integer(), s: fc.string({ maxLength: 4 }) });
      const changes = fc.record({
        set: fc.array(fc.tuple(encoded, row), { maxLength: 8 }),
        remove: fc.array(encoded, { maxLength: 4 }),
      });
      /** A prefix of an encoded key, cut anywhere (between elements or inside one). */
      const prefix = fc.tuple(encoded, fc.nat()).map(([k, cut]) => k.slice(0, cut % (k.length + 1)));
      const query = fc.record({ prefix, after: fc.option(prefix, { nil: null }), limit: fc.nat({ max: 6 }) });

      /** Applies the sequence to the tablet and to a Map, and returns the Map. */
      function applyBoth(tablet: BucketTablet, sequence: readonly TabletChanges[]): Map<string, Row> {
        const model = new Map<string, Row>();
        sequence.forEach((change, index) => {
          for (const [k, value] of change.set) model.set(k, value);
          for (const k of change.remove) model.delete(k);
          tablet.apply(change, mark(index + 1));
        });
        return model;
      }

      it("after random apply sequences, scan of everything, entries, count and mark equal the model", async () => {
        await withStorage((storage) => {
          let run = 0;
          fc.assert(
            fc.property(fc.array(changes, { minLength: 1, maxLength: 12 }), (sequence) => {
              const tablet = storage.open(`full-${run++}`);
              const model = applyBoth(tablet, sequence);
              const expected = [...model.keys()].sort(byCodeUnit).map((k) => ({ key: k, row: model.get(k) }));
              expect(tablet.scan("", null, EVERYTHING)).toEqual(expected);
              expect(allRows(tablet)).toEqual(expected.map((entry) => [entry.key, entry.row]));
              expect(tablet.count()).toBe(model.size);
              expect(tablet.mark()).toEqual(mark(sequence.length));
            }),
          );
        });
      });

      it("random scans by prefix, after and limit equal the model's rows filtered in key order", async () => {
        await withStorage((storage) => {
          let run = 0;
          fc.assert(
            fc.property(fc.array(changes, { minLength: 1, maxLength: 6 }), fc.array(query, { minLength: 1, maxLength: 8 }), (sequence, queries) => {
              const tablet = storage.open(`scan-${run++}`);
              const model = applyBoth(tablet, sequence);
              const sorted = [...model.keys()].sort(byCodeUnit);
              for (const { prefix: p, after, limit } of queries) {
                const expected = sorted.filter((k) => k.startsWith(p) && (after === null || k > after)).slice(0, limit);
                expect(keysOf(tablet.scan(p, after, limit))).toEqual(expected);
              }
            }),
          );
        });
      });
    });
  });
}
