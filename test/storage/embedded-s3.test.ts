// The embedded S3 endpoint's HTTP/XML surface, spoken to with plain fetch (it needs no signature). The
// object-store semantics behind it are proven by the contract suite in test/contract/; these tests pin the
// wire format other S3 clients rely on: status codes, headers and XML shapes.
import { createHash } from "node:crypto";
import { describe, expect, inject, it } from "vitest";

const endpoint = inject("embeddedS3");
const bucketUrl = `${endpoint.url}/${endpoint.bucket}`;
const run = `embedded-s3-http-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** The object URL of `name` under this run's prefix, each path segment percent-encoded. */
function objectUrl(name: string): string {
  return `${bucketUrl}/${`${run}/${name}`.split("/").map(encodeURIComponent).join("/")}`;
}

function listUrl(params: Record<string, string>): string {
  return `${bucketUrl}?${new URLSearchParams({ "list-type": "2", ...params }).toString()}`;
}

/** The raw (still escaped) text of every `<tag>` in `xml`. */
function xmlValues(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1] ?? "");
}

const md5Etag = (body: string | Uint8Array): string => `"${createHash("md5").update(body).digest("hex")}"`;

async function put(name: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(objectUrl(name), { method: "PUT", body, headers });
}

async function expectS3Error(response: Response, status: number, code: string): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/xml");
  const xml = await response.text();
  expect(xml).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?><Error><Code>/);
  expect(xmlValues(xml, "Code")).toEqual([code]);
  expect(xmlValues(xml, "Message")[0]).not.toBe("");
  return xml;
}

function patterned(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 2_654_435_761) >>> 24;
  return bytes;
}

describe("embedded S3 endpoint over HTTP", () => {
  it("If-None-Match: * — of 16 concurrent creators exactly one gets 200, the rest 412 PreconditionFailed", async () => {
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) => put("race", `writer-${i}`, { "if-none-match": "*" })),
    );
    const winners = responses.flatMap((response, i) => (response.status === 200 ? [i] : []));
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    expect(responses[winner]!.headers.get("etag")).toBe(md5Etag(`writer-${winner}`));
    for (const [i, response] of responses.entries()) {
      if (i === winner) continue;
      const xml = await expectS3Error(response, 412, "PreconditionFailed");
      expect(xmlValues(xml, "Key")).toEqual([`${run}/race`]);
    }
    expect(await (await fetch(objectUrl("race"))).text()).toBe(`writer-${winner}`);
  });

  it("If-Match takes the ETag quoted or bare; a stale one is 412, a missing key 404 NoSuchKey (as AWS)", async () => {
    const v1 = (await put("cas", "v1")).headers.get("etag")!;
    expect(v1).toMatch(/^"[0-9a-f]{32}"$/);
    const quoted = await put("cas", "v2", { "if-match": v1 });
    expect(quoted.status).toBe(200);
    const v2 = quoted.headers.get("etag")!;
    const bare = await put("cas", "v3", { "if-match": v2.replaceAll('"', "") });
    expect(bare.status).toBe(200);
    await expectS3Error(await put("cas", "stale", { "if-match": v2 }), 412, "PreconditionFailed");
    expect(await (await fetch(objectUrl("cas"))).text()).toBe("v3");
    await expectS3Error(await put("cas-missing", "x", { "if-match": v1 }), 404, "NoSuchKey");
    expect((await fetch(objectUrl("cas-missing"), { method: "HEAD" })).status).toBe(404);
  });

  it("serves byte ranges with 206 and Content-Range, and 416 InvalidRange past the end", async () => {
    await put("ranges", "0123456789");
    const cases: [string, string, string][] = [
      ["bytes=2-4", "234", "bytes 2-4/10"],
      ["bytes=7-", "789", "bytes 7-9/10"],
      ["bytes=8-100", "89", "bytes 8-9/10"],
      ["bytes=-4", "6789", "bytes 6-9/10"],
      ["bytes=-50", "0123456789", "bytes 0-9/10"],
    ];
    for (const [range, body, contentRange] of cases) {
      const response = await fetch(objectUrl("ranges"), { headers: { range } });
      expect([response.status, await response.text(), response.headers.get("content-range")]).toEqual([206, body, contentRange]);
      expect(response.headers.get("content-length")).toBe(String(body.length));
    }
    const past = await fetch(objectUrl("ranges"), { headers: { range: "bytes=10-" } });
    expect(past.headers.get("content-range")).toBe("bytes */10");
    const xml = await expectS3Error(past, 416, "InvalidRange");
    expect(xmlValues(xml, "ActualObjectSize")).toEqual(["10"]);
  });

  it("GET and HEAD carry ETag, Content-Length, Content-Type and Last-Modified; HEAD of a missing key is a bare 404", async () => {
    await put("headers", "hello", { "content-type": "text/plain" });
    for (const method of ["GET", "HEAD"]) {
      const response = await fetch(objectUrl("headers"), { method });
      expect(response.status).toBe(200);
      expect(response.headers.get("etag")).toBe(md5Etag("hello"));
      expect(response.headers.get("content-length")).toBe("5");
      expect(response.headers.get("content-type")).toBe("text/plain");
      // fetch sends Accept-Encoding: the stored bytes must still come back as stored, never gzipped.
      expect(response.headers.get("content-encoding")).toBeNull();
      expect(Date.now() - Date.parse(response.headers.get("last-modified")!)).toBeLessThan(60_000);
      expect(await response.text()).toBe(method === "GET" ? "hello" : "");
    }
    const missing = await fetch(objectUrl("headers-missing"), { method: "HEAD" });
    expect([missing.status, await missing.text()]).toEqual([404, ""]);
  });

  it("lists page by page with continuation tokens, escaping keys and quoting ETags in the XML", async () => {
    const names = ["list/a&b", "list/c<d>", "list/e f", "list/g'h", "list/i/j"];
    for (const name of names) await put(name, "1");
    const prefix = `${run}/list/`;
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const response = await fetch(listUrl({ prefix, "max-keys": "2", ...(token === undefined ? {} : { "continuation-token": token }) }));
      expect([response.status, response.headers.get("content-type")]).toEqual([200, "application/xml"]);
      const xml = await response.text();
      expect(xml).toContain('<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">');
      expect(xmlValues(xml, "Name")).toEqual([endpoint.bucket]);
      expect(xmlValues(xml, "MaxKeys")).toEqual(["2"]);
      expect(xmlValues(xml, "KeyCount")).toEqual([String(xmlValues(xml, "Key").length)]);
      for (const etag of xmlValues(xml, "ETag")) expect(etag).toBe("&quot;c4ca4238a0b923820dcc509a6f75849b&quot;");
      seen.push(...xmlValues(xml, "Key"));
      [token] = xmlValues(xml, "NextContinuationToken");
      expect(xmlValues(xml, "IsTruncated")).toEqual([String(token !== undefined)]);
      pages++;
    } while (token !== undefined);
    expect(pages).toBe(3);
    const escaped = ["list/a&amp;b", "list/c&lt;d&gt;", "list/e f", "list/g&apos;h", "list/i/j"].map((name) => `${run}/${name}`);
    expect(seen).toEqual(escaped);

    const tail = await (await fetch(listUrl({ prefix, "start-after": `${run}/list/e f` }))).text();
    expect(xmlValues(tail, "Key")).toEqual(escaped.slice(3));
    expect(xmlValues(tail, "IsTruncated")).toEqual(["false"]);
  });

  it("answers errors as S3 XML: NoSuchKey, NoSuchBucket, NotImplemented, InvalidAccessKeyId", async () => {
    const missing = await expectS3Error(await fetch(objectUrl("nothing/here")), 404, "NoSuchKey");
    expect(xmlValues(missing, "Key")).toEqual([`${run}/nothing/here`]);
    const otherBucket = await expectS3Error(await fetch(`${endpoint.url}/not-${endpoint.bucket}/x`), 404, "NoSuchBucket");
    expect(xmlValues(otherBucket, "BucketName")).toEqual([`not-${endpoint.bucket}`]);
    await expectS3Error(await fetch(`${objectUrl("multipart")}?uploads`, { method: "POST" }), 501, "NotImplemented");
    await expectS3Error(await fetch(bucketUrl), 501, "NotImplemented");
    const credential = (keyId: string): string =>
      `AWS4-HMAC-SHA256 Credential=${keyId}/20260426/auto/s3/aws4_request, SignedHeaders=host, Signature=00`;
    await expectS3Error(await fetch(objectUrl("nothing"), { headers: { authorization: credential("intruder") } }), 403, "InvalidAccessKeyId");
    expect((await fetch(objectUrl("nothing"), { headers: { authorization: credential(endpoint.accessKeyId) } })).status).toBe(404);
  });

  it("takes 8 MiB+ bodies with a Content-Length or chunked, and serves them whole and by range", async () => {
    const body = patterned(9 * 1024 * 1024 + 17);
    expect((await put("large", body)).headers.get("etag")).toBe(md5Etag(body));
    const whole = await fetch(objectUrl("large"));
    expect(whole.headers.get("content-length")).toBe(String(body.byteLength));
    expect(Buffer.from(await whole.arrayBuffer()).equals(body)).toBe(true);

    const chunked = new Blob([body]).stream();
    const streamed = await fetch(objectUrl("large-chunked"), { method: "PUT", body: chunked, duplex: "half" });
    expect(streamed.status).toBe(200);
    const middle = await fetch(objectUrl("large-chunked"), { headers: { range: "bytes=5000000-5999999" } });
    expect(middle.status).toBe(206);
    expect(Buffer.from(await middle.arrayBuffer()).equals(body.subarray(5_000_000, 6_000_000))).toBe(true);
  });
});
