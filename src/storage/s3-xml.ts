// Just enough XML reading for the two S3 response bodies the adapter needs: ListObjectsV2 results and error
// documents. Workers have no DOMParser, and these documents are flat and machine-generated, so a tag scanner
// is enough. Nothing here leaks past the adapter.

import { unquoteEtag } from "./object-store.ts";

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_match, entity: string) => {
    if (entity.startsWith("#x")) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    return ENTITIES[entity] ?? "";
  });
}

/** The decoded text of every `<tag>…</tag>` directly found in `xml`, in document order. */
function tagValues(xml: string, tag: string): string[] {
  const pattern = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>|<${tag}(?:\\s[^>]*)?/>`, "g");
  return [...xml.matchAll(pattern)].map((m) => m[1] ?? "");
}

function firstTagValue(xml: string, tag: string): string | undefined {
  const raw = tagValues(xml, tag)[0];
  return raw === undefined ? undefined : decodeXmlText(raw);
}

interface ListedObject {
  key: string;
  size: number;
  etag: string;
}

export interface ListPage {
  objects: ListedObject[];
  isTruncated: boolean;
  nextContinuationToken?: string;
}

export function parseListObjectsV2(xml: string): ListPage {
  const objects = tagValues(xml, "Contents").map((contents) => ({
    key: firstTagValue(contents, "Key") ?? "",
    size: Number(firstTagValue(contents, "Size") ?? "0"),
    etag: unquoteEtag(firstTagValue(contents, "ETag") ?? ""),
  }));
  const isTruncated = firstTagValue(xml, "IsTruncated") === "true";
  const token = firstTagValue(xml, "NextContinuationToken");
  return token !== undefined && isTruncated ? { objects, isTruncated, nextContinuationToken: token } : { objects, isTruncated };
}

export interface S3ErrorDocument {
  code: string;
  message: string;
}

export function parseErrorDocument(xml: string): S3ErrorDocument | undefined {
  const code = firstTagValue(xml, "Code");
  return code === undefined ? undefined : { code, message: firstTagValue(xml, "Message") ?? "" };
}
