// The XML bodies the embedded S3 endpoint writes: error documents and ListObjectsV2 results, shaped like
// AWS's so any S3 client (and mink's own tag scanner in src/storage/s3-xml.ts) reads them.

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/**
 * Escapes text for an XML element. Control characters become numeric references: XML 1.0 cannot carry most
 * of them at all, and a raw CR would be normalised away by parsers, so this keeps odd keys lossless for
 * readers that decode references (AWS does the same; clients that care ask for `encoding-type=url`).
 */
function escapeXml(text: string): string {
  return text.replace(/[&<>"']|[\u0000-\u001f\u007f]/g, (c) => ESCAPES[c] ?? `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`);
}

function element(name: string, value: string | number | boolean): string {
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** Optional elements are left out rather than written empty. */
function optionalElement(name: string, value: string | undefined): string {
  return value === undefined ? "" : element(name, value);
}

export interface ErrorDetails {
  key?: string;
  bucketName?: string;
  /** Extra elements some errors carry, e.g. `ActualObjectSize` on InvalidRange. */
  extra?: Record<string, string | number>;
}

export function errorXml(code: string, message: string, details: ErrorDetails = {}): string {
  const extra = Object.entries(details.extra ?? {}).map(([name, value]) => element(name, value));
  return (
    `${XML_DECLARATION}<Error>${element("Code", code)}${element("Message", message)}` +
    `${optionalElement("Key", details.key)}${optionalElement("BucketName", details.bucketName)}${extra.join("")}</Error>`
  );
}

interface ListedEntry {
  key: string;
  /** Bare (unquoted) ETag; the XML carries it quoted, as S3 does. */
  etag: string;
  size: number;
  uploaded: Date;
}

export interface ListBucketResult {
  bucket: string;
  prefix: string;
  delimiter?: string;
  startAfter?: string;
  continuationToken?: string;
  nextContinuationToken?: string;
  maxKeys: number;
  isTruncated: boolean;
  /** `url`: keys, prefixes and the delimiter are percent-encoded, as the client asked. */
  encodingType?: "url";
  contents: ListedEntry[];
  commonPrefixes: string[];
}

export function listBucketResultXml(result: ListBucketResult): string {
  const encode = result.encodingType === "url" ? encodeURIComponent : (text: string) => text;
  const contents = result.contents.map(
    (entry) =>
      `<Contents>${element("Key", encode(entry.key))}${element("LastModified", entry.uploaded.toISOString())}` +
      `${element("ETag", `"${entry.etag}"`)}${element("Size", entry.size)}${element("StorageClass", "STANDARD")}</Contents>`,
  );
  const commonPrefixes = result.commonPrefixes.map((prefix) => `<CommonPrefixes>${element("Prefix", encode(prefix))}</CommonPrefixes>`);
  return (
    `${XML_DECLARATION}<ListBucketResult xmlns="${S3_NAMESPACE}">` +
    element("Name", result.bucket) +
    element("Prefix", encode(result.prefix)) +
    optionalElement("Delimiter", result.delimiter === undefined ? undefined : encode(result.delimiter)) +
    optionalElement("StartAfter", result.startAfter === undefined ? undefined : encode(result.startAfter)) +
    optionalElement("ContinuationToken", result.continuationToken) +
    optionalElement("NextContinuationToken", result.nextContinuationToken) +
    element("KeyCount", result.contents.length + result.commonPrefixes.length) +
    element("MaxKeys", result.maxKeys) +
    optionalElement("EncodingType", result.encodingType) +
    element("IsTruncated", result.isTruncated) +
    contents.join("") +
    commonPrefixes.join("") +
    "</ListBucketResult>"
  );
}
