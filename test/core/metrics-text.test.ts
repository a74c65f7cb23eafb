// The Prometheus text formatter, row by row: HELP and TYPE once per metric, label escaping, values.
import { describe, expect, it } from "vitest";
import { escapeHelp, escapeLabelValue, formatMetrics, formatValue } from "../../src/core/metrics-text.ts";

describe("metrics text", () => {
  it("writes HELP and TYPE once, then one row per sample", () => {
    const text = formatMetrics([
      {
        name: "mink_appends_total",
        help: "Appends acknowledged.",
        type: "counter",
        samples: [
          { labels: { node: "node-0" }, value: 3 },
          { labels: { node: "node-1" }, value: 0 },
        ],
      },
      { name: "mink_open_streams", help: "Streams held.", type: "gauge", samples: [{ value: 2 }] },
    ]);
    expect(text.split("\n")).toEqual([
      "# HELP mink_appends_total Appends acknowledged.",
      "# TYPE mink_appends_total counter",
      'mink_appends_total{node="node-0"} 3',
      'mink_appends_total{node="node-1"} 0',
      "# HELP mink_open_streams Streams held.",
      "# TYPE mink_open_streams gauge",
      "mink_open_streams 2",
      "",
    ]);
  });

  it("merges families of the same name under the first HELP and TYPE", () => {
    const text = formatMetrics([
      { name: "m_total", help: "first", type: "counter", samples: [{ labels: { node: "a" }, value: 1 }] },
      { name: "other", help: "o", type: "gauge", samples: [{ value: 5 }] },
      { name: "m_total", help: "second", type: "counter", samples: [{ labels: { node: "b" }, value: 2 }] },
    ]);
    expect(text.match(/^# HELP m_total/gm)).toHaveLength(1);
    expect(text.match(/^# TYPE m_total/gm)).toHaveLength(1);
    expect(text).toContain('# HELP m_total first\n# TYPE m_total counter\nm_total{node="a"} 1\nm_total{node="b"} 2\n');
  });

  it("escapes label values: backslash, double quote, newline", () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const text = formatMetrics([{ name: "x", help: "h", type: "gauge", samples: [{ labels: { path: 'say "hi"\n' }, value: 1 }] }]);
    expect(text.split("\n")[2]).toBe('x{path="say \\"hi\\"\\n"} 1');
  });

  it("escapes HELP text: backslash and newline, quotes kept", () => {
    expect(escapeHelp('a\\b\n"c"')).toBe('a\\\\b\\n"c"');
  });

  it("writes several labels in order and special values", () => {
    const text = formatMetrics([
      { name: "req_total", help: "h", type: "counter", samples: [{ labels: { node: "n", kind: "put" }, value: 7 }] },
    ]);
    expect(text.split("\n")[2]).toBe('req_total{node="n",kind="put"} 7');
    expect([NaN, Infinity, -Infinity, 1.5].map(formatValue)).toEqual(["NaN", "+Inf", "-Inf", "1.5"]);
  });

  it("refuses invalid metric and label names; no families is empty text", () => {
    expect(() => formatMetrics([{ name: "bad-name", help: "", type: "gauge", samples: [] }])).toThrow(RangeError);
    expect(() => formatMetrics([{ name: "ok", help: "", type: "gauge", samples: [{ labels: { "bad-label": "v" }, value: 1 }] }])).toThrow(
      RangeError,
    );
    expect(formatMetrics([])).toBe("");
  });
});
