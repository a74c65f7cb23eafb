// The status page's browser script (src/status-page/), loaded in Node exactly as the Worker serves it: it
// must parse as an ES module, start nothing without a document, and its pure half (formatting and chart
// scaling) must give the figures docs/status-page.md describes.
import { describe, expect, it } from "vitest";
import { STATUS_PAGE_SCRIPT } from "../../src/status-page/page-script.ts";

interface Point {
  t: number;
  v: number;
}
interface Sample {
  startMs: number;
  durationMs: number;
  appends: number;
  bytes: number;
  ackP50Ms: number | null;
  ackP99Ms: number | null;
}
interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
  startMs: number;
  endMs: number;
  maxValue: number;
}
interface PageScript {
  formatAge(ms: number | null): string;
  formatBytes(bytes: number | null): string;
  formatCompact(value: number): string;
  compactOffset(offset: string): string;
  niceCeiling(value: number): number;
  seriesPoints(samples: Sample[]): { appends: Point[]; bytes: Point[]; p50: Point[]; p99: Point[] };
  timeSpan(nodes: Array<{ samples: Sample[] }>): { startMs: number; endMs: number } | null;
  polylinePoints(points: Point[], box: Box): string;
  definitionSummary(definition: unknown): string;
}

const script = (await import(`data:text/javascript,${encodeURIComponent(STATUS_PAGE_SCRIPT)}`)) as PageScript;

const sample = (startMs: number, durationMs: number, appends: number, bytes: number, p50: number | null = null, p99: number | null = null): Sample => ({
  startMs,
  durationMs,
  appends,
  bytes,
  ackP50Ms: p50,
  ackP99Ms: p99,
});

describe("the status page script", () => {
  it("formats a heartbeat age in ms, s, min or h, and no value as a dash", () => {
    expect([null, 0, 420, 1_500, 59_949, 90_000, 7_200_000].map((ms) => script.formatAge(ms))).toEqual(["—", "0 ms", "420 ms", "1.5 s", "59.9 s", "2 min", "2.0 h"]);
  });

  it("formats sizes in binary units with one decimal below ten", () => {
    expect([null, 0, 1023, 1536, 12 * 1024 * 1024, 5 * 1024 ** 4].map((bytes) => script.formatBytes(bytes))).toEqual(["—", "0 B", "1023 B", "1.5 KiB", "12 MiB", "5.0 TiB"]);
  });

  it("shows an offset of digit groups without its zero padding, and any other offset as it is", () => {
    expect(["0000000000000001_0000000000001000", "0000000000000000_0000000000000000", "-1", "now", "12ab"].map((o) => script.compactOffset(o))).toEqual(["1_1000", "0_0", "-1", "now", "12ab"]);
  });

  it("formats axis figures compactly", () => {
    expect([0, 0.25, 1.234, 2.5, 12.4, 3_400, 45_000, 1_250_000].map((v) => script.formatCompact(v))).toEqual(["0", "0.25", "1.2", "2.5", "12", "3.4k", "45k", "1.3M"]);
  });

  it("tops an axis at the next 1, 2 or 5 times a power of ten, and at 1 when there is nothing to show", () => {
    expect([0, -3, Number.NaN, 0.03, 1, 1.2, 3, 7, 10, 101, 4_999].map((v) => script.niceCeiling(v))).toEqual([1, 1, 1, 0.05, 1, 2, 5, 10, 10, 200, 5_000]);
  });

  it("turns each interval into a rate over its own duration, the partial last one included", () => {
    const points = script.seriesPoints([sample(0, 5_000, 100, 10_000, 2, 9), sample(5_000, 2_000, 10, 500, null, null), sample(7_000, 0, 0, 0)]);
    expect(points.appends).toEqual([{ t: 5_000, v: 20 }, { t: 7_000, v: 5 }]);
    expect(points.bytes).toEqual([{ t: 5_000, v: 2_000 }, { t: 7_000, v: 250 }]);
    expect(points.p50).toEqual([{ t: 5_000, v: 2 }]);
    expect(points.p99).toEqual([{ t: 5_000, v: 9 }]);
  });

  it("spans the charts from the first sample's start to the last one's end over every node", () => {
    expect(script.timeSpan([{ samples: [sample(1_000, 5_000, 0, 0)] }, { samples: [sample(6_000, 2_500, 0, 0)] }])).toEqual({ startMs: 1_000, endMs: 8_500 });
    expect(script.timeSpan([{ samples: [] }])).toBeNull();
  });

  it("sums up a table definition in one line: columns and types, the primary key or that rows are appended, the bucket key", () => {
    const columns = [{ name: "id", type: "int", nullable: false }, { name: "email", type: "string", nullable: true }];
    expect(script.definitionSummary({ columns, primaryKey: ["id"], bucketKey: ["id"], buckets: 4 })).toBe("id int, email string nullable · primary key (id) · bucket key (id)");
    expect(script.definitionSummary({ columns, buckets: 2 })).toBe("id int, email string nullable · log: rows are appended");
    expect(script.definitionSummary({ columns: [{ name: "a", type: "int" }, { name: "b", type: "bool" }], bucketKey: ["b", "a"], buckets: 1 })).toBe("a int, b bool · log: rows are appended · bucket key (b, a)");
  });

  it("shows a definition of another shape as its JSON rather than a guess", () => {
    expect([{ columns: "id int" }, { columns: [{ name: "id" }] }, null, "text"].map((d) => script.definitionSummary(d))).toEqual(['{"columns":"id int"}', '{"columns":[{"name":"id"}]}', "null", '"text"']);
  });

  it("places points left to right in time and bottom to top in value, clamped to the box", () => {
    const box = { left: 10, top: 0, width: 100, height: 50, startMs: 0, endMs: 1_000, maxValue: 10 };
    expect(script.polylinePoints([{ t: 0, v: 0 }, { t: 500, v: 5 }, { t: 1_000, v: 20 }], box)).toBe("10.0,50.0 60.0,25.0 110.0,0.0");
  });
});

/** The browser globals the script may use: a name outside this list is a typo or a new dependency to review. */
const BROWSER_GLOBALS = ["document", "fetch", "sessionStorage", "AbortSignal", "URLSearchParams", "Node", "setTimeout", "clearTimeout"];

describe("the status page script, linted as the browser gets it", () => {
  it("uses only the browser globals it lists, and leaves no name unused, shadowed or declared twice", async () => {
    const { Linter } = await import("eslint");
    const messages = new Linter().verify(STATUS_PAGE_SCRIPT, [
      {
        languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: Object.fromEntries(BROWSER_GLOBALS.map((name) => [name, "readonly"])) },
        rules: { "no-undef": "error", "no-unused-vars": "error", "no-redeclare": "error", "no-shadow": "error", eqeqeq: "error", "prefer-const": "error" },
      },
    ]);
    expect(messages.map((m) => `${m.line}:${m.column} ${m.message}`)).toEqual([]);
  });
});
