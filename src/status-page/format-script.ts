// The pure half of the status page's script (docs/status-page.md): formatting and chart scaling, no DOM.
// Browser JavaScript kept as text (the Worker serves it as it is; there is no bundler for browser code), an
// ES module whose exports test/status-page/script.test.ts imports and checks in Node. No backtick and
// no dollar-brace in it: it lives inside a template literal.
export const FORMAT_SCRIPT = String.raw`
/** "—" for no value; ms, s, min, h above. */
export function formatAge(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return Math.max(0, Math.round(ms)) + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 3600000) return Math.round(ms / 60000) + " min";
  return (ms / 3600000).toFixed(1) + " h";
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** 1023 B, 1.5 KiB, 12 MiB: binary units, one decimal below 10. */
export function formatBytes(bytes) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) return "—";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return value + " B";
  return (value < 10 ? value.toFixed(1) : Math.round(value).toString()) + " " + BYTE_UNITS[unit];
}

/** An offset of digit groups without their zero padding (0000000000000001_0000000000001000 -> 1_1000); others as they are. */
export function compactOffset(offset) {
  if (!/^[0-9]+(_[0-9]+)*$/.test(offset)) return offset;
  return offset.split("_").map((part) => part.replace(/^0+(?=[0-9])/, "")).join("_");
}

/**
 * A table definition of GET /admin/tables/<name> in one line: its columns and their types, its
 * primary key or that it is a log table, its bucket key. Another shape (a newer server) as its JSON.
 */
export function definitionSummary(definition) {
  const columns = definition && Array.isArray(definition.columns) ? definition.columns : null;
  if (columns === null || !columns.every((c) => c && typeof c.name === "string" && typeof c.type === "string")) return JSON.stringify(definition);
  const parts = [columns.map((c) => c.name + " " + c.type + (c.nullable ? " nullable" : "")).join(", ")];
  parts.push(Array.isArray(definition.primaryKey) ? "primary key (" + definition.primaryKey.join(", ") + ")" : "log: rows are appended");
  if (Array.isArray(definition.bucketKey)) parts.push("bucket key (" + definition.bucketKey.join(", ") + ")");
  return parts.join(" · ");
}

/** A figure for an axis or a table: 0.25, 1.2, 12, 3.4k, 1.2M (two significant digits below 10). */
export function formatCompact(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  const size = Math.abs(value);
  if (size >= 1e6) return (value / 1e6).toFixed(size >= 1e7 ? 0 : 1) + "M";
  if (size >= 1e3) return (value / 1e3).toFixed(size >= 1e4 ? 0 : 1) + "k";
  if (size >= 10 || value === 0) return Math.round(value).toString();
  return String(Number(value.toPrecision(2)));
}

/** The smallest 1, 2 or 5 times a power of ten at or above the value: the top of a chart's axis. */
export function niceCeiling(value) {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value * (1 - 1e-9)) return step * power;
  }
  return 10 * power;
}

/**
 * One node's samples of GET /admin/series as points per figure, each at its interval's end. A rate is the
 * count over the interval's own duration (the last, partial interval included); no duration, no point.
 */
export function seriesPoints(samples) {
  const points = { appends: [], bytes: [], p50: [], p99: [] };
  for (const sample of samples) {
    const seconds = sample.durationMs / 1000;
    if (!(seconds > 0)) continue;
    const t = sample.startMs + sample.durationMs;
    points.appends.push({ t, v: sample.appends / seconds });
    points.bytes.push({ t, v: sample.bytes / seconds });
    if (typeof sample.ackP50Ms === "number") points.p50.push({ t, v: sample.ackP50Ms });
    if (typeof sample.ackP99Ms === "number") points.p99.push({ t, v: sample.ackP99Ms });
  }
  return points;
}

/** The time span covered by every node's samples: [first start, last end], or null when there are none. */
export function timeSpan(nodes) {
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const node of nodes) {
    for (const sample of node.samples) {
      startMs = Math.min(startMs, sample.startMs);
      endMs = Math.max(endMs, sample.startMs + sample.durationMs);
    }
  }
  return endMs > startMs ? { startMs, endMs } : null;
}

/** Points as an SVG polyline's "x,y ..." inside a box, the value axis from 0 to maxValue (clamped). */
export function polylinePoints(points, box) {
  const spanMs = box.endMs - box.startMs;
  return points
    .map((point) => {
      const x = box.left + (spanMs > 0 ? ((point.t - box.startMs) / spanMs) * box.width : box.width);
      const share = Math.min(1, Math.max(0, point.v / box.maxValue));
      const y = box.top + box.height - share * box.height;
      return x.toFixed(1) + "," + y.toFixed(1);
    })
    .join(" ");
}
`;
