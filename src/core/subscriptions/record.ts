// One subscription's state: its configuration, the streams it is linked to (by pattern, explicitly, or
// both) with their acked and last reported tail offsets, the generation counter and the current wake.
// Plain JSON (arrays, strings, numbers, null) so a metadata log record or a Durable Object row can hold it
// unchanged. Links are kept sorted by path, so equal states serialize equally.
import { compareOffsets, ZERO_OFFSET } from "../protocol/offsets.ts";
import type { SubscriptionConfig } from "./config.ts";
import { matchesPattern } from "./paths.ts";

export type LinkType = "glob" | "explicit";

export interface StreamLink {
  readonly path: string;
  readonly glob: boolean;
  readonly explicit: boolean;
  /** Everything before this offset is acknowledged by the subscriber. */
  readonly ackedOffset: string;
  /** The stream's tail as last reported by an append (or known when the link was made). */
  readonly tailOffset: string;
}

export interface WakeSnapshotEntry {
  readonly path: string;
  readonly tailOffset: string;
}

export interface Wake {
  readonly wakeId: string;
  readonly generation: number;
  /** The tails when the wake was created: a webhook's `{"done": true}` acks exactly these. */
  readonly snapshot: readonly WakeSnapshotEntry[];
  /** The bearer token for callback/ack/release; null for a pull-wake wake nobody has claimed. */
  readonly token: string | null;
  /** The pull-wake worker holding the lease; null for webhooks and unclaimed wakes. */
  readonly holder: string | null;
  /** When the lease lapses and the wake is fenced; null while a pull-wake wake waits for a claim. */
  readonly leaseExpiresAtMs: number | null;
}

export interface SubscriptionRecord {
  readonly id: string;
  readonly config: SubscriptionConfig;
  readonly createdAtMs: number;
  readonly links: readonly StreamLink[];
  /** The generation of the newest wake ever created (0: none yet). Only grows. */
  readonly generation: number;
  readonly wake: Wake | null;
}

/** A stream the shell knows about, with its current tail. */
export interface StreamTail {
  readonly path: string;
  readonly tailOffset: string;
}

function maxOffset(a: string, b: string): string {
  return compareOffsets(a, b) >= 0 ? a : b;
}

function sortLinks(links: StreamLink[]): StreamLink[] {
  return links.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function tailOf(path: string, known: readonly StreamTail[]): string {
  return known.find((s) => s.path === path)?.tailOffset ?? ZERO_OFFSET;
}

/**
 * Link `paths` as `type`. A new link starts acked at `ackedFrom` (the stream's current tail when the
 * subscriber asked for it: no backlog; ZERO_OFFSET for a stream that first matches by an append: all of
 * it). An existing link only gains the type.
 */
function link(
  links: readonly StreamLink[],
  paths: readonly string[],
  type: LinkType,
  known: readonly StreamTail[],
  ackedFrom: "tail" | "zero",
): StreamLink[] {
  const out = [...links];
  for (const path of paths) {
    const index = out.findIndex((l) => l.path === path);
    const existing = out[index];
    if (existing !== undefined) {
      const glob = existing.glob || type === "glob";
      out[index] = { ...existing, glob, explicit: existing.explicit || type === "explicit" };
      continue;
    }
    const tailOffset = tailOf(path, known);
    out.push({
      path,
      glob: type === "glob",
      explicit: type === "explicit",
      ackedOffset: ackedFrom === "tail" ? tailOffset : ZERO_OFFSET,
      tailOffset,
    });
  }
  return sortLinks(out);
}

/** A new subscription, linked to its explicit streams and to the known streams its pattern matches. */
export function newSubscription(
  id: string,
  config: SubscriptionConfig,
  createdAtMs: number,
  knownStreams: readonly StreamTail[],
): SubscriptionRecord {
  const pattern = config.pattern;
  const globbed =
    pattern === null
      ? []
      : knownStreams.map((s) => s.path).filter((p) => p !== config.wakeStream && matchesPattern(pattern, p));
  const explicit = link([], config.streams, "explicit", knownStreams, "tail");
  const links = link(explicit, globbed, "glob", knownStreams, "tail");
  return { id, config, createdAtMs, links, generation: 0, wake: null };
}

/** SUB-6: `POST .../streams`. Streams already linked keep their acked offset. */
export function addExplicitStreams(
  record: SubscriptionRecord,
  paths: readonly string[],
  knownStreams: readonly StreamTail[],
): SubscriptionRecord {
  return { ...record, links: link(record.links, paths, "explicit", knownStreams, "tail") };
}

/** SUB-6: `DELETE .../streams/<path>`. A link that the pattern also made stays, as a glob link. */
export function removeExplicitStream(record: SubscriptionRecord, path: string): SubscriptionRecord {
  const existing = record.links.find((l) => l.path === path);
  if (existing === undefined || !existing.explicit) return record;
  const links = existing.glob
    ? record.links.map((l) => (l.path === path ? { ...l, explicit: false } : l))
    : record.links.filter((l) => l.path !== path);
  return { ...record, links };
}

/** The stream was deleted: drop its link (a stream re-created under the name links again on append). */
export function forgetStream(record: SubscriptionRecord, path: string): SubscriptionRecord {
  if (!record.links.some((l) => l.path === path)) return record;
  return { ...record, links: record.links.filter((l) => l.path !== path) };
}

/**
 * Record an append's new tail, linking the stream first when the pattern matches it. Null when the
 * subscription does not follow the stream. The wake stream never links: its wake events would wake the
 * subscription again, forever. A subscription holding `maxLinks` links (MAX_SUBSCRIPTION_STREAMS) links
 * no new stream by its pattern: an append cannot be refused, so the stream is not followed until a link
 * frees (docs/limits.md).
 */
export function recordTail(
  record: SubscriptionRecord,
  tail: StreamTail,
  maxLinks: number = Number.POSITIVE_INFINITY,
): SubscriptionRecord | null {
  if (tail.path === record.config.wakeStream) return null;
  const pattern = record.config.pattern;
  let links = record.links;
  const linked = links.some((l) => l.path === tail.path);
  if (pattern !== null && matchesPattern(pattern, tail.path) && (linked || links.length < maxLinks)) {
    links = link(links, [tail.path], "glob", [], "zero");
  }
  if (!links.some((l) => l.path === tail.path)) return null;
  links = links.map((l) => (l.path === tail.path ? { ...l, tailOffset: maxOffset(l.tailOffset, tail.tailOffset) } : l));
  return { ...record, links };
}

export function linkHasPending(link: StreamLink): boolean {
  return compareOffsets(link.tailOffset, link.ackedOffset) > 0;
}

export function hasPendingWork(record: SubscriptionRecord): boolean {
  return record.links.some(linkHasPending);
}

/** Raise acked offsets (never lower them); offsets are checked by the caller. */
export function applyAckOffsets(record: SubscriptionRecord, acks: readonly WakeSnapshotEntry[]): SubscriptionRecord {
  const links = record.links.map((l) => {
    let ackedOffset = l.ackedOffset;
    for (const ack of acks) if (ack.path === l.path) ackedOffset = maxOffset(ackedOffset, ack.tailOffset);
    return ackedOffset === l.ackedOffset ? l : { ...l, ackedOffset };
  });
  return { ...record, links };
}
