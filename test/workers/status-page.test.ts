// The status page's files through the Worker (docs/status-page.md): served without the admin token (they
// hold no data), under a CSP that allows only this origin and no inline code, while every admin endpoint
// still asks for the token; `/admin` redirects to `/admin/`, whose relative links reach `/admin/ui/`.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import type { Env } from "../../src/env.ts";

const pageEnv = (): Env => ({ ...(env as unknown as Env), NODE_IDS: "sp-0", ROUTER_MODE: "forward" });

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`http://mink.test${path}`, { headers }), pageEnv(), ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("the status page", () => {
  it("serves the shell, the stylesheet and the script without a token, each with its type", async () => {
    for (const [path, type, marker] of [
      ["/admin/", "text/html; charset=utf-8", '<script type="module" src="ui/app.js">'],
      ["/admin/ui/app.css", "text/css; charset=utf-8", "font-variant-numeric"],
      ["/admin/ui/app.js", "text/javascript; charset=utf-8", "export function niceCeiling"],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toBe(type);
      expect(await response.text(), path).toContain(marker);
    }
  });

  it("allows only this origin's files, no inline script or style, and no framing", async () => {
    const response = await get("/admin/");
    await response.body?.cancel();
    const csp = (response.headers.get("content-security-policy") ?? "").split("; ");
    expect(csp).toEqual(expect.arrayContaining(["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"]));
    expect(csp.join(" ")).not.toContain("unsafe-inline");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
  });

  it("holds no inline script and nothing of the admin token", async () => {
    const html = await (await get("/admin/")).text();
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script type="module" src="ui/app.js">']);
    expect(html).not.toContain("</script><script");
    const served = [html, await (await get("/admin/ui/app.js")).text(), await (await get("/admin/ui/app.css")).text()].join("\n");
    expect(served).not.toContain((env as unknown as Env).ADMIN_TOKEN);
  });

  it("redirects /admin to /admin/ with a 308", async () => {
    const response = await get("/admin");
    expect(response.status).toBe(308);
    expect(response.headers.get("location")).toBe("/admin/");
  });

  it("leaves every admin endpoint behind the token", async () => {
    for (const path of ["/admin/nodes", "/admin/transfers", "/admin/tables", "/admin/tables/users", "/admin/ui/other.js", "/admin/index.html"]) {
      const response = await get(path);
      await response.body?.cancel();
      expect(response.status, path).toBe(401);
    }
  });
});
