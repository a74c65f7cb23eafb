// The status page's HTML shell (docs/status-page.md): structure only. No data, no inline script or style
// (the CSP forbids both); src/status-page/page-script.ts fills it from the admin API.
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>mink status</title>
<link rel="stylesheet" href="ui/app.css">
<script type="module" src="ui/app.js"></script>
</head>
<body>
<header class="bar">
  <h1>mink <span class="muted">status</span></h1>
  <span id="updated" class="muted" aria-live="polite"></span>
  <button id="logout" type="button" class="secondary" hidden>Log out</button>
</header>
<main>
  <noscript><p class="notice error">This page needs JavaScript.</p></noscript>
  <section id="login" class="card login" hidden>
    <h2>Sign in</h2>
    <form id="login-form">
      <label for="token">Admin token</label>
      <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required>
      <button type="submit">Sign in</button>
    </form>
    <p id="login-error" class="notice error" role="alert" hidden></p>
    <p class="muted small">The token stays in this tab (sessionStorage) until you log out or close the tab.</p>
  </section>
  <div id="dashboard" hidden>
    <p id="banner" class="notice error" role="alert" hidden></p>
    <section class="card">
      <h2>Nodes <span id="node-summary" class="muted small"></span></h2>
      <div class="table-wrap">
        <table id="nodes" class="stack">
          <thead><tr><th>Node</th><th>State</th><th class="num">Epoch</th><th class="num">Slots</th><th class="num">Streams</th><th class="num" title="table buckets the node leads (streams under __ds/table/, in no stream list)">Buckets</th><th class="num">Heartbeat</th></tr></thead>
          <tbody></tbody>
        </table>
      </div>
    </section>
    <section class="card">
      <h2>In progress</h2>
      <div id="progress" class="progress"></div>
    </section>
    <section class="card">
      <h2>Activity <span class="muted small">per node, last minutes</span></h2>
      <div id="charts"></div>
    </section>
    <section class="card">
      <h2>Streams</h2>
      <form id="search" class="search" role="search">
        <label for="prefix" class="visually-hidden">Name prefix</label>
        <input id="prefix" name="prefix" type="search" placeholder="Name prefix" autocomplete="off" spellcheck="false">
        <button type="submit">Search</button>
      </form>
      <p id="stream-message" class="notice" role="status" hidden></p>
      <div id="stream-list">
      <div class="table-wrap">
        <table id="streams" class="stack">
          <thead><tr><th>Name</th><th>Owner</th><th class="num">Size</th><th>Tail</th><th>Move to</th></tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Stream pages">
        <button id="first-page" type="button" class="secondary">First</button>
        <button id="prev-page" type="button" class="secondary">Previous</button>
        <span id="page-label" class="muted small"></span>
        <button id="next-page" type="button" class="secondary">Next</button>
      </nav>
      </div>
    </section>
    <section class="card">
      <h2>Tables</h2>
      <p id="table-message" class="notice" role="status" hidden></p>
      <div id="table-list" class="table-wrap">
        <table id="tables" class="stack">
          <thead><tr><th>Name</th><th>Kind</th><th class="num">Buckets</th><th>Details</th></tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <div id="table-buckets"></div>
    </section>
  </div>
</main>
</body>
</html>
`;
