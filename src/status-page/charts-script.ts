// The charts of the status page's script (docs/status-page.md): appends, bytes and ack latency per node
// over the sampled window, drawn as SVG from GET /admin/series. Browser JavaScript kept as text, part of the
// one script page-script.ts composes (it uses that file's helpers and format-script.ts's scaling); no
// backtick, no dollar-brace.
export const CHARTS_SCRIPT = String.raw`
function chart(title, nodes, pick, formatTick, span) {
  const W = 320, H = 150, box = { left: 50, top: 8, width: 262, height: 118, startMs: span.startMs, endMs: span.endMs, maxValue: 1 };
  const lines = [];
  let top = 0;
  nodes.forEach((node, index) => {
    for (const [key, className] of pick) {
      const points = seriesPoints(node.samples)[key];
      for (const point of points) top = Math.max(top, point.v);
      lines.push({ points, className: "c" + (index % 6) + (className ? " " + className : "") });
    }
  });
  box.maxValue = niceCeiling(top);
  const figure = el("figure", "chart");
  const title_ = el("figcaption", "small", title);
  const image = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title });
  for (const share of [0, 0.5, 1]) {
    const y = box.top + box.height - share * box.height;
    image.append(svg("line", { class: "grid", x1: box.left, x2: box.left + box.width, y1: y, y2: y }));
    const label = svg("text", { class: "axis", x: box.left - 6, y: y + 4, "text-anchor": "end" });
    label.textContent = formatTick(share * box.maxValue);
    image.append(label);
  }
  const minutes = Math.max(1, Math.round((span.endMs - span.startMs) / 60000));
  for (const [x, text, anchor] of [[box.left, "-" + minutes + " min", "start"], [box.left + box.width, "now", "end"]]) {
    const label = svg("text", { class: "axis", x, y: H - 4, "text-anchor": anchor });
    label.textContent = text;
    image.append(label);
  }
  for (const line of lines) {
    if (line.points.length > 1) image.append(svg("polyline", { class: line.className, points: polylinePoints(line.points, box) }));
    // A line of one point draws nothing: a dot instead.
    if (line.points.length === 1) {
      const [cx, cy] = polylinePoints(line.points, box).split(",");
      image.append(svg("circle", { class: line.className, cx, cy, r: 2 }));
    }
  }
  figure.append(title_, image);
  return figure;
}

function renderCharts(series) {
  const host = $("charts");
  if (!series.ok) {
    const missing = series.status === 404;
    host.replaceChildren(el("p", missing ? "empty" : "notice error", missing ? "Charts are not available: this server has no GET /admin/series." : "series: " + series.message));
    return;
  }
  const nodes = series.body.nodes;
  const span = timeSpan(nodes);
  if (span === null) {
    host.replaceChildren(el("p", "empty", "No samples yet."));
    return;
  }
  const grid = el("div", "charts");
  grid.append(
    chart("Appends per second", nodes, [["appends"]], formatCompact, span),
    chart("Bytes per second", nodes, [["bytes"]], formatBytes, span),
    chart("Ack latency, ms: p50 solid, p99 dashed", nodes, [["p50"], ["p99", "p99"]], formatCompact, span),
  );
  const legend = el("div", "legend");
  nodes.forEach((node, index) => {
    const entry = el("span");
    entry.append(el("span", "swatch c" + (index % 6)), node.id + (node.up ? "" : " (down)"));
    legend.append(entry);
  });
  host.replaceChildren(grid, legend);
}
`;
