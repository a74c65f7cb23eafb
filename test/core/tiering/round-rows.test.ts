// What a tiering round writes of one bucket (docs/tiering.md, table TR; src/core/tiering/round-rows.ts), and
// the exactly-once rule over many rounds: a reader that applies the snapshots merge-on-read (an equality
// delete removes the key's rows of earlier snapshots only) sees exactly the table's current rows, and a log
// table's rows each once, whatever the rounds' cut points.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { ChangeRecord, Row } from "../../../src/core/tables/changelog.ts";
import type { TableDefinition } from "../../../src/core/tables/definition.ts";
import { definitionOf as definition } from "../../support/parse-definition.ts";
import { bucketShareBytes, foldBucketRecords, type TieredRow } from "../../../src/core/tiering/round-rows.ts";
import { propertyRuns } from "../../support/property-runs.ts";


const log = definition({ columns: [{ name: "id", type: "int" }, { name: "v", type: "string" }], buckets: 4 });
const keyed = definition({ columns: [{ name: "k", type: "int" }, { name: "r", type: "string" }, { name: "v", type: "string" }], primaryKey: ["k", "r"], buckets: 4 });

const fold = (def: TableDefinition, first: number, records: ChangeRecord[]) => {
  const folded = foldBucketRecords(def, 3, first, records);
  if (!folded.ok) throw new Error(folded.error.message);
  return folded.value;
};

describe("table TR: one bucket's round", () => {
  test("TR1: a log table's +I records become rows in changelog order, each with its bucket and record offset", () => {
    const round = fold(log, 10, [{ op: "+I", row: { id: 1, v: "a" } }, { op: "+I", row: { id: 1, v: "a" } }]);
    expect(round.data).toEqual([
      { values: { id: 1, v: "a" }, bucket: 3, offset: 10 },
      { values: { id: 1, v: "a" }, bucket: 3, offset: 11 },
    ]);
    expect(round.deletes).toEqual([]);
  });

  test("TR2: a log table's changelog holding another op is refused as invalid, naming the offset", () => {
    const folded = foldBucketRecords(log, 0, 5, [{ op: "+I", row: { id: 1, v: "a" } }, { op: "-D", row: { id: 1, v: "a" } }]);
    expect(folded.ok ? null : [folded.error.code, folded.error.details?.["offset"]]).toEqual(["invalid", 6]);
  });

  test("TR3: a primary-key insert gives the row and a delete of its key (the key's older rows go)", () => {
    const round = fold(keyed, 0, [{ op: "+I", row: { k: 1, r: "x", v: "a" } }]);
    expect(round.data).toEqual([{ values: { k: 1, r: "x", v: "a" }, bucket: 3, offset: 0 }]);
    expect(round.deletes).toEqual([{ k: 1, r: "x" }]);
  });

  test("TR4: an update (-U, +U) keeps the new image only, at the +U's offset", () => {
    const round = fold(keyed, 4, [
      { op: "-U", row: { k: 1, r: "x", v: "a" } },
      { op: "+U", row: { k: 1, r: "x", v: "b" } },
    ]);
    expect(round.data).toEqual([{ values: { k: 1, r: "x", v: "b" }, bucket: 3, offset: 5 }]);
    expect(round.deletes).toEqual([{ k: 1, r: "x" }]);
  });

  test("TR5: a key deleted last in the round gives its delete and no row; one inserted again after a delete gives both", () => {
    const round = fold(keyed, 0, [
      { op: "+I", row: { k: 1, r: "x", v: "a" } },
      { op: "-D", row: { k: 1, r: "x", v: "a" } },
      { op: "+I", row: { k: 2, r: "y", v: "b" } },
      { op: "-D", row: { k: 2, r: "y", v: "b" } },
      { op: "+I", row: { k: 2, r: "y", v: "c" } },
    ]);
    expect(round.deletes).toEqual([{ k: 1, r: "x" }, { k: 2, r: "y" }]);
    expect(round.data).toEqual([{ values: { k: 2, r: "y", v: "c" }, bucket: 3, offset: 4 }]);
  });

  test("TR7: a bucket's share of a round is the budget over the buckets, at least 16 KiB", () => {
    expect(bucketShareBytes(16 * 1024 * 1024, 4)).toBe(4 * 1024 * 1024);
    expect(bucketShareBytes(16 * 1024 * 1024, 1024)).toBe(16 * 1024);
    expect(bucketShareBytes(1024, 8)).toBe(16 * 1024);
    expect(bucketShareBytes(64 * 1024, 0)).toBe(64 * 1024);
  });

  test("TR6: a primary-key row lacking a key column is refused as invalid", () => {
    const folded = foldBucketRecords(keyed, 0, 0, [{ op: "+I", row: { k: 1, v: "a" } }]);
    expect(folded.ok).toBe(false);
  });
});

/** Changelog records of random upserts and deletes on a few keys, as the write step makes them (table W). */
function changelogOf(ops: readonly { key: number; value: string | null }[]): { records: ChangeRecord[]; final: Map<string, Row> } {
  const rows = new Map<string, Row>();
  const records: ChangeRecord[] = [];
  for (const { key, value } of ops) {
    const id = `${key}`;
    const old = rows.get(id);
    if (value === null) {
      if (old !== undefined) records.push({ op: "-D", row: old });
      rows.delete(id);
      continue;
    }
    const row = { k: key, r: "r", v: value };
    if (old === undefined) records.push({ op: "+I", row });
    else if (old["v"] !== value) records.push({ op: "-U", row: old }, { op: "+U", row });
    rows.set(id, row);
  }
  return { records, final: rows };
}

/** Rounds cut at `cuts` (an -U and its +U stay together, as one append writes them). */
function rounds(records: readonly ChangeRecord[], cuts: readonly number[]): ChangeRecord[][] {
  const points = [...new Set(cuts.map((c) => c % (records.length + 1)))].filter((c) => records[c - 1]?.op !== "-U").sort((a, b) => a - b);
  const out: ChangeRecord[][] = [];
  let at = 0;
  for (const point of [...points, records.length]) {
    out.push(records.slice(at, point));
    at = Math.max(at, point);
  }
  return out;
}

describe("exactly once across rounds (merge-on-read)", () => {
  const ops = fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), value: fc.option(fc.constantFrom("a", "b", "c"), { nil: null }) }), { maxLength: 60 });
  const cuts = fc.array(fc.nat(), { maxLength: 8 });

  test("TR-P1: a primary-key table's snapshots, read merge-on-read, hold exactly the current rows", () => {
    fc.assert(
      fc.property(ops, cuts, (opList, cutList) => {
        const { records, final } = changelogOf(opList);
        const data: { row: TieredRow; sequence: number }[] = [];
        const deletes: { key: Row; sequence: number }[] = [];
        let offset = 0;
        rounds(records, cutList).forEach((round, index) => {
          const folded = fold(keyed, offset, round);
          offset += round.length;
          for (const row of folded.data) data.push({ row, sequence: index + 1 });
          for (const key of folded.deletes) deletes.push({ key, sequence: index + 1 });
        });
        const visible = data.filter(({ row, sequence }) => !deletes.some((d) => d.sequence > sequence && d.key["k"] === row.values["k"] && d.key["r"] === row.values["r"]));
        expect(visible.map(({ row }) => row.values).sort((a, b) => Number(a["k"]) - Number(b["k"]))).toEqual([...final.values()].sort((a, b) => Number(a["k"]) - Number(b["k"])));
        // Each visible row carries the offset of the record that wrote its image.
        for (const { row } of visible) expect(records[row.offset]?.row).toEqual(row.values);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  test("TR-P2: a log table's rows are tiered once each, in order, with offsets 0..n-1, whatever the cuts", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 3 }), { maxLength: 40 }), cuts, (values, cutList) => {
        const records: ChangeRecord[] = values.map((v, id) => ({ op: "+I", row: { id, v } }));
        let offset = 0;
        const tiered = rounds(records, cutList).flatMap((round) => {
          const folded = fold(log, offset, round);
          offset += round.length;
          return folded.data;
        });
        expect(tiered.map((row) => row.offset)).toEqual(records.map((_, i) => i));
        expect(tiered.map((row) => row.values)).toEqual(records.map((r) => r.row));
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});
