import { describe, expect, it } from "vitest";
import { unquoteEtag } from "../../src/storage/object-store.ts";
import { decodeXmlText, parseErrorDocument, parseListObjectsV2 } from "../../src/storage/s3-xml.ts";

describe("S3 XML reading", () => {
  it("decodes the five named entities and numeric references", () => {
    expect(decodeXmlText("a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233; &#x1F600;")).toBe(`a & b <c> "d" 'e' é 😀`);
  });

  it("reads a truncated ListObjectsV2 page with escaped keys and quoted ETags", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>
<MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken>
<Contents><Key>p/a&amp;b</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>&quot;e1&quot;</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>p/c</Key><ETag>"e2"</ETag><Size>0</Size></Contents></ListBucketResult>`;
    expect(parseListObjectsV2(xml)).toEqual({
      objects: [
        { key: "p/a&b", size: 3, etag: "e1" },
        { key: "p/c", size: 0, etag: "e2" },
      ],
      isTruncated: true,
      nextContinuationToken: "tok&1",
    });
  });

  it("reads the last page without a token, and an empty result", () => {
    expect(parseListObjectsV2("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>")).toEqual({ objects: [], isTruncated: false });
  });

  it("reads an error document's code and message, and nothing from a non-XML body", () => {
    expect(parseErrorDocument("<Error><Code>NoSuchKey</Code><Message>The key does not exist</Message></Error>")).toEqual({
      code: "NoSuchKey",
      message: "The key does not exist",
    });
    expect(parseErrorDocument("")).toBeUndefined();
  });

  it("ETags cross the port bare", () => {
    expect([unquoteEtag('"abc"'), unquoteEtag('W/"abc"'), unquoteEtag("abc")]).toEqual(["abc", "abc", "abc"]);
  });
});
