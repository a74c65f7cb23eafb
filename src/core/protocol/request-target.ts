// What a request acts on: the one parse of a request's path (docs/access.md, "One parse"). The Worker
// parses each request once, at its entry, into a RequestTarget; the access decision, the router, the table
// API, the subscription API and the node all act on that value (or on its canonical spelling, formatTarget,
// which parses back to the same value), never on the client's spelling of the URL. Two parsers that
// disagree, and a permissive one that acts, is how a percent-encoded segment once crossed tenants.
//
// | #   | the path (after an optional `/n/<node>`)                                  | target                      |
// |-----|---------------------------------------------------------------------------|-----------------------------|
// | RT1 | a segment with malformed percent-encoding, or one that decodes to `.`/`..`, a control character | 400 invalid |
// | RT2 | a word or number of the API (`v1`, `stream`, `table`, `__ds`, `write`, a bucket number, ...) spelled with `%` | 400 invalid (ambiguous) |
// | RT3 | `/v1/stream/<name>`: the name is the rest, each segment decoded once       | stream                      |
// | RT4 | `/v1/stream/__ds/jwks.json`                                               | jwks                        |
// | RT5 | `/v1/stream/__ds/subscriptions/<id>[/streams[/<path>]|/callback|/ack|/claim|/release]` | subscription       |
// | RT6 | anything else under `/v1/stream/__ds/`                                     | reserved (404)              |
// | RT7 | `/v1/table`, `/v1/table/<name>[/write|lookup|prefix|partitions]`           | table (router only)         |
// | RT8 | `/v1/table/<name>[/p/<partition value>]/bucket/<i>/<write|lookup|prefix|changelog>` | bucket            |
// | RT9 | `/health`, `/metrics`, `/admin[/...]` (router only)                        | health, operator            |
// | RT10| anything else                                                             | unknown (404)               |
//
// Names are decoded exactly once: `%2561` is the three characters `%61`, never `a`. A stream name's `/` may
// be spelled `%2F`; the canonical spelling uses `/`. A stream name whose first segment decodes to `__ds` is
// the control namespace only when written plainly (RT2), so no spelling of a stream name reaches it.
import { RESERVED_SEGMENT } from "./headers.ts";
import { fail, ok, parseCanonicalUint, type Parsed } from "./parsed.ts";

type SubscriptionAction = "config" | "streams" | "stream" | "callback" | "ack" | "claim" | "release";
type TableAction = "definition" | "write" | "lookup" | "prefix" | "partitions";
type BucketOp = "write" | "lookup" | "prefix" | "changelog";

/** The node address a request came through (`/n/<node>`), or null for the router's own paths. */
interface AtNode {
  readonly node: string | null;
}

export type RequestTarget =
  | { readonly kind: "stream"; readonly node: string | null; readonly name: string }
  | { readonly kind: "jwks"; readonly node: string | null }
  | { readonly kind: "subscription"; readonly node: string | null; readonly id: string; readonly action: SubscriptionAction; readonly stream: string | null }
  | { readonly kind: "reserved"; readonly node: string | null; readonly rest: readonly string[] }
  | { readonly kind: "table_list"; readonly node: string | null }
  | { readonly kind: "table"; readonly node: string | null; readonly table: string; readonly action: TableAction }
  | { readonly kind: "bucket"; readonly node: string | null; readonly table: string; readonly partition: string | null; readonly bucket: number; readonly op: BucketOp }
  | { readonly kind: "health" }
  | { readonly kind: "operator"; readonly segments: readonly string[] }
  | { readonly kind: "unknown"; readonly segments: readonly string[] };

const SUBSCRIPTION_TAILS: ReadonlySet<string> = new Set(["callback", "ack", "claim", "release"]);
const TABLE_ACTIONS: ReadonlySet<string> = new Set(["write", "lookup", "prefix", "partitions"]);
const BUCKET_OPS: ReadonlySet<string> = new Set(["write", "lookup", "prefix", "changelog"]);

/** One path segment as sent and as meant. */
interface Segment {
  readonly raw: string;
  readonly text: string;
}

/** RT1..RT10 over the path as received (still percent-encoded, no query). */
export function parseRequestTarget(rawPath: string): Parsed<RequestTarget> {
  if (!rawPath.startsWith("/")) return fail("invalid", "the request path must start with '/'");
  const segments: Segment[] = [];
  for (const raw of rawPath.slice(1).split("/")) {
    const text = decodeOnce(raw);
    if (text === null) return fail("invalid", "the request path has malformed percent-encoding");
    if (text === "." || text === "..") return fail("invalid", "the request path must not have '.' or '..' segments");
    if (/[\u0000-\u001f\u007f]/.test(text)) return fail("invalid", "the request path must not contain control characters");
    segments.push({ raw, text });
  }
  return parseSegments(segments);
}

function parseSegments(all: readonly Segment[]): Parsed<RequestTarget> {
  const [first, second] = all;
  if (first === undefined) return ok({ kind: "unknown", segments: [] });
  const word = literal(first);
  if (!word.ok) return word;
  if (word.value === "n" && second !== undefined && all.length > 2) {
    if (second.text === "") return ok(unknown(all));
    return protocolTarget({ node: second.text }, all.slice(2), all);
  }
  if (all.length === 1 && word.value === "health") return ok({ kind: "health" });
  if (word.value === "metrics" || word.value === "admin") return ok({ kind: "operator", segments: all.map((s) => s.text) });
  return protocolTarget({ node: null }, all, all);
}

/** `/v1/stream/...` and `/v1/table...`, at the router or after a node's address. */
function protocolTarget(at: AtNode, rest: readonly Segment[], all: readonly Segment[]): Parsed<RequestTarget> {
  const [version, family] = rest;
  if (version === undefined || family === undefined) return ok(unknown(all));
  const words = literals(version, family);
  if (!words.ok) return words;
  if (words.value[0] !== "v1") return ok(unknown(all));
  if (words.value[1] === "stream") return streamTarget(at, rest.slice(2), all);
  if (words.value[1] === "table") return tableTarget(at, rest.slice(2), all);
  return ok(unknown(all));
}

function streamTarget(at: AtNode, name: readonly Segment[], all: readonly Segment[]): Parsed<RequestTarget> {
  const head = name[0];
  if (head === undefined) return ok(unknown(all));
  const firstNameSegment = head.text.split("/")[0];
  if (firstNameSegment === RESERVED_SEGMENT) {
    if (head.raw !== RESERVED_SEGMENT) return ambiguous(RESERVED_SEGMENT);
    return reservedTarget(at, name.slice(1));
  }
  return ok({ kind: "stream", node: at.node, name: name.map((s) => s.text).join("/") });
}

function reservedTarget(at: AtNode, rest: readonly Segment[]): Parsed<RequestTarget> {
  const [head, id, action, ...more] = rest;
  const other = (): Parsed<RequestTarget> => ok({ kind: "reserved", node: at.node, rest: rest.map((s) => s.text) });
  if (head === undefined) return other();
  const word = literal(head);
  if (!word.ok) return word;
  if (word.value === "jwks.json" && rest.length === 1) return ok({ kind: "jwks", node: at.node });
  if (word.value !== "subscriptions" || id === undefined || id.text === "") return other();
  const subscription = (which: SubscriptionAction, stream: string | null = null): Parsed<RequestTarget> =>
    ok({ kind: "subscription", node: at.node, id: id.text, action: which, stream });
  if (action === undefined) return subscription("config");
  const verb = literal(action);
  if (!verb.ok) return verb;
  if (verb.value === "streams") return more.length === 0 ? subscription("streams") : subscription("stream", more.map((s) => s.text).join("/"));
  if (SUBSCRIPTION_TAILS.has(verb.value) && more.length === 0) return subscription(verb.value as SubscriptionAction);
  return other();
}

function tableTarget(at: AtNode, rest: readonly Segment[], all: readonly Segment[]): Parsed<RequestTarget> {
  const [name, ...tail] = rest;
  if (name === undefined) return ok({ kind: "table_list", node: at.node });
  if (name.text === "") return ok(rest.length === 1 ? { kind: "table_list", node: at.node } : unknown(all));
  const table = name.text;
  if (tail.length === 0) return ok({ kind: "table", node: at.node, table, action: "definition" });
  const words = literals(...tail.filter((_, i) => !isPartitionKeyAt(tail, i)));
  if (!words.ok) return words;
  if (tail.length === 1 && TABLE_ACTIONS.has(tail[0]!.text)) return ok({ kind: "table", node: at.node, table, action: tail[0]!.text as TableAction });
  const partitioned = tail[0]!.text === "p";
  const [partition, bucketWord, bucketText, op, ...more] = partitioned ? [tail[1], ...tail.slice(2)] : [undefined, ...tail];
  if (more.length > 0 || bucketWord?.text !== "bucket" || bucketText === undefined || op === undefined || !BUCKET_OPS.has(op.text)) return ok(unknown(all));
  if (partitioned && (partition === undefined || partition.text === "")) return ok(unknown(all));
  const bucket = parseCanonicalUint(bucketText.text);
  if (bucket === null) return ok(unknown(all));
  return ok({ kind: "bucket", node: at.node, table, partition: partition?.text ?? null, bucket, op: op.text as BucketOp });
}

/**
 * The partition of `.../p/<value>/bucket/...` is a name, not a word of the API: the partition column's value
 * as text, decoded here once; the table layer reads it by the definition (partition-segment.ts).
 */
function isPartitionKeyAt(tail: readonly Segment[], index: number): boolean {
  return index === 1 && tail[0]?.text === "p";
}

function unknown(all: readonly Segment[]): RequestTarget {
  return { kind: "unknown", segments: all.map((s) => s.text) };
}

/** RT2: a word of the API must be written as itself. */
function literal(segment: Segment): Parsed<string> {
  return segment.raw === segment.text ? ok(segment.text) : ambiguous(segment.text);
}

function literals(...segments: Segment[]): Parsed<string[]> {
  const words: string[] = [];
  for (const segment of segments) {
    const word = literal(segment);
    if (!word.ok) return word;
    words.push(word.value);
  }
  return ok(words);
}

function ambiguous<T>(word: string): Parsed<T> {
  return fail("invalid", `the path segment '${word}' must be written without percent-encoding`, { reason: "ambiguous_path" });
}

function decodeOnce(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** One name segment, spelled canonically (every character outside the unreserved set percent-encoded). */
function encodeSegment(text: string): string {
  return encodeURIComponent(text);
}

function encodeName(name: string): string {
  return name.split("/").map(encodeSegment).join("/");
}

/** The canonical path of a target: parseRequestTarget(formatTarget(t)) is t again. */
export function formatTarget(target: RequestTarget): string {
  switch (target.kind) {
    case "health":
      return "/health";
    case "operator":
    case "unknown":
      return `/${target.segments.map(encodeSegment).join("/")}`;
    case "stream":
    case "jwks":
    case "subscription":
    case "reserved":
    case "table_list":
    case "table":
    case "bucket":
      return `${nodePrefix(target.node)}${protocolPath(target)}`;
  }
}

function nodePrefix(node: string | null): string {
  return node === null ? "" : `/n/${encodeSegment(node)}`;
}

type ProtocolTarget = Exclude<RequestTarget, { kind: "health" | "operator" | "unknown" }>;

function protocolPath(target: ProtocolTarget): string {
  const reserved = `/v1/stream/${RESERVED_SEGMENT}`;
  switch (target.kind) {
    case "stream":
      return `/v1/stream/${encodeName(target.name)}`;
    case "jwks":
      return `${reserved}/jwks.json`;
    case "reserved":
      return [reserved, ...target.rest.map(encodeSegment)].join("/");
    case "subscription":
      return `${reserved}/subscriptions/${encodeSegment(target.id)}${subscriptionTail(target.action, target.stream)}`;
    case "table_list":
      return "/v1/table";
    case "table":
      return `/v1/table/${encodeSegment(target.table)}${target.action === "definition" ? "" : `/${target.action}`}`;
    case "bucket": {
      const partition = target.partition === null ? "" : `/p/${encodeSegment(target.partition)}`;
      return `/v1/table/${encodeSegment(target.table)}${partition}/bucket/${target.bucket}/${target.op}`;
    }
  }
}

function subscriptionTail(action: SubscriptionAction, stream: string | null): string {
  if (action === "config") return "";
  if (action === "stream") return `/streams/${encodeName(stream ?? "")}`;
  return `/${action}`;
}
