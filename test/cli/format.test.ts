// Output for people: tables line up, key/value blocks line up, the progress bar shows the fraction done.
import { describe, expect, it } from "vitest";
import { cell, count, drainProgressLine, formatKeyValues, formatTable, load, overwriteLine, progressBar, rebalanceProgressLine } from "../../src/cli/format.ts";

describe("formatTable", () => {
  it("pads each column to its widest cell, right-aligns numeric columns and leaves no trailing spaces", () => {
    const text = formatTable(
      [{ header: "NODE" }, { header: "SLOTS", align: "right" }, { header: "ADDRESS" }],
      [
        ["node-0", "1", "http://a/n/node-0"],
        ["node-10", "120", "-"],
      ],
    );
    expect(text).toBe(
      [
        "NODE     SLOTS  ADDRESS",
        "node-0       1  http://a/n/node-0",
        "node-10    120  -",
        "",
      ].join("\n"),
    );
  });

  it("prints only the header for no rows", () => {
    expect(formatTable([{ header: "A" }, { header: "B" }], [])).toBe("A  B\n");
  });
});

describe("formatKeyValues", () => {
  it("aligns the values after the longest key", () => {
    expect(formatKeyValues([["name", "demo/a"], ["owner address", "http://x"]])).toBe("name:           demo/a\nowner address:  http://x\n");
  });
});

describe("cell", () => {
  it("shows null as '-', booleans as yes/no and objects as JSON", () => {
    expect([cell(null), cell(undefined), cell(true), cell(false), cell(3), cell("s"), cell({ a: 1 })]).toEqual(["-", "-", "yes", "no", "3", "s", '{"a":1}']);
  });
});

describe("progressBar", () => {
  it("fills the bar in proportion to done/total, rounding down", () => {
    expect(progressBar(0, 4, 8)).toBe("[........] 0/4");
    expect(progressBar(1, 4, 8)).toBe("[##......] 1/4");
    expect(progressBar(1, 3, 10)).toBe("[###.......] 1/3");
    expect(progressBar(4, 4, 8)).toBe("[########] 4/4");
  });

  it("keeps its width as the counter grows", () => {
    expect(progressBar(3, 12, 4)).toHaveLength(progressBar(12, 12, 4).length);
    expect(progressBar(3, 12, 4)).toBe("[#...]  3/12");
  });

  it("shows nothing to do as done and clamps out-of-range counts", () => {
    expect(progressBar(0, 0, 4)).toBe("[####] 0/0");
    expect(progressBar(9, 4, 4)).toBe("[####] 4/4");
    expect(progressBar(-1, 4, 4)).toBe("[....] 0/4");
  });
});

describe("drain progress", () => {
  const snapshot = { nodeId: "node-1", total: 4, remaining: 3, transferring: 2, incoming: 0 };

  it("draws a bar on a terminal", () => {
    expect(drainProgressLine(snapshot, true)).toBe("draining node-1 [#######.......................] 1/4 streams moved, 2 transferring");
  });

  it("writes a plain sentence when not on a terminal", () => {
    expect(drainProgressLine(snapshot, false)).toBe("drain node-1: 1/4 streams moved, 3 remaining, 2 transferring");
  });

  it("says how many transfers to the node are still arriving, only when some are", () => {
    expect(drainProgressLine({ ...snapshot, incoming: 1 }, false)).toBe("drain node-1: 1/4 streams moved, 3 remaining, 2 transferring, 1 arriving");
    expect(drainProgressLine({ ...snapshot, incoming: 2 }, true)).toMatch(/ 2 transferring, 2 arriving$/);
  });

  it("redraws a terminal line in place", () => {
    expect(overwriteLine("x")).toBe("\rx\u001b[K");
  });
});

describe("rebalance progress", () => {
  it("counts a begun move as done once no transfer is pending for it, and what is left to begin", () => {
    const snapshot = { begun: 6, pending: 2, toBegin: 2, orphans: 0 };
    expect(rebalanceProgressLine(snapshot, false)).toBe("rebalance: 4/8 moves done, 2 transferring, 2 to begin");
    expect(rebalanceProgressLine(snapshot, true)).toBe("rebalancing [###############...............] 4/8 moves done, 2 transferring");
  });

  it("never counts ahead: transfers pending for other reasons leave moves not done; orphans are named", () => {
    expect(rebalanceProgressLine({ begun: 1, pending: 5, toBegin: 0, orphans: 2 }, false)).toBe("rebalance: 0/1 moves done, 5 transferring, 0 to begin, 2 orphans waiting for the coordinator");
    expect(rebalanceProgressLine({ begun: 0, pending: 0, toBegin: 0, orphans: 1 }, true)).toMatch(/0\/0 moves done, 0 transferring, 1 orphan waiting for the coordinator$/);
  });

  it("shows loads with two decimals", () => {
    expect([load(2), load(2.2), load(1 / 3)]).toEqual(["2.00", "2.20", "0.33"]);
  });
});

describe("count", () => {
  it("uses the singular for exactly one", () => {
    expect([count(0, "stream"), count(1, "stream"), count(2, "stream")]).toEqual(["0 streams", "1 stream", "2 streams"]);
  });
});
