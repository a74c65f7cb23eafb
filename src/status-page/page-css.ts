// The status page's stylesheet (docs/status-page.md): system fonts, light and dark schemes, tables that
// scroll sideways inside their card on a narrow screen (375 px and up) instead of widening the page.
export const STATUS_PAGE_CSS = `
:root {
  --bg: #f4f5f7; --card: #ffffff; --text: #1d2330; --muted: #667085; --line: #e3e6eb;
  --accent: #2f6fde; --accent-text: #ffffff; --ok: #1a7f4b; --warn: #a15c00; --bad: #c0362c;
  --ok-bg: #e3f4ea; --warn-bg: #fdf0dc; --bad-bg: #fbe6e4; --info-bg: #e6eefc;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12151b; --card: #1b1f27; --text: #e6e9ef; --muted: #9aa3b2; --line: #2c323d;
    --accent: #5b8ff0; --ok: #52c98a; --warn: #e0a341; --bad: #f07167;
    --ok-bg: #17372a; --warn-bg: #3a2c12; --bad-bg: #41201e; --info-bg: #1c2a44;
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.bar { display: flex; align-items: center; gap: 12px; padding: 10px 16px; background: var(--card);
  border-bottom: 1px solid var(--line); }
.bar h1 { font-size: 18px; margin: 0; margin-right: auto; white-space: nowrap; }
#updated { font-size: 12px; text-align: right; white-space: nowrap; }
.bar button { white-space: nowrap; }
main { max-width: 1100px; margin: 0 auto; padding: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px;
  margin-bottom: 16px; }
h2 { font-size: 15px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 12px 0 6px; color: var(--muted); font-weight: 600; }
.muted { color: var(--muted); font-weight: normal; }
.small { font-size: 13px; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.login { max-width: 380px; margin: 48px auto; }
.login form { display: grid; gap: 8px; }
input, select, button { font: inherit; }
input, select { padding: 7px 9px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg);
  color: var(--text); min-width: 0; }
button { padding: 7px 14px; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent);
  color: var(--accent-text); cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
button:disabled { opacity: 0.45; cursor: default; }
button.small { padding: 3px 9px; font-size: 13px; }
select.small { padding: 3px 6px; font-size: 13px; }
.notice { padding: 8px 12px; border-radius: 6px; background: var(--info-bg); margin: 8px 0; }
.notice.error { background: var(--bad-bg); color: var(--bad); }
.notice.ok { background: var(--ok-bg); color: var(--ok); }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); white-space: nowrap;
  vertical-align: middle; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); font-weight: 600; }
tbody tr:last-child td { border-bottom: none; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { max-width: 320px; overflow: hidden; text-overflow: ellipsis; }
.offset { display: inline-block; max-width: 150px; overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; }
.progress { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 0 20px; }
.progress h3 { margin-top: 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600;
  margin-right: 4px; background: var(--info-bg); color: var(--accent); }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.plain { list-style: none; padding: 0; margin: 0; }
.plain li { padding: 3px 0; }
.empty { color: var(--muted); font-size: 14px; margin: 4px 0; }
.search { display: flex; gap: 8px; margin-bottom: 8px; }
.search input { flex: 1; }
.pager { display: flex; align-items: center; gap: 8px; margin-top: 10px; flex-wrap: wrap; }
.pager span { margin-right: auto; }
.move { display: flex; gap: 6px; }
.table-detail { margin-top: 14px; }
.table-detail h3 { color: var(--text); word-break: break-all; }
.definition { margin: 0 0 6px; overflow-wrap: anywhere; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 14px; }
.chart { margin: 0; }
.chart figcaption { margin-bottom: 4px; color: var(--muted); }
.chart svg { width: 100%; height: auto; display: block; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis { fill: var(--muted); font-size: 11px; }
.chart polyline { fill: none; stroke-width: 2; stroke-linejoin: round; }
.chart circle { fill: none; stroke-width: 3; }
.chart polyline.p99 { stroke-dasharray: 4 3; stroke-width: 1.5; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 13px; margin-top: 6px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; }
.c0 { stroke: #2f6fde; background: #2f6fde; } .c1 { stroke: #e07b00; background: #e07b00; }
.c2 { stroke: #1a9e5c; background: #1a9e5c; } .c3 { stroke: #b03fc4; background: #b03fc4; }
.c4 { stroke: #d23f5a; background: #d23f5a; } .c5 { stroke: #0f9fb0; background: #0f9fb0; }
@media (max-width: 600px) {
  main { padding: 10px; }
  /* Tables become one block per row, each value next to its column's name. */
  table.stack thead { display: none; }
  table.stack tr { display: block; padding: 6px 0; border-bottom: 1px solid var(--line); }
  table.stack tbody tr:last-child { border-bottom: none; }
  table.stack td { display: flex; justify-content: space-between; align-items: center; gap: 12px;
    border: none; padding: 3px 0; white-space: normal; text-align: right; max-width: none; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font: 600 12px/1.45 system-ui, sans-serif;
    text-transform: uppercase; letter-spacing: 0.04em; text-align: left; flex: none; }
  table.stack td.name { font-weight: 600; word-break: break-all; }
  .offset { max-width: 190px; }
  .card { padding: 12px; }
  th, td { padding: 6px 7px; }
  .bar { padding: 8px 10px; }
}
`;
