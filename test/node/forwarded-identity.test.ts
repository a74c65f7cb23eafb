// The token id the Worker forwards to a node (src/http/forwarded-identity.ts): set from a verified token on
// live reads only, never taken from the client.
import { Hono } from "hono";
import { describe, expect, test } from "vitest";
import { signToken } from "../../src/auth/token-codec.ts";
import { mintClaims } from "../../src/core/auth/claims.ts";
import { FORWARDED_TOKEN_ID, forwardedIdentity, forwardIdentity, stripForwardedIdentity } from "../../src/http/forwarded-identity.ts";

const SECRET = "forwarded-identity-test-secret-0123456789";
const env = { TOKEN_SECRET: SECRET };

const app = new Hono<{ Bindings: { TOKEN_SECRET: string } }>();
app.use("*", stripForwardedIdentity);
app.use("*", forwardedIdentity);
app.all("*", (c) => c.text(c.req.raw.headers.get(FORWARDED_TOKEN_ID) ?? "(none)"));

async function seen(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<string> {
  return (await app.request(`http://mink.test${path}`, { method, headers }, env)).text();
}

const token = (id: string): Promise<string> => signToken(mintClaims({ prefixes: [""], ops: ["read"], ttlSeconds: 60 }, id, Date.now()), SECRET);

describe("forwarded identity", () => {
  test("a live read with a verified token carries its id", async () => {
    expect(await seen("/v1/stream/a?offset=now&live=long-poll", { authorization: `Bearer ${await token("tok-1")}` })).toBe("tok-1");
    expect(await seen("/v1/stream/a?offset=now&live=sse", { authorization: `Bearer ${await token("tok-2")}` })).toBe("tok-2");
  });

  test("a client's own header is dropped: without a token, with a bad one, or under a valid one's id", async () => {
    const forged = { [FORWARDED_TOKEN_ID]: "someone-else" };
    expect(await seen("/v1/stream/a?offset=now&live=long-poll", forged)).toBe("(none)");
    expect(await seen("/v1/stream/a?offset=now&live=long-poll", { ...forged, authorization: "Bearer not.a.token" })).toBe("(none)");
    expect(await seen("/v1/stream/a?offset=now&live=long-poll", { ...forged, authorization: `Bearer ${await token("tok-3")}` })).toBe("tok-3");
    expect(await seen("/v1/stream/a", forged, "POST")).toBe("(none)");
  });

  test("requests that are not live reads carry none (nothing counts them per token)", async () => {
    expect(await seen("/v1/stream/a?offset=-1", { authorization: `Bearer ${await token("tok-4")}` })).toBe("(none)");
  });

  test("forwardIdentity (the call for access.ts after a successful decision) sets the id on the context's request, over any other", () => {
    const c = { req: { raw: new Request("http://mink.test/v1/stream/a?live=sse", { headers: { [FORWARDED_TOKEN_ID]: "forged", accept: "text/event-stream" } }) } };
    forwardIdentity(c, { id: "tok-5" });
    expect(c.req.raw.headers.get(FORWARDED_TOKEN_ID)).toBe("tok-5");
    expect(c.req.raw.headers.get("accept")).toBe("text/event-stream");
  });
});
