// The node's live-reader slots (docs/limits.md, MAX_LIVE_READERS and MAX_LIVE_READERS_PER_TOKEN): a count
// for the node and one per token id, so one tenant cannot take every slot. The decision is the pure
// core's (src/core/protocol/reader-share.ts, rules RS-1..RS-4); this module only counts. The per-token map
// holds only tokens with a reader now, so it is bounded by MAX_LIVE_READERS.
import type { DomainError } from "../../core/errors.ts";
import { admitReader } from "../../core/protocol/reader-share.ts";
import type { NodeSettings } from "../settings.ts";

export class LiveSlots {
  /** Long-polls waiting and SSE responses open on this node. */
  active = 0;
  private readonly byToken = new Map<string, number>();

  /** Takes a slot for a reader of `tokenId` (null: no token), or returns the 429 to answer at once. */
  take(tokenId: string | null, settings: Pick<NodeSettings, "maxLiveReaders" | "maxLiveReadersPerToken">): DomainError | null {
    const tokenActive = tokenId === null ? 0 : (this.byToken.get(tokenId) ?? 0);
    const refused = admitReader({ active: this.active, tokenActive, tokenId }, settings);
    if (refused !== null) return refused;
    this.active++;
    if (tokenId !== null) this.byToken.set(tokenId, tokenActive + 1);
    return null;
  }

  /** Gives back a slot taken by `take(tokenId)`. */
  release(tokenId: string | null): void {
    this.active = Math.max(0, this.active - 1);
    if (tokenId === null) return;
    const held = (this.byToken.get(tokenId) ?? 0) - 1;
    if (held > 0) this.byToken.set(tokenId, held);
    else this.byToken.delete(tokenId);
  }

  /** Live readers `tokenId` holds on this node. */
  heldBy(tokenId: string): number {
    return this.byToken.get(tokenId) ?? 0;
  }
}
