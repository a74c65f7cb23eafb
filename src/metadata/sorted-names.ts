// Every stream name in code-unit order, for the listing (GET /admin/streams, table LS in
// src/core/meta/stream-listing.ts): built at the first listing, then kept up to date by each accepted change
// (names are created and deleted, never renamed), so a page costs two binary searches.
import { insertName, listStreams, removeName, sortedStreamNames, type MetaState, type StreamListing, type StreamListQuery } from "../core/meta/index.ts";

export class SortedNames {
  /** `of` is the name map `sorted` describes. */
  private names: { of: MetaState["streamIdsByName"]; sorted: string[] } | null = null;

  /** One page of the streams of `state` by name. */
  list(state: MetaState, query: StreamListQuery): StreamListing {
    if (this.names === null || this.names.of !== state.streamIdsByName) {
      // The first listing (or a state the kept names do not describe): sort every name, O(n log n).
      this.names = { of: state.streamIdsByName, sorted: sortedStreamNames(state) };
    }
    return listStreams(state, this.names.sorted, query);
  }

  /** The sorted names follow an accepted change: the names of the streams it created or deleted. */
  follow(before: MetaState, after: MetaState, streamIds: readonly string[]): void {
    const names = this.names;
    if (names === null || names.of !== before.streamIdsByName) return;
    if (after.streamIdsByName === before.streamIdsByName) return;
    const added: string[] = [];
    for (const id of streamIds) {
      const was = before.streams.get(id)?.name;
      const is = after.streams.get(id)?.name;
      if (was === is) continue;
      if (was !== undefined) removeName(names.sorted, was);
      if (is !== undefined) added.push(is);
    }
    for (const name of added) insertName(names.sorted, name);
    // A change whose touched set missed a name would leave the count wrong: sort again at the next listing.
    this.names = names.sorted.length === after.streamIdsByName.size ? { of: after.streamIdsByName, sorted: names.sorted } : null;
  }
}
