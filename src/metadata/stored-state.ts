// The metadata state as the MetaLog keeps it: stream records in rows (stored-stream-table.ts), pending
// transfers in rows of their own (a drain begins a thousand in a row), a head row (version, next stream
// number, counts), and the rest (nodes, lease, tables: small, bounded by MAX_TABLES and
// MAX_TABLE_DEFINITION_BYTES) as a snapshot document without streams or transfers, rewritten only by the
// entries that change it. Opening reads the head and that document, nothing per stream; each accepted
// entry writes the records it changed and the head. A log kept the old way (a snapshot of everything and
// the entries after it) is read once, the old way, and written into the rows.
import { ChunkedMap, decodeSnapshot, encodeSnapshot, MemoryStreamTable, type MetaState, type OwnedCounts, type PendingTransfer } from "../core/meta/index.ts";
import { StoredStreamTable, type StreamRows } from "./stored-stream-table.ts";

export interface StateHead {
  readonly version: number;
  readonly nextStreamSeq: number;
  /** How many stream records the rows hold. */
  readonly streams: number;
  /** UTF-8 bytes of names, configurations and table definitions (MAX_META_BYTES). */
  readonly metaBytes: number;
  /** Streams placed or opened per node (state.assigned), as entries. */
  readonly assigned: readonly (readonly [string, number])[];
  /** What each node owns, table NC (state.owned), as entries. */
  readonly owned: readonly (readonly [string, OwnedCounts])[];
  /** The version of the snapshot that holds the rest of the state. */
  readonly restVersion: number;
}

/** Where the state is kept; every call is synchronous and runs in the caller's transaction. */
export interface StateTables {
  readonly streamRows: StreamRows;
  readHead(): StateHead | null;
  writeHead(head: StateHead): void;
  readSnapshot(): { readonly version: number; readonly text: string } | null;
  writeSnapshot(version: number, text: string): void;
  readTransfers(): Iterable<readonly [string, PendingTransfer]>;
  /** The pending transfer of a stream, or none (null). */
  writeTransfer(streamId: string, transfer: PendingTransfer | null): void;
}

export class StoredState {
  private constructor(
    private readonly tables: StateTables,
    /** The state as last stored: what the next change is compared with. */
    private last: MetaState,
    private restVersion: number,
  ) {}

  /**
   * The stored state, read from its head, or (no head yet: a new log, or one kept the old way) the state
   * `restore` rebuilds, written into the tables first. `metaBytesOf` counts a restored state's bytes.
   */
  static open(
    tables: StateTables,
    restore: () => MetaState,
    metaBytesOf: (state: MetaState) => number,
  ): { readonly stored: StoredState; readonly state: MetaState; readonly metaBytes: number } {
    const head = tables.readHead();
    if (head !== null) {
      const state = stateFrom(tables, head);
      return { stored: new StoredState(tables, state, head.restVersion), state, metaBytes: head.metaBytes };
    }
    const restored = restore();
    for (const record of restored.streams.values()) tables.streamRows.put(record);
    for (const [streamId, transfer] of restored.transfers.entries()) tables.writeTransfer(streamId, transfer);
    const state: MetaState = { ...restored, streams: new StoredStreamTable(tables.streamRows, restored.streams.size) };
    const metaBytes = metaBytesOf(restored);
    const stored = new StoredState(tables, state, state.version);
    stored.writeRest(state);
    stored.writeHead(state, metaBytes);
    return { stored, state, metaBytes };
  }

  /**
   * Writes what changed since the last stored state (`touchedStreams`: the streams the entry touched, the
   * only ones whose transfer can have changed); the state to go on with (its stream overlay written).
   */
  commit(next: MetaState, metaBytes: number, touchedStreams: readonly string[]): MetaState {
    const { streams } = next;
    if (!(streams instanceof StoredStreamTable) || !streams.isOver(this.tables.streamRows)) {
      throw new Error("a stored metadata state changed into one whose streams are not in its rows");
    }
    const stored: MetaState = { ...next, streams: streams.persist() };
    const last = this.last;
    if (next.transfers !== last.transfers) {
      for (const streamId of touchedStreams) {
        const transfer = next.transfers.get(streamId) ?? null;
        if (transfer !== (last.transfers.get(streamId) ?? null)) this.tables.writeTransfer(streamId, transfer);
      }
    }
    if (next.nodes !== last.nodes || next.lease !== last.lease || next.tables !== last.tables) this.writeRest(stored);
    this.writeHead(stored, metaBytes);
    this.last = stored;
    return stored;
  }

  private writeRest(state: MetaState): void {
    this.tables.writeSnapshot(state.version, encodeSnapshot({ ...state, streams: MemoryStreamTable.empty(), transfers: ChunkedMap.empty() }));
    this.restVersion = state.version;
  }

  private writeHead(state: MetaState, metaBytes: number): void {
    this.tables.writeHead({
      version: state.version,
      nextStreamSeq: state.nextStreamSeq,
      streams: state.streams.size,
      metaBytes,
      assigned: [...state.assigned],
      owned: [...state.owned],
      restVersion: this.restVersion,
    });
  }
}

function stateFrom(tables: StateTables, head: StateHead): MetaState {
  const snapshot = tables.readSnapshot();
  if (snapshot === null || snapshot.version !== head.restVersion) {
    throw new Error(`metadata state: the head names snapshot ${head.restVersion}, the tables hold ${snapshot?.version ?? "none"}`);
  }
  const rest = decodeSnapshot(snapshot.text);
  if (rest.streams.size !== 0 || rest.transfers.size !== 0) throw new Error("metadata state: the snapshot beside the rows holds streams or transfers");
  return {
    ...rest,
    transfers: ChunkedMap.fromEntries(tables.readTransfers()),
    version: head.version,
    nextStreamSeq: head.nextStreamSeq,
    assigned: new Map(head.assigned),
    owned: new Map(head.owned),
    streams: new StoredStreamTable(tables.streamRows, head.streams),
  };
}
