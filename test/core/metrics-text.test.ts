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

  it("writes a histogram as cumulative buckets, +Inf, _sum and _count with the sample's labels", () => {
    const text = formatMetrics([
      {
        name: "mink_append_ack_seconds",
        help: "Ack latency.",
        type: "histogram",
        samples: [
          {
            labels: { node: "node-0" },
            buckets: [
              { le: 0.001, count: 1 },
              { le: 0.01, count: 3 },
            ],
            sum: 0.0305,
            count: 4,
          },
        ],
      },
    ]);
    expect(text.split("\n")).toEqual([
      "# HELP mink_append_ack_seconds Ack latency.",
      "# TYPE mink_append_ack_seconds histogram",
      'mink_append_ack_seconds_bucket{node="node-0",le="0.001"} 1',
      'mink_append_ack_seconds_bucket{node="node-0",le="0.01"} 3',
      'mink_append_ack_seconds_bucket{node="node-0",le="+Inf"} 4',
      'mink_append_ack_seconds_sum{node="node-0"} 0.0305',
      'mink_append_ack_seconds_count{node="node-0"} 4',
      "",
    ]);
  });

  it("an empty histogram still has its +Inf bucket, _sum and _count", () => {
    const text = formatMetrics([{ name: "h_seconds", help: "h", type: "histogram", samples: [{ buckets: [{ le: 1, count: 0 }], sum: 0, count: 0 }] }]);
    expect(text.split("\n").slice(2, -1)).toEqual(['h_seconds_bucket{le="1"} 0', 'h_seconds_bucket{le="+Inf"} 0', "h_seconds_sum 0", "h_seconds_count 0"]);
  });

  it("refuses histogram buckets that are not cumulative and ascending, and a label named le", () => {
    const family = (buckets: { le: number; count: number }[], count: number, labels?: Record<string, string>) =>
      formatMetrics([{ name: "h", help: "", type: "histogram", samples: [{ labels, buckets, sum: 0, count }] }]);
    expect(() => family([{ le: 1, count: 2 }, { le: 2, count: 1 }], 2)).toThrow(RangeError);
    expect(() => family([{ le: 2, count: 1 }, { le: 1, count: 1 }], 1)).toThrow(RangeError);
    expect(() => family([{ le: 1, count: 3 }], 2)).toThrow(RangeError);
    expect(() => family([{ le: Infinity, count: 1 }], 1)).toThrow(RangeError);
    expect(() => family([{ le: 1, count: 1 }], 1, { le: "x" })).toThrow(RangeError);
  });

  it("refuses one name used for two types", () => {
    expect(() =>
      formatMetrics([
        { name: "m", help: "", type: "gauge", samples: [] },
        { name: "m", help: "", type: "histogram", samples: [] },
      ]),
    ).toThrow(RangeError);
  });
});
