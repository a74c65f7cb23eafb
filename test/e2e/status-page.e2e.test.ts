// The status page (docs/status-page.md) in headless Chromium against a three-node mink started for real
// (test/e2e/service.ts): a wrong token is refused on the login form; the right one shows three live nodes
// and a coordinator; a stream is found by its prefix in the list and moved to another node from its row,
// and the page sees the transfer finish; a list longer than a page is paged forward and back; a table written
// through /v1/table is listed, and its buckets show their leaders and rows, then the snapshot offsets once
// snapshotted; the charts draw once appends happened. Screenshots at desktop and
// phone width go to test-results/, and at 375 px the page does not scroll sideways. Nothing the page loads
// may be blocked by its CSP or throw. The stream list and the charts need GET /admin/streams and GET
// /admin/series: where the server lacks one, the test checks the page says so instead. Every wait is a
// condition with a deadline (playwright's waitFor/waitForFunction timeouts); nothing sleeps.
//
// Needs Debian's chromium at /usr/bin/chromium (`apt-get install -y chromium`); skipped, saying so, without.
//
//   npm run test:e2e -- test/e2e/status-page.e2e.test.ts
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { startService, type Service } from "./service.ts";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const RESULTS_DIR = fileURLToPath(new URL("../../test-results/", import.meta.url));
/** Bound on each wait for the page (generous: 2 busy cores, a refresh every 5 s, transfers to settle). */
const WAIT_MS = 45_000;
const PREFIX = "page-e2e/orders";
const STREAMS = [`${PREFIX}/eu-1`, `${PREFIX}/eu-2`, `${PREFIX}/us-1`, "page-e2e/audit/2026"];
const PHONE_WIDTH_PX = 375;
/** Rows per page of the page's stream list (src/status-page/streams-script.ts). */
const PAGE_ROWS = 20;
const TABLE_NAME = "page_e2e_users";
const TABLE_BUCKETS = 3;
const TABLE_ROWS = 9;

// The little of the DOM the page-side predicates touch (they run in Chromium; this test's TypeScript has no DOM types).
declare const document: { querySelectorAll(selector: string): ArrayLike<{ dataset: Record<string, string | undefined>; textContent: string | null; title: string }> };
declare const window: { innerWidth: number };

const hasChromium = existsSync(CHROMIUM);
/** CI installs Chromium (.ci/run): there a missing browser is a failure, never a skip. */
const skip = !hasChromium && process.env.CI !== "true";
if (skip) console.warn(`status-page.e2e: skipped: no ${CHROMIUM} (apt-get install -y chromium)`);

describe.skipIf(skip)("the status page in a browser, against a three-node mink", () => {
  let service: Service;
  let context: BrowserContext;
  let page: Page;
  let profileDir: string;
  let listing = false;
  let series = false;
  const problems: string[] = [];

  beforeAll(async () => {
    service = await startService({ nodes: 3 });
    for (const name of STREAMS) await createWithContent(name, `first line of ${name}\n`);
    listing = (await admin("/admin/streams?limit=1")).status === 200;
    series = (await admin("/admin/series")).status === 200;
    profileDir = mkdtempSync(join(tmpdir(), "mink-chromium-"));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      // Chrome logs every non-2xx answer as an error; only a CSP refusal counts here.
      if (message.type() === "error" && message.text().includes("Content Security Policy")) problems.push(`console: ${message.text()}`);
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profileDir !== undefined) rmSync(profileDir, { recursive: true, force: true });
    await service?.stop();
  });

  async function admin(path: string, init: { method?: string; body?: string } = {}): Promise<{ status: number; body: unknown }> {
    const response = await undiciFetch(`${service.baseUrl}${path}`, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
      body: init.body ?? null,
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? null : (JSON.parse(text) as unknown) };
  }

  async function createWithContent(name: string, content: string): Promise<void> {
    const url = `${service.baseUrl}/v1/stream/${name}`;
    const created = await undiciFetch(url, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(created.status, await created.text()).toBe(201);
    const appended = await undiciFetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: content });
    expect([200, 204], await appended.text()).toContain(appended.status);
  }

  /** Waits until `predicate`, run in the page, is true (a function: a string would need eval, which the CSP forbids). */
  async function until<A extends string | number | null | [string, number] | [string, string]>(predicate: (arg: A) => boolean, arg: A): Promise<void> {
    await page.waitForFunction(predicate as (arg: unknown) => boolean, arg, { timeout: WAIT_MS });
  }

  async function inPage(expression: string): Promise<unknown> {
    return page.evaluate(expression);
  }

  async function signIn(token: string): Promise<void> {
    await page.locator("#token").waitFor({ state: "visible", timeout: WAIT_MS });
    await page.fill("#token", token);
    await page.click("#login-form button[type=submit]");
  }

  it("refuses a wrong token on the login form, with the reason", async () => {
    await page.goto(`${service.baseUrl}/admin`);
    expect(new URL(page.url()).pathname).toBe("/admin/");
    await signIn("not-the-admin-token");
    const error = page.locator("#login-error");
    await error.waitFor({ state: "visible", timeout: WAIT_MS });
    expect(await error.textContent()).toContain("refused (HTTP 401)");
    expect(await page.locator("#dashboard").isVisible()).toBe(false);
    expect(await inPage('sessionStorage.getItem("mink-admin-token")')).toBeNull();
  });

  it("signs in with the admin token and shows three live nodes, one of them the coordinator", async () => {
    await signIn(service.adminToken);
    await until(() => document.querySelectorAll("#nodes tbody .badge.ok").length === 3, null);
    const ids = await page.locator("#nodes tbody tr td:first-child .mono").allTextContents();
    expect(ids.sort()).toEqual(["node-0", "node-1", "node-2"]);
    await until(() => document.querySelectorAll("#nodes tbody .badge:not(.ok):not(.warn):not(.bad)").length === 1, null);
    expect(await page.locator("#node-summary").textContent()).toMatch(/^3 of 3 live · coordinator node-\d \(epoch \d+\)$/);
  });

  it("keeps the token for the tab: a reload stays signed in", async () => {
    await page.reload();
    await until(() => document.querySelectorAll("#nodes tbody tr").length === 3, null);
    expect(await page.locator("#login").isVisible()).toBe(false);
  });

  it("finds streams by prefix in the list, with owner, size and tail", async () => {
    if (!listing) {
      await page.locator("#stream-message").filter({ hasText: "not available" }).waitFor({ timeout: WAIT_MS });
      return;
    }
    await page.fill("#prefix", PREFIX);
    await page.click("#search button[type=submit]");
    const rows = page.locator("#streams tbody tr");
    await until((prefix) => {
      const names = Array.from(document.querySelectorAll("#streams tbody tr"), (tr) => tr.dataset["stream"] ?? "");
      return names.length === 3 && names.every((name) => name.startsWith(prefix));
    }, PREFIX);
    const first = rows.filter({ hasText: `${PREFIX}/eu-1` });
    expect(await first.locator("td").nth(1).textContent()).toMatch(/^node-\d/);
    expect(await first.locator("td").nth(2).textContent()).toMatch(/\d+ B$/);
  });

  it("starts a transfer and sees it finish", async () => {
    const name = `${PREFIX}/eu-2`;
    const before = (await admin(`/admin/streams/${name}`)).body as { owner: string };
    const target = ["node-0", "node-1", "node-2"].find((id) => id !== before.owner) ?? "";
    if (listing) {
      const row = page.locator(`#streams tbody tr[data-stream="${name}"]`);
      await row.locator("select").selectOption(target);
      await row.locator("button").click();
      const done = page.locator("#progress li").filter({ hasText: `${name} → ${target}` }).locator(".badge.ok", { hasText: "done" });
      await done.waitFor({ timeout: WAIT_MS });
      await page.locator(`#streams tbody tr[data-stream="${name}"] td:nth-child(2)`).filter({ hasText: new RegExp(`^${target}$`) }).waitFor({ timeout: WAIT_MS });
    } else {
      // Without the list the page has no row to start it from: begin it over the API and watch the node table.
      const counts = await nodeStreamCounts();
      expect((await admin("/admin/transfers", { method: "POST", body: JSON.stringify({ stream: name, target }) })).status).toBe(202);
      const expected = String((counts.get(target) ?? 0) + 1);
      await page.locator("#nodes tbody tr").filter({ hasText: target }).locator("td:nth-child(5)").filter({ hasText: new RegExp(`^${expected}\\b`) }).waitFor({ timeout: WAIT_MS });
    }
    const after = (await admin(`/admin/streams/${name}`)).body as { owner: string; pendingTransfer: unknown };
    expect(after.owner).toBe(target);
    expect(after.pendingTransfer).toBeNull();
  });

  async function nodeStreamCounts(): Promise<Map<string, number>> {
    const { nodes } = (await admin("/admin/nodes")).body as { nodes: Array<{ id: string; streams: number }> };
    return new Map(nodes.map((node) => [node.id, node.streams]));
  }

  it("pages through a long list 20 at a time: Next, then Previous", async () => {
    if (!listing) return;
    const many = Array.from({ length: PAGE_ROWS + 2 }, (_, i) => `page-e2e/many/${String(i).padStart(2, "0")}`);
    for (const name of many) await createWithContent(name, "x\n");
    await page.fill("#prefix", "page-e2e/many/");
    await page.click("#search button[type=submit]");
    const rowsAre = async (first: string, count: number): Promise<void> =>
      until(([name, n]) => {
        const rows = document.querySelectorAll("#streams tbody tr");
        return rows.length === n && rows[0]?.dataset["stream"] === name;
      }, [first, count] as [string, number]);
    await rowsAre(many[0] ?? "", PAGE_ROWS);
    await page.click("#next-page");
    await rowsAre(many[PAGE_ROWS] ?? "", 2);
    expect(await page.locator("#next-page").isDisabled()).toBe(true);
    await page.click("#prev-page");
    await rowsAre(many[0] ?? "", PAGE_ROWS);
    // Back to the first search, for the screenshots.
    await page.fill("#prefix", PREFIX);
    await page.click("#search button[type=submit]");
    await rowsAre(`${PREFIX}/eu-1`, 3);
  });

  /** A /v1/table request as JSON; a 503 (no coordinator yet, a bucket still loading) is retried. */
  async function tableRequest(path: string, method: string, body: unknown): Promise<{ status: number; text: string }> {
    return eventually(
      async () => {
        const response = await undiciFetch(`${service.baseUrl}/v1/table/${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const text = await response.text();
        if (response.status === 503) throw new NotYet(`${method} /v1/table/${path} answered 503: ${text}`);
        return { status: response.status, text };
      },
      { what: `${method} /v1/table/${path} answered other than 503`, timeoutMs: WAIT_MS, errors: "fail" },
    );
  }

  it("lists a table and shows its buckets: leaders and rows, then each written bucket's snapshot offset once snapshotted", async () => {
    const definition = { columns: [{ name: "id", type: "int" }, { name: "name", type: "string", nullable: true }], primaryKey: ["id"], buckets: TABLE_BUCKETS };
    const created = await tableRequest(TABLE_NAME, "PUT", definition);
    expect(created.status, created.text).toBe(201);
    const ops = Array.from({ length: TABLE_ROWS }, (_, i) => ({ upsert: { id: i, name: `user ${i}` } }));
    const written = await tableRequest(`${TABLE_NAME}/write`, "POST", { ops });
    expect(written.status, written.text).toBe(200);

    const listed = page.locator(`#tables tbody tr[data-table="${TABLE_NAME}"]`);
    await listed.waitFor({ timeout: WAIT_MS });
    expect(await listed.locator("td").nth(1).textContent()).toBe("primary-key");
    expect(await listed.locator("td").nth(2).textContent()).toBe(String(TABLE_BUCKETS));
    await listed.locator("button").click();
    const bucketRows = `#table-buckets .table-detail[data-table="${TABLE_NAME}"] tbody tr`;
    // Every leader answers with its rows on some refresh: the Rows column adds up to what was written.
    await until(([selector, rows]) => {
      const cells = Array.from(document.querySelectorAll(selector + " td:nth-child(5)"), (td) => Number(td.textContent));
      return cells.length > 0 && cells.reduce((sum, n) => sum + (Number.isFinite(n) ? n : 0), 0) === rows;
    }, [bucketRows, TABLE_ROWS] as [string, number]);
    expect(await page.locator(bucketRows).count()).toBe(TABLE_BUCKETS);
    for (const leader of await page.locator(`${bucketRows} td:nth-child(2)`).allTextContents()) expect(leader).toMatch(/^node-[012]$/);
    expect(await page.locator(`#table-buckets .table-detail[data-table="${TABLE_NAME}"] .definition`).textContent()).toBe("id int, name string nullable · primary key (id) · bucket key (id)");
    // Table NC: the node table shows the buckets in their own column (the sixth), not in Streams.
    expect(await page.locator("#nodes thead th:nth-child(6)").textContent()).toBe("Buckets");
    await until((buckets) => {
      const cells = Array.from(document.querySelectorAll("#nodes tbody tr td:nth-child(6)"), (td) => Number(td.textContent));
      return cells.length === 3 && cells.reduce((sum, n) => sum + n, 0) === buckets;
    }, TABLE_BUCKETS);

    const snapshot = await admin(`/admin/tables/${TABLE_NAME}/snapshot`, { method: "POST" });
    expect(snapshot.status).toBe(200);
    const described = (await admin(`/admin/tables/${TABLE_NAME}`)).body as { buckets: Array<{ snapshotOffset: string | null }> };
    const offsets = described.buckets.map((b) => b.snapshotOffset ?? "");
    expect(offsets.some((offset) => offset !== "")).toBe(true);
    // The Snapshot cell shows the offset without its zero padding and holds the whole one as its title.
    await until(([selector, expected]) => {
      const titles = Array.from(document.querySelectorAll(selector + " td:nth-child(6) .offset"), (span) => span.title);
      return titles.join(",") === expected;
    }, [bucketRows, offsets.join(",")] as [string, string]);
  });

  it("draws the activity charts from the series, or says they are not available", async () => {
    if (!series) {
      await page.locator("#charts").filter({ hasText: "not available" }).waitFor({ timeout: WAIT_MS });
      return;
    }
    for (const name of STREAMS) await createWithContent(`${name}-more`, "more\n");
    // Each chart draws a line: appends/s, bytes/s and ack latency.
    await until(() => document.querySelectorAll("#charts svg").length === 3 && document.querySelectorAll("#charts svg:not(:has(polyline, circle))").length === 0, null);
    expect(await page.locator("#charts .legend").textContent()).toContain("node-0");
  });

  it("saves screenshots, and at phone width the page does not scroll sideways", async () => {
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: join(RESULTS_DIR, "status-page.png"), fullPage: true });
    await page.setViewportSize({ width: PHONE_WIDTH_PX, height: 800 });
    await until((width) => window.innerWidth === width, PHONE_WIDTH_PX);
    expect(await inPage("document.documentElement.scrollWidth")).toBeLessThanOrEqual(PHONE_WIDTH_PX);
    await page.screenshot({ path: join(RESULTS_DIR, "status-page-phone.png"), fullPage: true });
  });

  it("returns to the login on log out, forgetting the token", async () => {
    await page.click("#logout");
    await page.locator("#login").waitFor({ state: "visible", timeout: WAIT_MS });
    expect(await inPage('sessionStorage.getItem("mink-admin-token")')).toBeNull();
  });

  it("loaded nothing its CSP blocked and threw nothing", () => {
    expect(problems).toEqual([]);
  });
});
